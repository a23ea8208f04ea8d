"""``manage.py explore --project ID --app PACKAGE --device SERIAL --budget 200|30min
[--strategy dfs|bfs|llm] [--seed N] [--allow TEXT,...] [--no-wait]``: explore an app on a device
(a Celery worker walks it) and, unless ``--no-wait``, follow it until it ends."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from explore.models import Exploration
from explore.services import do_start_exploration
from trajectories.management.acting import acting_user
from trajectories.models import Project
from trajectories.validation import InvalidData

POLL_S = 1.0


class Command(BaseCommand):
    help = "Explore an app on a device: map its states and transitions into its app graph."

    def add_arguments(self, parser):
        parser.add_argument("--project", type=int, required=True, help="the project's id")
        parser.add_argument("--user", help="who explores (default: the project's creator)")
        parser.add_argument("--app", required=True, help="the app's package")
        parser.add_argument("--device", required=True, help="the device's serial")
        parser.add_argument("--budget", required=True, help="steps (200) or minutes (30min)")
        parser.add_argument("--strategy", default="dfs", help="dfs (default), bfs or llm")
        parser.add_argument("--seed", default="0", help="the virtual device's seed (default 0)")
        parser.add_argument("--allow", default="", help="deny-list entries to allow, by commas")
        parser.add_argument("--no-wait", action="store_true", help="queue it and return")

    def handle(self, *args, **options):
        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']}")
        user = acting_user(project, options["user"], "explores")
        try:
            exploration = do_start_exploration(
                project,
                user,
                app=options["app"],
                serial=options["device"],
                budget=options["budget"],
                strategy=options["strategy"],
                seed=options["seed"],
                allow=options["allow"],
            )
        except InvalidData as exc:
            raise CommandError(str(exc)) from exc
        self.stderr.write(f"Exploration {exploration.pk} of {exploration.app} queued.")
        if options["no_wait"]:
            return
        shown = None
        while True:
            exploration = Exploration.objects.get(pk=exploration.pk)
            line = (
                f"{exploration.status}: {exploration.steps} steps, {exploration.states} states, "
                f"{exploration.transitions} transitions, frontier {exploration.frontier_size}"
            )
            if line != shown:
                self.stderr.write(line)
                shown = line
            if not exploration.is_active:
                break
            time.sleep(POLL_S)
        if exploration.status == "failed":
            raise CommandError(f"exploration {exploration.pk} failed: {exploration.message}")
        graph = exploration.graph
        self.stdout.write(
            f"Exploration {exploration.pk}: {exploration.message}; "
            + (f"app graph v{graph.version} of {graph.app}" if graph else "no graph")
        )
