"""``manage.py run_benchmark``: run an agent over a suite (or task templates at seeds), wait for
its episodes (played by the Celery workers), and print its scores.

``--devices N`` starts N virtual devices here, connects them to the first adb server of
ADB_SERVERS, grants them to the project for the run and stops them after; without it the run
uses the project's connected devices. Workers play the episodes: start them as usual
(``celery -A config worker``), on this machine or any that reaches the adb server.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agents.management.local_runs import VirtualPool, run_owner, wait_for_run
from agents.models import Run
from agents.results import episode_rows, summarize
from agents.runner import stop_queued_episodes
from agents.services import do_start_run, suite_named
from trajectories.validation import InvalidData


class Command(BaseCommand):
    help = "Run an agent over a suite or task templates on virtual devices, and print its scores."

    def add_arguments(self, parser):
        parser.add_argument("--project", type=int, required=True, help="the project's id")
        parser.add_argument("--user", help="who runs it (default: the project's creator)")
        parser.add_argument("--suite", help="a suite of the project: NAME or NAME@VERSION")
        parser.add_argument(
            "--tasks",
            help="instead of a suite: template ids, comma-separated, or memory, short, all, "
            "app:SLUG",
        )
        parser.add_argument(
            "--agent",
            required=True,
            help="e.g. solver, random, replay, "
            "openai:mobile_use,model=NAME (see agents/registry.py)",
        )
        parser.add_argument("--seeds", help="e.g. 1..5 or 1,4,9")
        parser.add_argument(
            "--levels",
            help="difficulty levels, e.g. 1,2,3 (default: a suite's every level, else 3)",
        )
        parser.add_argument("--attempts", type=int, default=1)
        parser.add_argument("--max-steps", type=int, default=None)
        parser.add_argument(
            "--devices", type=int, default=0, help="start N virtual devices for the run"
        )
        parser.add_argument("--size", default=settings.WAYPOINT_VIRTUAL_SIZE)
        parser.add_argument(
            "--timeout", type=float, default=0, help="give up waiting after N s (0: never)"
        )
        parser.add_argument(
            "--no-wait", action="store_true", help="queue the run and return (not with --devices)"
        )

    def handle(self, *args, **options):
        project, user = run_owner(options)
        if options["devices"] and options["no_wait"]:
            raise CommandError("--no-wait: the devices this command starts stop when it returns")
        try:
            suite = suite_named(project, options["suite"]) if options["suite"] else None
            tasks = [t.strip() for t in (options["tasks"] or "").split(",") if t.strip()]
            start = {
                "agent": options["agent"],
                "suite": suite,
                "tasks": tasks or None,
                "seeds": options["seeds"],
                "levels": options["levels"],
                "attempts": options["attempts"],
                "max_steps": options["max_steps"],
            }
            if options["devices"]:
                with VirtualPool(options["devices"], options["size"], project) as serials:
                    run = do_start_run(project, user, devices=serials, **start)
                    self.stdout.write(f"Run {run.pk} on {', '.join(serials)}")
                    try:
                        self._wait(run, options["timeout"])
                    except (CommandError, KeyboardInterrupt):
                        # Its devices stop with this command: no worker can play the rest.
                        stopped = stop_queued_episodes(
                            run, "not played: the devices run_benchmark started for it stopped"
                        )
                        if stopped:
                            self.stderr.write(f"Run {run.pk}: {stopped} episodes not played")
                        raise
            else:
                run = do_start_run(project, user, **start)
                self.stdout.write(f"Run {run.pk} on {', '.join(d['serial'] for d in run.devices)}")
                if options["no_wait"]:
                    return
                self._wait(run, options["timeout"])
        except InvalidData as exc:
            raise CommandError(str(exc)) from exc
        self._report(run)

    def _wait(self, run: Run, timeout: float) -> None:
        wait_for_run(run, timeout, self.stdout.write)

    def _report(self, run: Run) -> None:
        run = Run.objects.select_related("job").get(pk=run.pk)  # as it ended, not as it began
        s = summarize(run, episode_rows([run])[run.pk])
        pct = lambda v: "–" if v is None else f"{100 * v:.1f}%"  # noqa: E731
        passes = ", ".join(f"pass@{p['k']} {pct(p['pass'])}" for p in s["pass_at_k"]["by_k"])
        self.stdout.write(
            f"Run {run.pk} ({s['agent']}, {s['suite']}): {s['status']}\n"
            f"  success {pct(s['success_rate'])} ({s['succeeded']} of {s['finished']}), "
            f"M-Acc {pct(s['m_acc'])}, {passes or 'no pass@k'}\n"
            f"  mean steps {s['mean_steps']}, tokens {s['tokens_in']} in / {s['tokens_out']} out, "
            f"mean time {s['mean_seconds']} s\n"
            f"  failures: {s['failures'] or 'none'}"
        )
