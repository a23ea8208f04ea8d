import json
import shutil
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from formats.catalogue import EXPORTERS, check_export_request, export_trajectories
from formats.jobs import zip_folder
from trajectories.models import Project
from trajectories.selectors import check_trajectory_filters, trajectory_list
from trajectories.validation import InvalidData


def _option(text: str) -> tuple[str, object]:
    """``name=value``; the value is read as JSON when it can be (5, 3.0, true), else text."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise CommandError(f"--option {text!r}: expected name=value, e.g. k=5")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def _ratios(text: str) -> dict[str, float]:
    ratios = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        try:
            ratios[name.strip()] = float(value)
        except ValueError:
            raise CommandError(
                f"--split-ratios: {part!r} is not name=ratio, e.g. train=0.9"
            ) from None
        if not sep:
            raise CommandError(f"--split-ratios: {part!r} is not name=ratio, e.g. train=0.9")
    return ratios


class Command(BaseCommand):
    help = "Export a project's trajectories into a new folder (or a .zip), in any format."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, type=int, help="Project id.")
        parser.add_argument("--format", default="waypoint", choices=sorted(EXPORTERS))
        parser.add_argument("--out", required=True, help="A new folder, or a path ending .zip.")
        filters = parser.add_argument_group("filter")
        filters.add_argument("--status", help="Only trajectories with this status.")
        filters.add_argument("--outcome", help="Only trajectories with this outcome.")
        filters.add_argument("--source", help="Only trajectories from this source.")
        filters.add_argument("--task", action="append", help="A task uid (repeatable).")
        filters.add_argument("--app", action="append", help="A package name (repeatable).")
        filters.add_argument("--recorded-from", help="Recorded on or after (YYYY-MM-DD).")
        filters.add_argument("--recorded-to", help="Recorded on or before (YYYY-MM-DD).")
        filters.add_argument("--annotator", help="Recorded or labelled by this user.")
        filters.add_argument("--trajectory", action="append", help="A trajectory id (repeatable).")
        dataset = parser.add_argument_group("dataset formats")
        dataset.add_argument(
            "--option",
            action="append",
            type=_option,
            default=[],
            help="A format option as name=value (repeatable), e.g. k=5, memory_ratio=3, "
            "thought=false, max_side=1024, parquet=true.",
        )
        dataset.add_argument("--split-by", choices=["trajectory", "task", "app"])
        dataset.add_argument("--split-ratios", type=_ratios, help="e.g. train=0.9,test=0.1")
        dataset.add_argument("--split-seed", type=int, default=0)

    def handle(self, *args, **options):
        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise CommandError(f"no project with id {options['project']}")
        fmt = options["format"]
        out = Path(options["out"])
        try:
            filters = check_trajectory_filters(
                {
                    "status": options["status"],
                    "outcome": options["outcome"],
                    "source": options["source"],
                    "tasks": options["task"],
                    "apps": options["app"],
                    "recorded_from": options["recorded_from"],
                    "recorded_to": options["recorded_to"],
                    "annotator": options["annotator"],
                    "trajectories": options["trajectory"],
                }
            )
            split = None
            if options["split_by"] or options["split_ratios"]:
                split = {
                    "by": options["split_by"] or "trajectory",
                    "ratios": options["split_ratios"] or {"train": 0.9, "test": 0.1},
                    "seed": options["split_seed"],
                }
            format_options, split = check_export_request(fmt, dict(options["option"]), split)
            trajectories = trajectory_list(None, project, filters)
            kwargs = {}
            if fmt != "waypoint":
                kwargs = {"options": format_options, "filters": filters, "split": split}
            if out.suffix == ".zip":
                if out.exists():
                    raise InvalidData(f"{out}: already exists; choose a new file")
                folder = out.with_suffix("")
                counts = export_trajectories(trajectories, folder, fmt, **kwargs)
                partial = out.with_name(f".{out.name}.partial")
                zip_folder(folder, partial)
                partial.replace(out)
                shutil.rmtree(folder)
            else:
                counts = export_trajectories(trajectories, out, fmt, **kwargs)
        except InvalidData as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"exported {counts['trajectories']} trajectories ({counts['steps']} steps) to {out}"
        )
