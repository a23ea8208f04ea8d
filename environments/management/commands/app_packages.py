"""``manage.py app_packages list | export SLUG... --out DIR | import FILE.wpk... | uninstall SLUG``:
the installed app packages (generated environments) of this Waypoint, exported as ``.wpk``
files and imported from another's. An import is inspected statically first
(``environments.inspection``); a package that fails is not installed, and the reason is said.
A suite names the packages it needs with their sha256 (``make_suite``), and is refused where
another content is installed.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from devices.services.packages import (
    archive_name,
    import_archive,
    install_package,
    installed_package,
    installed_versions,
    uninstall_package,
)
from environments.inspection import inspect_package
from trajectories.validation import InvalidData


class Command(BaseCommand):
    help = "List, export, import or uninstall the installed app packages (.wpk)."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["list", "export", "import", "uninstall"])
        parser.add_argument("names", nargs="*", help="slugs (export, uninstall) or files (import)")
        parser.add_argument("--out", type=Path, help="the folder exported packages go to")

    def handle(self, *args, action: str, names: list[str], out: Path | None, **options):
        if action == "list":
            for slug, version in sorted(installed_versions().items()):
                self.stdout.write(
                    f"{slug}\t{version['version']}\t{version['sha256']}\t{version['label']}"
                )
            return
        if not names:
            raise CommandError(f"{action}: name at least one package")
        if action == "export":
            if out is None:
                raise CommandError("export: say where with --out DIR")
            out.mkdir(parents=True, exist_ok=True)
            for slug in names:
                package = installed_package(slug)
                if package is None:
                    raise CommandError(f"export: no package {slug!r} is installed")
                (out / archive_name(package)).write_bytes(package.archive())
                self.stdout.write(f"{out / archive_name(package)}\t{package.sha256}")
        elif action == "import":
            for name in names:
                path = Path(name)
                try:
                    package = import_archive(path.read_bytes(), path.name)
                except (OSError, InvalidData) as exc:
                    raise CommandError(str(exc)) from None
                spec = json.loads(package.files.get("task_spec.json", b"{}"))
                scenario = json.loads(package.files.get("scenario.json", b"{}"))
                problems = inspect_package(package.files["index.html"].decode(), spec, scenario)
                if problems:
                    raise CommandError(
                        f"{path.name}: not installed, static inspection found: {problems[0]}"
                    )
                try:
                    install_package(package)
                except InvalidData as exc:
                    raise CommandError(str(exc)) from None
                self.stdout.write(f"installed {package.slug} {package.version} {package.sha256}")
        else:
            for slug in names:
                if not uninstall_package(slug):
                    raise CommandError(f"uninstall: no package {slug!r} is installed")
                self.stdout.write(f"uninstalled {slug}")
