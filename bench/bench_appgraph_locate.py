"""How often ``locate`` places a recorded screen of the virtual apps on its true page, and how
long it takes: `python bench/bench_appgraph_locate.py [SCENARIO ...]` from the repo root.

Records the reference recordings' scenarios again on a virtual device of its own (through a
private adb server and Waypoint's recording services, screenshots and all, in a throwaway
database), then for each recording builds every app's graph from the *other* recordings and
locates each of its app screens (leave one recording out). The true page of a screen is the
view the app rendered (``tests/graphs/virtual_pages.py``, read off each app's source); a screen
is placed right when its node's members are mostly of that page, or when no node takes it and
the graph has no member of that page. The same again for random halves (graphs from six
recordings, the other six located), where some pages are missing from the graph. Prints per
app and overall, the misses, and the time of one ``locate`` (median and p95). Asserts nothing.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
TMP = tempfile.mkdtemp(prefix="bench-appgraph-locate-")
os.environ.setdefault("DEBUG", "1")
os.environ["DATABASE_URL"] = f"sqlite:///{TMP}/db.sqlite3"
os.environ["MEDIA_ROOT"] = f"{TMP}/media"
os.environ["WAYPOINT_VAR_DIR"] = TMP
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import adbutils  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from devices.virtual import VirtualDevice  # noqa: E402
from graphs.appkg import AppGraphLocator, build_app_graph  # noqa: E402
from tests.annotate.reference_recordings.record import SCENARIOS  # noqa: E402
from tests.devices.conftest import AdbServer, free_port  # noqa: E402
from tests.graphs.virtual_pages import (  # noqa: E402
    AppScore,
    inputs_of,
    locate_accuracy,
    record_scenarios,
)
from trajectories.services import do_create_project  # noqa: E402

HALVES = 6
HALVES_SEED = 1


def table(title: str, folds: list, with_xml: bool = True) -> dict[str, AppScore]:
    totals: dict[str, AppScore] = {}
    for built_from, located in folds:
        for app, score in locate_accuracy(built_from, located, with_xml).items():
            total = totals.setdefault(app, AppScore())
            total.screens += score.screens
            total.right += score.right
            total.unmatched += score.unmatched
            total.wrong += score.wrong
    print(f"\n{title}\n")
    print("| app | screens | on their true page | on no node | misses (true → placed) |")
    print("|---|---|---|---|---|")
    for app, s in sorted(totals.items()):
        if not s.screens:
            continue
        misses = ", ".join(f"{t} → {n}" for t, n in sorted(set(s.wrong))[:3]) or "—"
        print(f"| {app} | {s.screens} | {s.right} ({s.share:.1%}) | {s.unmatched} | {misses} |")
    right = sum(s.right for s in totals.values())
    screens = sum(s.screens for s in totals.values())
    print(f"| all | {screens} | {right} ({right / screens:.1%}) | | |")
    return totals


def main(names: list[str]) -> None:
    call_command("migrate", verbosity=0)
    device = VirtualDevice(
        port=free_port(), size="540x1200", seed=7, chromium_path=settings.CHROMIUM_PATH
    ).start()
    server = AdbServer(adbutils.adb_path(), free_port()).start()
    try:
        server.connect(device.serial)
        adb = f"127.0.0.1:{server.port}"
        with override_settings(ADB_SERVERS=[adb]):
            user = get_user_model().objects.create_user("bench")
            project = do_create_project("Locate bench", user)
            began = time.perf_counter()
            recorded = record_scenarios(names, device.serial, adb, project, user)
            print(f"recorded {len(recorded)} scenarios in {time.perf_counter() - began:.0f} s")
    finally:
        server.kill()
        device.stop()
    trajectories = inputs_of(recorded)
    folds = [
        (trajectories[:i] + trajectories[i + 1 :], [left_out])
        for i, left_out in enumerate(trajectories)
    ]
    table(
        "leave one recording out: each recording's app screens located on graphs built from "
        "the other recordings (an app only one recording opens has no graph then: not scored)",
        folds,
    )
    table("leave one recording out, the screenshot alone (no XML sent)", folds, with_xml=False)
    rng = random.Random(HALVES_SEED)
    halves = []
    for _ in range(HALVES):
        order = rng.sample(trajectories, len(trajectories))
        first, second = order[: len(order) // 2], order[len(order) // 2 :]
        halves += [(first, second), (second, first)]
    totals = table(
        f"random halves ({HALVES} draws, each way round): a page one half never shows must be "
        "on no node",
        halves,
    )

    # The time of one locate on the largest graph (the app with the most screens).
    app = max(totals, key=lambda a: totals[a].screens)
    locator = AppGraphLocator(build_app_graph(app, trajectories))
    screens_of_app = [s for t in trajectories for s in t.screens if s.package == app]
    times = []
    for s in screens_of_app:
        began = time.perf_counter()
        locator.locate(s.screenshot, s.ui_xml)
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    print(
        f"\nlocate on {app}'s graph ({len(locator.graph.nodes)} nodes, "
        f"{len(locator.entries)} exemplars), screenshot + XML: median "
        f"{statistics.median(times):.1f} ms, p95 {p95:.1f} ms over {len(times)} screens"
    )


if __name__ == "__main__":
    chosen = sys.argv[1:] or list(SCENARIOS)
    unknown = [n for n in chosen if n not in SCENARIOS]
    if unknown:
        raise SystemExit(f"unknown scenario(s): {', '.join(unknown)}")
    main(chosen)
