"""The environment's benchmark, measured: every template's scripted solver played on a virtual
device (solved? replayed?), the memory check on its path (agents/memory_need.py, issue 35), the
episodes per hour, and with ``--controls`` the calibration agents.

    .venv/bin/python bench/bench_environment.py [--seeds 1..N] [--k 5] [--templates ID,ID]
                                                [--replay] [--controls]

The tests play every template's solver (and its replay) at seed 1 only; this is the loop over
every template at every seed. The episodes are played in this process by the runner's own code
(``do_start_run`` with Celery eager, as bench_agents.py plays them: a temporary SQLite database,
a private adb server, one virtual device; bench_agents.py measures episodes per hour on 2 and
4 devices with workers). Each episode's stored steps (the screen before each action, its UI XML,
and the action) go to ``measure`` with the instance's memory values (``load_apps(seed)``).

Printed per instance: the steps on the solver's path (its actions up to the answer, the
recorder's closing ``terminate`` left out), each value's memory distance at its farthest use
(``-`` when no screen before the use shows it; ``*`` beyond the window), whether the instance
needs memory by the XML, and the same by the variables the device declared visible on each
screen (``Screen.visible_memory``, which tells a value from an equal text elsewhere). In total:
how many instances need memory at K, the distribution of path lengths, solver episodes per hour,
and the wall time. ``--replay`` plays each solver episode back at its seed (``replay,run=N``);
``--controls`` plays ``window``, ``window+memory`` and ``random`` on the same instances and
prints how many each solves, of all and of those that need memory.
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
from bench_agents import Devices, load  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from agents.memory_need import InstanceNeed, SolverStep, measure, window  # noqa: E402
from agents.models import Episode  # noqa: E402
from agents.services import do_start_run  # noqa: E402
from agents.suites import parse_seeds  # noqa: E402
from devices.virtual import load_apps  # noqa: E402
from devices.virtual.apps import all_templates  # noqa: E402
from trajectories.blobs import read_blob  # noqa: E402
from trajectories.models import Step  # noqa: E402
from trajectories.services import do_create_project  # noqa: E402


def solver_path(episode: Episode) -> tuple[list[SolverStep], list[SolverStep]]:
    """The episode's steps up to its answer, read from the XML and from the device's
    declaration of what each screen shows."""
    rows = (
        Step.objects.filter(trajectory=episode.trajectory)
        .select_related("screen__ui_xml")
        .order_by("index")
    )
    by_xml, declared = [], []
    for row in rows:
        if row.action_type == "terminate" and by_xml and by_xml[-1].action["type"] == "answer":
            break
        xml = read_blob(row.screen.ui_xml).decode("utf-8", "replace") if row.screen.ui_xml else None
        action = {"type": row.action_type, **(row.action or {})}
        refs = frozenset(str(v.get("ref")) for v in row.screen.visible_memory or [])
        by_xml.append(SolverStep(xml, action))
        declared.append(SolverStep(xml, action, declared=refs))
    return by_xml, declared


def distances(need: InstanceNeed) -> str:
    parts = []
    for value in need.values:
        d = value.distance
        mark = "*" if value.needs_memory else ""
        parts.append(f"{value.ref}={'-' if d is None else d}{mark}")
    return " ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="1", help="1, 1..5 or 1,4,9")
    parser.add_argument("--k", type=int, default=None, help="the window (WAYPOINT_MEMORY_WINDOW)")
    parser.add_argument("--templates", default="", help="ids, comma-separated (default: all)")
    parser.add_argument(
        "--replay", action="store_true", help="also play each solver episode back at its seed"
    )
    parser.add_argument(
        "--controls",
        action="store_true",
        help="also play the controls (window, window+memory, random) on the same instances: "
        "the benchmark's calibration",
    )
    args = parser.parse_args()
    k = args.k or window()
    seeds = sorted(parse_seeds(args.seeds))
    templates = [t.id for t in all_templates()]
    if args.templates:
        templates = [t for t in args.templates.split(",") if t]

    began = time.monotonic()
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench", password="bench-password")
    project = do_create_project("Bench memory need", user)
    devices = Devices(project)
    try:
        [serial] = devices.up_to(1)
        ready = time.monotonic()

        def play(agent: str, max_steps: int = 200):
            settings.CELERY_TASK_ALWAYS_EAGER = True
            try:
                return do_start_run(
                    project,
                    user,
                    agent=agent,
                    tasks=templates,
                    seeds=",".join(str(s) for s in seeds),
                    max_steps=max_steps,
                    devices=[serial],
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
                steps = 30 if agent.startswith("random") else 200
                controls[agent] = (play(agent, steps), time.monotonic() - started)
    finally:
        devices.stop()

    catalogs = {seed: load_apps(seed) for seed in seeds}
    episodes = Episode.objects.filter(run=run).select_related("trajectory")
    order = {t: i for i, t in enumerate(templates)}
    episodes = sorted(episodes, key=lambda e: (e.seed, order.get(e.template, 0)))
    lengths, by_xml_count, declared_count, solved, unseen = [], 0, 0, 0, 0
    disagree, uses = [], Counter()
    needing: set[tuple[str, int]] = set()
    print(f"Memory need on the solver's path, K = {k} ({load()})")
    print(f"  {'template':<32} seed steps  xml  dev  value=distance (* beyond K, - never shown)")
    for episode in episodes:
        catalog = catalogs[episode.seed]
        task = catalog.task(episode.template)
        values = {ref: catalog.variable(ref).value for ref in task.variables}
        if episode.trajectory is None:
            print(f"  {episode.template:<32} {episode.seed:>4}  not played: {episode.message}")
            continue
        xml_steps, declared_steps = solver_path(episode)
        need = measure(xml_steps, values, k)
        told = measure(declared_steps, values, k)
        solved += bool(episode.success)
        lengths.append(need.steps)
        by_xml_count += need.needs_memory
        if need.needs_memory:
            needing.add((episode.template, episode.seed))
        declared_count += told.needs_memory
        unseen += any(v.never_shown for v in need.values)
        uses.update(u.by for v in need.values for u in v.uses)
        if need.needs_memory != told.needs_memory:
            disagree.append(episode.template)
        flag = "" if episode.success else "  (not solved)"
        verdicts = "  ".join("yes" if m.needs_memory else "no " for m in (need, told))
        print(
            f"  {episode.template:<32} {episode.seed:>4} {need.steps:>5}  {verdicts}"
            f"  {distances(need)}{flag}"
        )
        if need.needs_memory != told.needs_memory:
            print(f"  {'':<32}      by the device:  {distances(told)}")
    n = len(lengths)
    print()
    print(f"{n} instances ({len(templates)} templates x {len(seeds)} seeds), {solved} solved")
    print(f"need memory beyond K = {k}, by the XML:           {by_xml_count} of {n}")
    print(f"need memory beyond K = {k}, by the device's vars: {declared_count} of {n}")
    print(f"  they disagree on {len(disagree)}: {', '.join(disagree) or '-'}")
    print(f"instances with a value no screen showed before a use (XML): {unseen}")
    print("uses: " + ", ".join(f"{by} {count}" for by, count in sorted(uses.items())))
    if lengths:
        short = sum(length < 10 for length in lengths)
        print(
            f"solver path length: min {min(lengths)}, median {statistics.median(lengths):g}, "
            f"max {max(lengths)}; under 10 steps: {short} of {n}; "
            f"most common: {Counter(lengths).most_common(3)}"
        )
    if lengths:
        print(f"solver episodes per hour on one device: {3600 * n / played_s:.0f}")
    if controls:
        print()
        print(f"solved (K = {k}): of all {n} / of the {len(needing)} needing memory")
        rows = [("solver", run, played_s)] + [(a, r, t) for a, (r, t) in controls.items()]
        for agent, played, seconds in rows:
            done = {
                (e.template, e.seed): bool(e.success) for e in Episode.objects.filter(run=played)
            }
            print(
                f"  {agent:<20} {sum(done.values()):>3} of {len(done)}"
                f"  /  {sum(done.get(i, False) for i in needing):>3} of {len(needing)}"
                f"  ({seconds:.0f} s)"
            )
    total = time.monotonic() - began
    print(f"wall time: {total:.1f} s (episodes {played_s:.1f} s) ({load()})")


if __name__ == "__main__":
    main()
