"""What one request costs the web process: `python bench/bench_request_cost.py`.

Seeds the database DATABASE_URL names as ``bench_load.py`` does (1,000 trajectories of 12
steps, a team of 300; idempotent), then sends the team's requests through Django's test client
in this process, signed in as one of the team's annotators (a session for pages, a token for the
API), with the production settings the load bench serves with (``DEBUG=0``; sessions on Redis
when REDIS_URL is set). For each kind of request it warms every URL it will ask for, then asks
``--count`` of them in turn and prints per request: the queries (Django's
``CaptureQueriesContext``), the CPU time of this process (``time.process_time``, a proxy that
the shared machine's load disturbs) and, with ``--callgrind``, the instructions executed
(valgrind's callgrind, which no other load on the machine changes):

- workspace page / step switch (htmx) / labels read (API): the annotator's two trajectories at
  every step, their labels kept since a read at the same version (trajectories/labels/cache.py);
  "workspace page (read)": the labels' cache emptied before each request (as on a process's
  first look at a trajectory at its version, which the mixed load's random trajectories mostly are);
- label edit (API): a step's memory text, on the version the previous answer named;
- list page / API list: every page, kept (list_cache.py); "computed": the lists' cache emptied
  before each request (as after any change to the project), the emptying included (~0.01 M).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wp_bench_cost python bench/bench_request_cost.py
    ... python bench/bench_request_cost.py --callgrind          # instructions (a few minutes)
    ... python bench/bench_request_cost.py --only "step switch" --profile  # cProfile of one kind

The database's name must contain "bench". The blobs are kept in var/bench-request-cost/.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / "var" / "bench-request-cost"
KINDS = (
    "workspace page",
    "workspace page (read)",
    "step switch",
    "labels read",
    "label edit",
    "list page",
    "list page (computed)",
    "API list",
    "API list (computed)",
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=0, help="requests measured per kind")
    parser.add_argument("--only", action="append", choices=KINDS, help="these kinds alone")
    parser.add_argument("--callgrind", action="store_true", help="count instructions")
    parser.add_argument("--profile", action="store_true", help="print a cProfile per kind")
    parser.add_argument(
        "--sort", default="cumulative", choices=("cumulative", "tottime"), help="profile order"
    )
    parser.add_argument("--workdir", default=str(WORK), help="blobs and static files")
    parser.add_argument("--under-valgrind", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if "bench" not in url.rsplit("/", 1)[-1]:
        parser.error(f"DATABASE_URL must name a database whose name contains 'bench': {url!r}")
    if not args.count:
        args.count = 30 if args.callgrind or args.under_valgrind else 200
    return args


def set_up(work: Path) -> None:
    """Production settings, as bench_load.py serves them (DEBUG=0), for the test client."""
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "bench"))
    from bench_load import environment

    for name, value in environment(work).items():
        if name != "DATABASE_URL":
            os.environ.setdefault(name, value)


def seeded(work: Path) -> dict:
    """bench_load's project, trajectories and team, seeded once into the database (again
    when the database no longer holds what the stamp names, e.g. after bench_load's
    --fresh-db)."""
    from bench_load import create_database, seed

    url = os.environ["DATABASE_URL"]
    if url.startswith("postgres"):
        create_database(url, replace=False)
    stamp = work / "seeded.json"
    if stamp.exists():
        import django

        django.setup()
        from rest_framework.authtoken.models import Token

        data = json.loads(stamp.read_text())
        if Token.objects.filter(key=data["team"][0]["token"]).exists():
            return data
    data = seed(1000, 12, 300)
    work.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps(data))
    return data


class Requests:
    """The requests of each kind, as the annotator asks them."""

    def __init__(self, data: dict) -> None:
        from django.contrib.auth import get_user_model
        from django.test import Client
        from rest_framework.authtoken.models import Token

        self.data = data
        member = next(m for m in data["team"] if m["role"] == "annotator")
        self.token = member["token"]
        self.assigned = member["assigned"]
        user = get_user_model().objects.get(auth_token__key=self.token)
        self.client = Client()
        self.client.force_login(user)
        self.api = {"HTTP_AUTHORIZATION": f"Token {Token.objects.get(user=user).key}"}
        self.version: dict[int, int] = {}
        self.edits = 0

    def urls(self, kind: str) -> list[tuple[str, str, dict]]:
        """(method, path, headers) of every request of a kind, in the order asked."""
        data, project = self.data, self.data["project"]
        steps = [(t, s) for s in range(data["steps"]) for t in self.assigned]
        if kind.startswith("workspace page") or kind == "step switch":
            headers = {"HTTP_HX_REQUEST": "true"} if kind == "step switch" else {}
            return [("GET", f"/trajectories/{t}/workspace/?step={s}", headers) for t, s in steps]
        if kind == "labels read":
            return [("GET", f"/api/v1/trajectories/{t}/labels/", self.api) for t in self.assigned]
        if kind == "label edit":
            return [
                ("PATCH", f"/api/v1/trajectories/{t}/step-labels/{s}/", self.api) for t, s in steps
            ]
        if kind.startswith("list page"):
            pages = len(data["trajectories"]) // 25
            return [
                ("GET", f"/projects/{project}/trajectories/?page={p}", {})
                for p in range(1, pages + 1)
            ]
        pages = len(data["trajectories"]) // 50
        return [
            ("GET", f"/api/v1/projects/{project}/trajectories/?page={p}", self.api)
            for p in range(1, pages + 1)
        ]

    def send(self, kind: str, method: str, path: str, headers: dict) -> None:
        from django.core.cache import caches

        if kind.endswith("(computed)"):
            caches["lists"].clear()  # as after a change to the project
        if kind.endswith("(read)"):
            caches["labels"].clear()  # as the first look at a trajectory in this process
        if method == "PATCH":
            trajectory = int(path.split("/")[4])
            if trajectory not in self.version:
                read = self.client.get(f"/api/v1/trajectories/{trajectory}/labels/", **headers)
                self.version[trajectory] = read.json()["version"]
            self.edits += 1
            body = json.dumps({"version": self.version[trajectory], "memory": f"m{self.edits}"})
            response = self.client.patch(path, body, "application/json", **headers)
            if response.status_code == 200:
                self.version[trajectory] = response.json()["version"]
        else:
            response = self.client.get(path, **headers)
        if response.status_code != 200:
            raise RuntimeError(f"{method} {path}: {response.status_code}")


def callgrind(command: str, *hint: str) -> None:
    subprocess.run(
        ["callgrind_control", command, *hint, str(os.getpid())],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def measure(args: argparse.Namespace) -> None:
    work = Path(args.workdir).resolve()
    set_up(work)
    data = seeded(work)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    requests = Requests(data)
    kinds = args.only or KINDS
    print(f"{'request':<22} {'queries':>7} {'CPU ms':>7}", flush=True)
    for kind in kinds:
        urls = requests.urls(kind)
        for request in urls:  # warm: imports, templates, the caches the kind keeps
            requests.send(kind, *request)
        asked = [urls[i % len(urls)] for i in range(args.count)]
        with CaptureQueriesContext(connection) as captured:
            requests.send(kind, *asked[0])
        queries = len(captured)
        profile = cProfile.Profile() if args.profile else None
        if args.under_valgrind:
            callgrind("-z")
            callgrind("-i", "on")
        started = time.process_time()
        if profile:
            profile.enable()
        for request in asked:
            requests.send(kind, *request)
        if profile:
            profile.disable()
        cpu = (time.process_time() - started) * 1000 / len(asked)
        if args.under_valgrind:
            callgrind("-i", "off")
            callgrind(f"--dump=kind{KINDS.index(kind)}")
        print(f"{kind:<22} {queries:>7} {cpu:>7.2f}", flush=True)
        if profile:
            pstats.Stats(profile).sort_stats(args.sort).print_stats(40)


def run_callgrind(args: argparse.Namespace) -> None:
    """This script again, under callgrind: a dump per kind, read back as instructions."""
    out = Path(tempfile.mkdtemp(prefix="wp-cost-"))
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}/callgrind.out",
        sys.executable,
        __file__,
        "--under-valgrind",
        f"--count={args.count}",
        f"--workdir={args.workdir}",
    ]
    for kind in args.only or ():
        command.append(f"--only={kind}")
    process = subprocess.run(command, capture_output=True, text=True)
    if process.returncode:
        sys.exit(process.stderr[-3000:])
    rows = {}
    for dump in out.glob("callgrind.out*"):
        text = dump.read_text(errors="replace")
        trigger = re.search(r"^desc: Trigger: dump kind(\d+)$", text, re.M)
        total = re.search(r"^totals: (\d+)", text, re.M)
        if trigger and total:
            rows[KINDS[int(trigger.group(1))]] = int(total.group(1))
    measured = {}
    for line in process.stdout.splitlines()[1:]:
        kind, queries, cpu = line[:22].strip(), *line[22:].split()
        measured[kind] = (queries, cpu)
    print(f"{'request':<22} {'queries':>7} {'M instr':>8}   ({args.count} requests each)")
    for kind, (queries, _) in measured.items():
        found = rows.get(kind)
        figure = f"{found / args.count / 1e6:8.1f}" if found is not None else "       ?"
        print(f"{kind:<22} {queries:>7} {figure}")


def main() -> None:
    args = parse_args()
    if args.callgrind:
        run_callgrind(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()
