"""``manage.py generate_environments --count N --seed S [--generator procedural|llm]
[--domains shopping,travel] --project ID [--devices N] [--user NAME] [--timeout S]``:
generate N verified environments (issue 37), each built by a Celery task of its own
(``environments.pipeline``): generated, inspected, solved on a device of the project's pool by
the generic solver, checked to need memory, installed. ``--devices N`` starts N virtual devices
here for the run (the Celery workers reach them through the adb server). Prints the generator's
report: verified and failed (by stage, with reasons), the diversity figures, the solver paths,
and the verified environments per hour.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agents.management.local_runs import VirtualPool
from environments.models import Generation
from environments.report import generation_report, report_lines
from environments.services import do_start_generation
from trajectories.jobs import with_true_status
from trajectories.management.acting import acting_user
from trajectories.models import Job, Project
from trajectories.validation import InvalidData

POLL_S = 2.0


class Command(BaseCommand):
    help = "Generate N verified environments (virtual apps with memory tasks) from a seed."

    def add_arguments(self, parser):
        parser.add_argument("--count", type=int, required=True, help="verified environments")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--generator", default="procedural", help="procedural or llm")
        parser.add_argument("--domains", default="", help="comma-separated (default: all)")
        parser.add_argument("--project", type=int, required=True, help="whose devices verify")
        parser.add_argument("--user", help="who starts it (default: the project's creator)")
        parser.add_argument(
            "--devices", type=int, default=0, help="start N virtual devices for the run"
        )
        parser.add_argument(
            "--no-reasoning", action="store_true", help="no model reasoning for the steps"
        )
        parser.add_argument("--no-critic", action="store_true", help="no step critic")
        parser.add_argument("--timeout", type=float, default=0, help="give up after N s (0: never)")

    def handle(self, *args, **options):
        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']}")
        user = acting_user(project, options["user"])
        began = time.monotonic()
        if options["devices"]:
            with VirtualPool(options["devices"], settings.WAYPOINT_VIRTUAL_SIZE, project) as pool:
                generation = self.generate(project, user, pool, options)
        else:
            generation = self.generate(project, user, None, options)
        for line in report_lines(generation_report(generation)):
            self.stdout.write(line)
        self.stdout.write(f"command time {time.monotonic() - began:.1f} s")

    def generate(self, project, user, devices, options) -> Generation:
        try:
            generation = do_start_generation(
                project,
                user,
                count=options["count"],
                seed=options["seed"],
                generator=options["generator"],
                domains=options["domains"],
                devices=devices,
                reasoning=not options["no_reasoning"],
                critic=not options["no_critic"],
            )
        except InvalidData as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"generation {generation.pk}: job {generation.job_id}")
        self.wait(generation, options["timeout"])
        generation.refresh_from_db()
        return generation

    def wait(self, generation: Generation, timeout: float) -> None:
        deadline = time.monotonic() + timeout if timeout else None
        shown = None
        while True:
            job = with_true_status(Job.objects.get(pk=generation.job_id))
            if (job.done, job.total) != shown:
                shown = (job.done, job.total)
                self.stdout.write(f"  {job.done} / {job.total} verified")
            if job.is_finished:
                if job.status != "succeeded":
                    raise CommandError(f"the generation's job failed: {job.message}")
                return
            if deadline and time.monotonic() > deadline:
                raise CommandError(
                    f"generation {generation.pk} is not finished after {timeout:g} s "
                    f"({job.done} / {job.total}); is a Celery worker running?"
                )
            time.sleep(POLL_S)
