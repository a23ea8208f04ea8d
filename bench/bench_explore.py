"""Exploration coverage: how much of each virtual app a DFS exploration reaches in a budget.

    .venv/bin/python bench/bench_explore.py [--budget 150] [--strategy dfs] [--apps mail,bank]

Each app of the virtual device is explored in this process by the exploration job's own code
(``explore.walk.explore``) for ``--budget`` steps at seed 3. The app's true pages and
page-to-page transitions are in ``fixtures/virtual_apps/<slug>/routes.json``; after every step
this script (never the explorer) asks the device which page it shows (``waypoint route``), and
counts the pages reached and the transitions made between two pages of the app. Printed per
app: pages reached / true pages, transitions / true transitions, the states the explorer
found, and states found per 100 steps. Transitions made that routes.json does not list are
printed too (they would mean the declared routes are wrong).

Everything lives in a temporary folder (SQLite, a private adb server, one virtual device).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
TMP = tempfile.mkdtemp(prefix="bench-explore-")
os.environ.setdefault("DEBUG", "1")
os.environ["DATABASE_URL"] = f"sqlite:///{TMP}/db.sqlite3"
os.environ["WAYPOINT_VAR_DIR"] = TMP
os.environ["MEDIA_ROOT"] = f"{TMP}/media"
os.environ["WAYPOINT_BROKER_DIR"] = f"{TMP}/broker"
os.environ["WAYPOINT_JOB_TMP_DIR"] = f"{TMP}/jobs"
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ADB_PORT = free_port()
os.environ["ADB_SERVERS"] = f"127.0.0.1:{ADB_PORT}"

import django  # noqa: E402

django.setup()

import adbutils  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from devices.models import Device  # noqa: E402
from devices.virtual import VirtualDevice  # noqa: E402
from devices.virtual.apps import APPS_DIR  # noqa: E402
from explore.models import Exploration  # noqa: E402
from explore.walk import explore  # noqa: E402
from trajectories.services import do_create_project  # noqa: E402

SEED = 3


class Routes:
    """The pages the device showed after each step, and the moves between them."""

    def __init__(self, device: adbutils.AdbDevice, package: str):
        self.device, self.package = device, package
        self.pages: set[str] = set()
        self.moves: set[tuple[str, str]] = set()
        self.last: tuple[int, str] | None = None  # (trajectory, page)

    def __call__(self, trajectory) -> None:
        shown = json.loads(self.device.shell(["waypoint", "route"]) or "null") or {}
        page = shown.get("route", "") if shown.get("package") == self.package else ""
        if page:
            self.pages.add(page)
            if self.last and self.last[0] == trajectory.pk and self.last[1] != page:
                self.moves.add((self.last[1], page))
        self.last = (trajectory.pk, page) if page else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=int, default=150)
    parser.add_argument("--strategy", default="dfs")
    parser.add_argument("--apps", default="")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(ADB_PORT)}
    adb = adbutils.adb_path()
    subprocess.run([adb, "-P", str(ADB_PORT), "start-server"], env=env, capture_output=True)
    vd = VirtualDevice(port=free_port(), size="540x1200", seed=SEED).start()
    try:
        subprocess.run(
            [adb, "-P", str(ADB_PORT), "connect", vd.serial], env=env, capture_output=True
        )
        time.sleep(1)
        device = adbutils.AdbClient(port=ADB_PORT).device(vd.serial)
        user = get_user_model().objects.create_user("bench")
        project = do_create_project("explore bench", user)
        Device.objects.get_or_create(serial=vd.serial)[0].projects.add(project)
        wanted = [a for a in args.apps.split(",") if a]
        rows = []
        for app in vd.catalog.apps:
            routes_file = APPS_DIR / app.slug / "routes.json"
            if not routes_file.exists() or (wanted and app.slug not in wanted):
                continue
            truth = json.loads(routes_file.read_text())
            pages = set(truth["pages"])
            links = {tuple(pair) for pair in truth["links"]}
            exploration = Exploration.objects.create(
                project=project,
                app=app.package,
                serial=vd.serial,
                adb_server=f"127.0.0.1:{ADB_PORT}",
                strategy=args.strategy,
                seed=SEED,
                budget_steps=args.budget,
                created_by=user,
            )
            seen = Routes(device, app.package)
            began = time.perf_counter()
            result = explore(exploration, observer=seen)
            seconds = time.perf_counter() - began
            steps = result["steps"]
            rows.append(
                (
                    app.slug,
                    len(seen.pages & pages),
                    len(pages),
                    len(seen.moves & links),
                    len(links),
                    result["states"],
                    steps,
                    100 * result["states"] / max(1, steps),
                    seconds,
                    sorted(seen.moves - links) + sorted(seen.pages - pages),
                )
            )
            r = rows[-1]
            print(
                f"{r[0]:<10} pages {r[1]}/{r[2]} ({100 * r[1] / r[2]:.0f}%)  transitions "
                f"{r[3]}/{r[4]} ({100 * r[3] / max(1, r[4]):.0f}%)  states {r[5]} in {r[6]} "
                f"steps ({r[7]:.1f}/100 steps)  {r[8]:.0f} s"
                + (f"  NOT IN routes.json: {r[9]}" if r[9] else ""),
                flush=True,
            )
        pages_ok = sum(1 for r in rows if r[1] / r[2] >= 0.9)
        links_ok = sum(1 for r in rows if r[3] / max(1, r[4]) >= 0.8)
        print(
            f"\n{args.strategy}, budget {args.budget} steps, seed {SEED}: {pages_ok}/{len(rows)} "
            f"apps reach >= 90% of their pages, {links_ok}/{len(rows)} >= 80% of their "
            f"transitions; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
    finally:
        vd.stop()
        subprocess.run([adb, "-P", str(ADB_PORT), "kill-server"], env=env, capture_output=True)


if __name__ == "__main__":
    main()
