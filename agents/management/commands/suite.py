"""``manage.py suite``: make, list, export and import a project's benchmark suites.

manage.py suite make NAME VERSION --project 1 --tasks a,b --seeds 1..3
manage.py suite export NAME[@VERSION] --project 1 [--output suite.json]
manage.py suite import suite.json --project 2
manage.py suite list --project 1
"""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from agents.models import Suite
from agents.services import do_import_suite, do_make_suite, suite_named
from trajectories.bounds import check_file_size, load_json
from trajectories.models import Project
from trajectories.validation import InvalidData


class Command(BaseCommand):
    help = "Make, list, export and import benchmark suites (named, versioned task instances)."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["make", "list", "export", "import"])
        parser.add_argument(
            "args", nargs="*", help="make: NAME VERSION; export: NAME[@VERSION]; import: FILE"
        )
        parser.add_argument("--project", type=int, required=True)
        parser.add_argument("--user", help="who makes or imports it (default: the creator)")
        parser.add_argument(
            "--tasks", help="make: template ids, comma-separated, or memory, short, all, app:SLUG"
        )
        parser.add_argument("--seeds", help="make: e.g. 1..5 or 1,4,9")
        parser.add_argument("--output", type=Path, help="export: write here, not to stdout")

    def handle(self, *args, action, **options):
        project = Project.objects.filter(pk=options["project"]).first()
        if project is None:
            raise CommandError(f"no project {options['project']}")
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"no user {options['user']!r}")
        user = user or project.created_by
        names = list(args)
        try:
            if action == "list":
                for suite in Suite.objects.filter(project=project):
                    self.stdout.write(f"{suite.name}@{suite.version}\t{len(suite.instances)}")
            elif action == "make":
                if len(names) != 2 or not options["tasks"]:
                    raise CommandError("make: give NAME VERSION and --tasks (and --seeds)")
                tasks = [t.strip() for t in options["tasks"].split(",") if t.strip()]
                suite = do_make_suite(
                    project, user, names[0], names[1], tasks, options["seeds"] or "0"
                )
                self.stdout.write(f"Suite {suite}: {len(suite.instances)} instances")
            elif action == "export":
                if len(names) != 1:
                    raise CommandError("export: give NAME or NAME@VERSION")
                text = json.dumps(suite_named(project, names[0]).document, indent=1) + "\n"
                if options["output"]:
                    options["output"].write_text(text)
                else:
                    self.stdout.write(text, ending="")
            else:
                if len(names) != 1:
                    raise CommandError("import: give the suite's file")
                document = read_suite_file(Path(names[0]), names[0])
                suite, created = do_import_suite(project, user, document)
                said = "imported" if created else "already there"
                self.stdout.write(f"Suite {suite}: {said}, {len(suite.instances)} instances")
        except InvalidData as exc:
            raise CommandError(str(exc)) from exc


def read_suite_file(path: Path, where: str):
    """The suite document of a file, read within the import limits (its size, its nesting:
    InvalidData naming the file)."""
    try:
        check_file_size(path.stat().st_size, where)
        return load_json(path.read_bytes(), where)
    except InvalidData:
        raise
    except (OSError, ValueError) as exc:
        raise CommandError(f"{where}: not a readable JSON file ({exc})") from exc
