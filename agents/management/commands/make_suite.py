"""``manage.py make_suite NAME --templates all --seeds 1..3 [--levels 1,2,3] [--suite-version 1]
[--out FILE]``: write a benchmark suite (every template at every seed and difficulty level) as
JSON, for ``run_benchmark`` and for other labs to import.

``--levels``: STAMP's difficulty levels (1: simplified, with the task-required knowledge; 2: the
task with the knowledge; 3, the default: the task alone); each instance is ``{template, seed,
level}``."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from agents.suites import make_suite, parse_levels, parse_seeds, select_templates
from trajectories.validation import InvalidData


class Command(BaseCommand):
    help = "Write a suite of task instances (templates of the virtual device at seeds) as JSON."

    def add_arguments(self, parser):
        parser.add_argument("name", help="the suite's name, e.g. memory-world-mini")
        parser.add_argument(
            "--templates",
            default="all",
            help="comma-separated template ids, or 'all' (default), or app:SLUG for an app's",
        )
        parser.add_argument("--seeds", required=True, help="e.g. 1..3 or 1,2,7")
        parser.add_argument(
            "--levels",
            default="3",
            help="difficulty levels, e.g. 1,2,3 (1: simplified with the task-required knowledge, "
            "2: the task with the knowledge, 3: the task alone; default 3)",
        )
        parser.add_argument("--suite-version", default="1", help="the suite's version (default 1)")
        parser.add_argument("--out", type=Path, help="the file to write (default: stdout)")

    def handle(self, *args, **options):
        try:
            templates = select_templates(options["templates"])
            seeds = parse_seeds(options["seeds"])
            levels = parse_levels(options["levels"])
            suite = make_suite(options["name"], options["suite_version"], templates, seeds, levels)
        except InvalidData as exc:
            raise CommandError(str(exc)) from exc
        text = json.dumps(suite, indent=1, ensure_ascii=False) + "\n"
        if options["out"] is None:
            self.stdout.write(text, ending="")
            return
        options["out"].write_text(text, encoding="utf-8")
        self.stderr.write(
            f"Suite {suite['name']} version {suite['version']}: {len(suite['instances'])} "
            f"instances ({len(templates)} templates x {len(seeds)} seeds"
            + (f" x {len(levels)} levels" if len(levels) > 1 else "")
            + f") in {options['out']}"
        )
