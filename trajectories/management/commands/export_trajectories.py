import shutil
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from trajectories.formats import EXPORTERS, export_trajectories
from trajectories.jobs import zip_folder
from trajectories.models import Project, Trajectory
from trajectories.validation import InvalidData


class Command(BaseCommand):
    help = "Export a project's trajectories into a new folder (or a .zip)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, type=int, help="Project id.")
        parser.add_argument("--format", default="waypoint", choices=sorted(EXPORTERS))
        parser.add_argument("--out", required=True, help="A new folder, or a path ending .zip.")
        parser.add_argument("--status", help="Only trajectories with this status.")

    def handle(self, *args, **options):
        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise CommandError(f"no project with id {options['project']}")
        trajectories = Trajectory.objects.filter(project=project).originals()
        if options["status"]:
            trajectories = trajectories.filter(status=options["status"])
        out = Path(options["out"])
        try:
            if out.suffix == ".zip":
                if out.exists():
                    raise InvalidData(f"{out}: already exists; choose a new file")
                folder = out.with_suffix("")
                counts = export_trajectories(trajectories, folder, options["format"])
                partial = out.with_name(f".{out.name}.partial")
                zip_folder(folder, partial)
                partial.replace(out)
                shutil.rmtree(folder)
            else:
                counts = export_trajectories(trajectories, out, options["format"])
        except InvalidData as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"exported {counts['trajectories']} trajectories ({counts['steps']} steps) to {out}"
        )
