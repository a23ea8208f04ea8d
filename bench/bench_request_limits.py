"""What a run or suite request over the limits costs the web process before it is refused:
`.venv/bin/python bench/bench_request_limits.py [--repeat 5]`.

Issue 34: ``seeds: "0..1999"`` on ``POST /api/v1/projects/<id>/runs/`` took 15.6 s before it was
refused (every instance posed in the request), and a 20,000-instance suite 154 s before its 422.
Now a run of more than ``WAYPOINT_MAX_RUN_EPISODES`` episodes and a suite of more than
``WAYPOINT_MAX_SUITE_INSTANCES`` instances are refused by counting, and a run's instances are
posed by its job on a worker. Each request goes through Django's test client in this process
(wall time, the median of ``--repeat``), signed in as the project's admin, with no device (a run
within the limits is refused at its devices check, after everything the request does with its
instances). Also timed: a suite of the maximum imported (posed and checked in the request: 60
templates at 50 seeds, and its worst case, one template at 3,000 seeds) and a run's posing in
its job (what the worker now does for 1 template at 2,000 seeds).

Everything lives in a temporary folder (SQLite).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
TMP = tempfile.mkdtemp(prefix="bench-request-limits-")
os.environ.setdefault("DEBUG", "1")
os.environ["DATABASE_URL"] = f"sqlite:///{TMP}/db.sqlite3"  # never a shared database
os.environ["WAYPOINT_VAR_DIR"] = TMP
os.environ["MEDIA_ROOT"] = f"{TMP}/media"
os.environ["WAYPOINT_BROKER_DIR"] = f"{TMP}/broker"
os.environ["WAYPOINT_JOB_TMP_DIR"] = f"{TMP}/jobs"
os.environ["ADB_SERVERS"] = "127.0.0.1:1"  # nothing there: no device, at once
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from agents import runner, services  # noqa: E402
from agents.models import Run, Suite  # noqa: E402
from agents.suites import make_suite, parse_seeds  # noqa: E402
from devices.virtual.apps import all_templates  # noqa: E402
from trajectories.services import do_create_project  # noqa: E402

ORDER = "freshcart-order-number"


def fake_suite(count: int) -> dict:
    document = make_suite("big", "1", [ORDER], [1])
    document["instances"] = [
        {"template": ORDER, "seed": s, "instruction": "?", "rule": "exact", "gold_sha256": "0"}
        for s in range(count)
    ]
    return document


def timed(repeat: int, call) -> tuple[float, object]:
    times, answer = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        answer = call()
        times.append(time.perf_counter() - began)
    return statistics.median(times), answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    setup_test_environment()
    call_command("migrate", verbosity=0)
    alice = get_user_model().objects.create_user("alice", password="x")
    project = do_create_project("Bench", alice)
    api = APIClient(raise_request_exception=False)
    api.force_authenticate(alice)
    runs = f"/api/v1/projects/{project.pk}/runs/"
    suites = f"/api/v1/projects/{project.pk}/suites/"
    run_most = settings.WAYPOINT_MAX_RUN_EPISODES
    suite_most = settings.WAYPOINT_MAX_SUITE_INSTANCES
    print(f"WAYPOINT_MAX_RUN_EPISODES={run_most} WAYPOINT_MAX_SUITE_INSTANCES={suite_most}")
    print(f"{'request':<58} {'status':>6} {'ms':>9}")

    def show(name: str, call, repeat: int = args.repeat) -> None:
        seconds, answer = timed(repeat, call)
        print(f"{name:<58} {answer.status_code:>6} {seconds * 1000:>9.1f}")

    def run(seeds, tasks=(ORDER,)):
        body = {"agent": "solver", "tasks": list(tasks), "seeds": seeds}
        return lambda: api.post(runs, body, format="json")

    show(f'run, seeds "0..{run_most}" (the maximum + 1)', run(f"0..{run_most}"))
    show('run, seeds "0..99999999999"', run("0..99999999999"))
    show("run, seeds [0, 1, ..., 99999] (100,000 listed)", run(list(range(100_000))))
    show('run, seeds "0..1999" (was 15.6 s; now at its devices check)', run("0..1999"))
    show(f'run, seeds "1..{run_most}" (the maximum; at its devices check)', run(f"1..{run_most}"))
    deep = "[" * 100_000 + "]" * 100_000
    show(
        "run, a body nested 100,000 deep",
        lambda: api.post(runs, deep, content_type="application/json"),
    )
    for count in (suite_most + 1, 20_000):
        document = fake_suite(count)
        show(
            f"suite import, {count} instances",
            lambda document=document: api.post(suites, document, format="json"),
        )
    show(
        "suite import, nested 100,000 deep",
        lambda: api.post(suites, deep, content_type="application/json"),
    )
    ids = [t.id for t in all_templates()]
    dense = make_suite("dense", "1", ids, parse_seeds(f"1..{suite_most // len(ids)}"))
    sparse = make_suite("sparse", "1", [ORDER], parse_seeds(f"1..{suite_most}"))
    for name, document in (
        (
            f"suite import, the maximum: {len(ids)} templates x {suite_most // len(ids)} seeds",
            dense,
        ),
        (f"suite import, the maximum: 1 template x {suite_most} seeds", sparse),
    ):

        def post(document=document):
            Suite.objects.all().delete()
            return api.post(suites, document, format="json")

        show(name, post, repeat=min(args.repeat, 3))

    # What the worker now does: the run's job poses its instances (1 template at 2,000 seeds).
    services.check_pool = lambda project, devices: [{"serial": "x", "adb_server": "-"}]
    runner.send_episode = lambda episode_id: None
    posing = []
    for _ in range(min(args.repeat, 3)):
        started = services.do_start_run(
            project, alice, agent="solver", tasks=[ORDER], seeds="0..1999"
        )
        began = time.perf_counter()
        runner.run_agent_run(started.job, None)
        posing.append(time.perf_counter() - began)
        assert "instruction" in Run.objects.get(pk=started.pk).instances[-1]
    print(f"{'worker: the run job poses 1 template x 2000 seeds':<58} {'':>6} "
          f"{statistics.median(posing) * 1000:>9.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
