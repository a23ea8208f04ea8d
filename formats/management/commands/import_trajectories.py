from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from formats.catalogue import IMPORTERS, ImportStopped, import_trajectories
from formats.detect import AUTO
from trajectories.models import Project
from trajectories.validation import InvalidData


class Command(BaseCommand):
    help = "Import trajectories from a folder, .zip or .tar (waypoint native or DroidBot output)."

    def add_arguments(self, parser):
        parser.add_argument("source", help="A folder, .zip or .tar archive.")
        parser.add_argument("--project", required=True, type=int, help="Project id.")
        parser.add_argument(
            "--format",
            default=AUTO,
            choices=[AUTO, *sorted(IMPORTERS)],
            help="The archive's format; 'auto' (the default) tells it from the content.",
        )
        parser.add_argument(
            "--as-copies",
            action="store_true",
            help="Give every trajectory a new id and record where it came from (to import an "
            "export of another project on this instance).",
        )
        parser.add_argument("--user", help="Username recorded as the importer.")

    def handle(self, *args, **options):
        verbosity = options["verbosity"]
        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise CommandError(f"no project with id {options['project']}")
        actor = None
        if options["user"]:
            actor = get_user_model().objects.filter(username=options["user"]).first()
            if actor is None:
                raise CommandError(f"no user named {options['user']!r}")

        def progress(done: int, total: int) -> None:
            if verbosity > 1:
                self.stderr.write(f"\r{done}/{total}", ending="")

        try:
            counts = import_trajectories(
                project,
                Path(options["source"]),
                options["format"],
                actor=actor,
                progress=progress,
                as_copies=options["as_copies"],
            )
        except ImportStopped as exc:
            raise CommandError(str(exc)) from None
        except InvalidData as exc:
            raise CommandError(f"import failed, nothing was imported: {exc}") from None
        self.stdout.write(
            f"imported {counts['created']} trajectories ({counts['steps']} steps); "
            f"{counts['existing']} were already present"
        )
