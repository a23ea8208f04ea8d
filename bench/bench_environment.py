"""The environment's benchmark, measured: every template's scripted solver played on a virtual
device (solved? replayed?), the memory check on its path (agents/memory_check.py, issue 35), the
episodes per hour, and with ``--controls`` the calibration agents.

    .venv/bin/python bench/bench_environment.py [--templates memory] [--seeds 1..N]
        [--levels 3] [--k 5] [--replay] [--controls] [--devices 1,2]

``--templates``: ``memory`` (default: the memory suite), ``short``, ``all``, ``app:SLUG`` or
ids. The tests play every template's solver (and a sample of replays) at seed 1 only; this is
the loop over every template at every seed and level. The episodes are played in this process
by the runner's own code (``do_start_run`` with Celery eager, as bench_agents.py plays them: a
temporary SQLite database, a private adb server, one virtual device). Each episode's stored
steps (the screen before each action, its UI XML, and the action) are measured as
``make_suite --check-memory`` measures them (``agents.memory_check.measure_run``), and also by
the variables the device declared visible on each screen (``Screen.visible_memory``, which
tells a value from an equal text elsewhere).

Printed per instance: the steps on the solver's path (its actions up to the answer, the
recorder's closing ``terminate`` left out), each value's memory distance at its farthest use
(``-`` when no screen before the use shows it; ``*`` beyond the window), whether the instance
needs memory by the XML and by the device's declaration. In total: how many instances need
memory at K, the distribution of path lengths, solver episodes per hour, and the wall time.
``--replay`` plays each solver episode back at its seed (``replay,run=N``); ``--controls``
plays ``window``, ``window+memory`` and ``random`` on the same instances and prints how many
each solves, of all and of those that need memory; ``--devices 1,2`` plays the solver's run
again on N virtual devices with N Celery workers and prints episodes per hour for each N.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Sets up Django on a throwaway SQLite database and storage, and a private adb server.
from bench_agents import Devices, load, start_workers, stop_workers, wait  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from agents.memory_check import instance_values, measure_run, solver_path  # noqa: E402
from agents.memory_need import InstanceNeed, SolverStep, measure, window  # noqa: E402
from agents.models import Episode  # noqa: E402
from agents.services import do_start_run  # noqa: E402
from agents.suites import parse_levels, parse_seeds, select_templates  # noqa: E402
from devices.virtual import load_apps  # noqa: E402
from trajectories.models import Step  # noqa: E402
from trajectories.services import do_create_project  # noqa: E402


def declared_path(episode: Episode) -> list[SolverStep]:
    """The solver's path with what the device declared each screen shows (``visible_memory``)."""
    refs = [
        frozenset(str(v.get("ref")) for v in row.screen.visible_memory or [])
        for row in Step.objects.filter(trajectory=episode.trajectory)
        .select_related("screen")
        .order_by("index")
    ]
    path = solver_path(episode)
    return [SolverStep(s.xml, s.action, declared=r) for s, r in zip(path, refs, strict=False)]


