"""``manage.py make_suite NAME --seeds 1..3 [--templates memory] [--levels 1,2,3]
[--suite-version 1] [--out FILE] [--check-memory --project ID [--devices N] [--k 5]
[--require-memory]]``: write a benchmark suite (every template at every seed and difficulty
level) as JSON, for ``run_benchmark`` and for other labs to import.

``--templates``: ``memory`` (the default: the long templates whose values must be remembered),
``short`` (the first lookups), ``all``, ``app:SLUG`` or template ids. ``--levels``: STAMP's
difficulty levels (1: simplified, with the task-required knowledge; 2: the task with the
knowledge; 3: the task alone); each instance is ``{template, seed, level}``.

``--check-memory`` plays the reference solver on every instance (a run of the project, on its
devices or on ``--devices N`` virtual ones started here, played by the Celery workers; its
episodes stay in the project as verified demonstrations) and writes into the suite, per
instance, whether it needs memory beyond the window of ``--k`` observations on the solver's
path, and how many do (``agents.memory_check``); ``--require-memory`` leaves out the instances
that do not.
"""

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agents.management.local_runs import VirtualPool, run_owner, wait_for_run
from agents.memory_check import mark_suite, measure_run
from agents.services import do_start_run
from agents.suites import make_suite, parse_levels, parse_seeds, select_templates
from trajectories.validation import InvalidData


class Command(BaseCommand):
    help = "Write a suite of task instances (templates of the virtual device at seeds) as JSON."

    def add_arguments(self, parser):
        parser.add_argument("name", help="the suite's name, e.g. memory-world-mini")
        parser.add_argument(
            "--templates",
            default="memory",
            help="memory (default: the long memory templates), short, all, app:SLUG or "
            "template ids, comma-separated",
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
        parser.add_argument(
            "--check-memory",
            action="store_true",
            help="play the solver on every instance and mark which need memory (needs --project)",
        )
        parser.add_argument("--project", type=int, help="the project whose devices play it")
        parser.add_argument("--user", help="who runs the check (default: the project's creator)")
        parser.add_argument(
            "--devices", type=int, default=0, help="start N virtual devices for the check"
        )
        parser.add_argument(
            "--k",
            type=int,
            default=None,
            help="the agent's window in observations (default WAYPOINT_MEMORY_WINDOW)",
        )
        parser.add_argument(
            "--require-memory",
            action="store_true",
            help="leave out the instances that do not need memory beyond K",
        )
        parser.add_argument(
            "--timeout", type=float, default=0, help="give up the check after N s (0: never)"
        )

    def handle(self, *args, **options):
        checking = options["check_memory"]
        if not checking and (options["require_memory"] or options["project"]):
            raise CommandError("--project and --require-memory go with --check-memory")
        k = settings.WAYPOINT_MEMORY_WINDOW if options["k"] is None else options["k"]
        if k < 1:
            raise CommandError(f"--k: the window holds at least one observation, not {k}")
        try:
            templates = select_templates(options["templates"])
            seeds = parse_seeds(options["seeds"])
            levels = parse_levels(options["levels"])
            suite = make_suite(options["name"], options["suite_version"], templates, seeds, levels)
            if checking:
                suite = self._check_memory(suite, templates, options, k)
        except InvalidData as exc:
            raise CommandError(str(exc)) from exc
        text = json.dumps(suite, indent=1, ensure_ascii=False) + "\n"
        if options["out"] is None:
            self.stdout.write(text, ending="")
        else:
            options["out"].write_text(text, encoding="utf-8")
        sizes = f"{len(templates)} templates x {len(seeds)} seeds"
        if len(levels) > 1:
            sizes += f" x {len(levels)} levels"
        self.stderr.write(
            f"Suite {suite['name']} version {suite['version']}: {len(suite['instances'])} "
            f"instances ({sizes})" + (f" in {options['out']}" if options["out"] else "")
        )
        if checking:
            self._say_memory(suite["memory"])

    def _check_memory(self, suite: dict, templates: list[str], options: dict, k: int) -> dict:
        if options["project"] is None:
            raise CommandError("--check-memory needs --project: the solver plays on its devices")
        project, user = run_owner(options)
        start = {
            "agent": "solver",
            "tasks": templates,
            "seeds": options["seeds"],
            "levels": options["levels"],
        }
        if options["devices"]:
            with VirtualPool(options["devices"], settings.WAYPOINT_VIRTUAL_SIZE, project) as ids:
                run = do_start_run(project, user, devices=ids, **start)
                self.stderr.write(f"Memory check: solver run {run.pk} on {', '.join(ids)}")
                wait_for_run(run, options["timeout"], self.stderr.write)
        else:
            run = do_start_run(project, user, **start)
            self.stderr.write(f"Memory check: solver run {run.pk}")
            wait_for_run(run, options["timeout"], self.stderr.write)
        marked = mark_suite(suite, measure_run(run, k), k, options["require_memory"])
        if not marked["instances"]:
            self._say_memory(marked["memory"])
            raise CommandError(f"no instance needs memory beyond K = {k}: no suite written")
        return marked

    def _say_memory(self, memory: dict) -> None:
        k, steps = memory["k"], memory["solver_steps"]
        self.stderr.write(
            f"Memory beyond K = {k}: {memory['need_memory']} of {memory['instances']} instances "
            f"({memory['checked']} solved by the solver)"
            + (
                f"; solver path {steps['min']}-{steps['max']} steps, median {steps['median']:g}"
                if steps
                else ""
            )
        )
        for line in memory["left_out"]:
            self.stderr.write(f"  left out: {line}")
