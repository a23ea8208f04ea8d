from django.core.management.base import BaseCommand, CommandError

from trajectories.models import Project
from trajectories.validation import InvalidData

from ...proposers import DEFAULT_PROPOSER, PROPOSERS
from ...services.proposals import do_start_proposals, run_job_here


class Command(BaseCommand):
    help = (
        "Ask a proposer for proposed labels on a project's trajectories (all of them, or the "
        "ones given with --trajectory or --status). Queues a job for the workers, or runs it "
        "here with --now. Trajectories already proposed by the same prompt are skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, type=int, help="Project id.")
        parser.add_argument("--proposer", default=DEFAULT_PROPOSER, choices=sorted(PROPOSERS))
        parser.add_argument("--trajectory", action="append", help="A trajectory id (repeatable).")
        parser.add_argument("--status", help="Only trajectories with this status.")
        parser.add_argument("--now", action="store_true", help="Run here instead of a worker.")

    def handle(self, *args, **options):
        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise CommandError(f"no project with id {options['project']}")
        filters = {"trajectories": options["trajectory"], "status": options["status"]}
        try:
            job = do_start_proposals(project, None, filters, options["proposer"])
        except InvalidData as exc:
            raise CommandError(str(exc)) from None
        if options["now"]:
            run_job_here(job.pk)
            job.refresh_from_db()
            counts = ", ".join(f"{v} {k}" for k, v in sorted(job.counts.items()))
            self.stdout.write(f"job {job.pk} {job.status}: {counts or job.message}")
        else:
            self.stdout.write(f"job {job.pk} queued for {job.total} trajectories")