def distances(need: InstanceNeed) -> str:
    parts = []
    for value in need.values:
        d = value.distance
        mark = "*" if value.needs_memory else ""
        parts.append(f"{value.ref}={'-' if d is None else d}{mark}")
    return " ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--templates", default="memory", help="memory (default), short, all, ids")
    parser.add_argument("--seeds", default="1", help="1, 1..5 or 1,4,9")
    parser.add_argument("--levels", default="3", help="difficulty levels, e.g. 1,2,3")
    parser.add_argument("--k", type=int, default=None, help="the window (WAYPOINT_MEMORY_WINDOW)")
    parser.add_argument(
        "--replay", action="store_true", help="also play each solver episode back at its seed"
    )
    parser.add_argument(
        "--controls",
        action="store_true",
        help="also play the controls (window, window+memory, random) on the same instances: "
        "the benchmark's calibration",
    )
    parser.add_argument(
        "--devices", default="", help="e.g. 1,2: the solver's episodes per hour on N devices"
    )
    args = parser.parse_args()
    k = args.k or window()
    templates = select_templates(args.templates)
    seeds = sorted(parse_seeds(args.seeds))
    levels = parse_levels(args.levels)
    counts = [int(n) for n in args.devices.split(",") if n.strip()]
    instances = {
        "tasks": templates,
        "seeds": ",".join(str(s) for s in seeds),
        "levels": ",".join(str(level) for level in levels),
    }

    began = time.monotonic()
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench", password="bench-password")
    project = do_create_project("Bench memory need", user)
    devices = Devices(project)
    rates = {}
    try:
        [serial] = devices.up_to(1)
        ready = time.monotonic()

        def play(agent: str, max_steps: int | None = None):
            settings.CELERY_TASK_ALWAYS_EAGER = True
            try:
                return do_start_run(
                    project, user, agent=agent, max_steps=max_steps, devices=[serial], **instances
                )
            finally:
                settings.CELERY_TASK_ALWAYS_EAGER = False

        run = play("solver")
        played_s = time.monotonic() - ready
        controls = {}
        if args.replay:
            started = time.monotonic()
            controls[f"replay,run={run.pk}"] = (
                play(f"replay,run={run.pk}"),
                time.monotonic() - started,
            )
        if args.controls:
            for agent in (f"window,k={k}", f"window+memory,k={k}", "random,seed=1"):
                started = time.monotonic()
                # random is given 30 steps, not the long budgets: it solves nothing with more
                steps = 30 if agent.startswith("random") else None
                controls[agent] = (play(agent, steps), time.monotonic() - started)
        for n in counts:
            serials = devices.up_to(n)
            workers = start_workers(n)
            try:
                started = time.monotonic()
                wait(do_start_run(project, user, agent="solver", devices=serials, **instances))
                rates[n] = (
                    3600 * len(templates) * len(seeds) * len(levels) / (time.monotonic() - started)
                )
            finally:
                stop_workers(workers)
    finally:
        devices.stop()

    needs = measure_run(run, k)
    catalogs = {}
    episodes = Episode.objects.filter(run=run).select_related("trajectory")
    order = {t: i for i, t in enumerate(templates)}
    episodes = sorted(episodes, key=lambda e: (e.seed, e.level, order.get(e.template, 0)))
    lengths, by_xml_count, declared_count, solved, unseen = [], 0, 0, 0, 0
    disagree, uses = [], Counter()
    needing: set[tuple[str, int, int]] = set()
    print(f"Memory need on the solver's path, K = {k} ({load()})")
    print(f"  {'template':<34} seed  L steps  xml  dev  value=distance (* beyond K, - never shown)")
    for episode in episodes:
        key = (episode.template, episode.seed, episode.level)
        need = needs[key]
        if not isinstance(need, InstanceNeed):
            print(f"  {episode.template:<34} {episode.seed:>4} {episode.level:>2}  {need}")
            continue
        if (episode.seed, episode.level) not in catalogs:
            catalogs[episode.seed, episode.level] = load_apps(episode.seed, level=episode.level)
        values = instance_values(catalogs[episode.seed, episode.level], episode.template)
        told = measure(declared_path(episode), values, k)
        solved += 1
        lengths.append(need.steps)
        by_xml_count += need.needs_memory
        if need.needs_memory:
            needing.add(key)
        declared_count += told.needs_memory
        unseen += any(v.never_shown for v in need.values)
        uses.update(u.by for v in need.values for u in v.uses)
        if need.needs_memory != told.needs_memory:
            disagree.append(episode.template)
        verdicts = "  ".join("yes" if m.needs_memory else "no " for m in (need, told))
        print(
            f"  {episode.template:<34} {episode.seed:>4} {episode.level:>2} {need.steps:>5}  "
            f"{verdicts}  {distances(need)}"
        )
        if need.needs_memory != told.needs_memory:
            print(f"  {'':<34}         by the device:  {distances(told)}")
    n = len(episodes)
    sizes = f"{len(templates)} templates x {len(seeds)} seeds x {len(levels)} levels"
    print()
    print(f"{n} instances ({sizes}), {solved} solved by the solver")
    print(f"need memory beyond K = {k}, by the XML:           {by_xml_count} of {n}")
    print(f"need memory beyond K = {k}, by the device's vars: {declared_count} of {n}")
    print(f"  they disagree on {len(disagree)}: {', '.join(disagree) or '-'}")
    print(f"instances with a value no screen showed before a use (XML): {unseen}")
    print("uses: " + ", ".join(f"{by} {count}" for by, count in sorted(uses.items())))
    if lengths:
        buckets = Counter(10 * (length // 10) for length in lengths)
        print(
            f"solver path length: min {min(lengths)}, median {statistics.median(lengths):g}, "
            f"max {max(lengths)}; by tens: "
            + ", ".join(f"{b}-{b + 9}: {buckets[b]}" for b in sorted(buckets))
        )
        print(
            f"solver episodes per hour on one device (in this process): {3600 * n / played_s:.0f}"
        )
    for count, rate in rates.items():
        print(f"solver episodes per hour on {count} device(s) with {count} worker(s): {rate:.0f}")
    if controls:
        print()
        print(f"solved (K = {k}): of all {n} / of the {len(needing)} needing memory")
        rows = [("solver", run, played_s)] + [(a, r, t) for a, (r, t) in controls.items()]
        for agent, played, seconds in rows:
            done = {
                (e.template, e.seed, e.level): bool(e.success)
                for e in Episode.objects.filter(run=played)
            }
            print(
                f"  {agent:<20} {sum(done.values()):>3} of {len(done)}"
                f"  /  {sum(done.get(i, False) for i in needing):>3} of {len(needing)}"
                f"  ({seconds:.0f} s)"
            )
    total = time.monotonic() - began
    print(f"wall time: {total:.1f} s (solver episodes {played_s:.1f} s) ({load()})")


if __name__ == "__main__":
    main()
