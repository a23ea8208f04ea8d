"""Many users at once against gunicorn: `python bench/bench_load.py`.

Seeds a project with N generated trajectories (default 1,000, which name 782 distinct tasks) into
the database named by DATABASE_URL, or a throwaway SQLite file; starts gunicorn (3 sync workers,
DEBUG=0) on the loopback interface; then users load it:

- a labelling team (``--mode team``): 300 people (85 % annotators, 10 % reviewers, 5 % admins,
  each a user of their own), each waiting a think time ~ Exp(mean 5 s) between requests and
  asking for what their role asks for most (TEAM_MIX below): annotators open the workspace of a
  trajectory assigned to them, step through it and save label edits through the API with the
  version protocol (a 409 on a stale version is re-read and retried, and counted apart, not as
  an error); reviewers read workspaces and the lists; admins read the lists and fix labels.
  Users start spread over the first think time (the ramp-up); the figures are those of the
  requests sent in the following 60 s. Target: p95 <= 250 ms for every endpoint, 0 errors;
- each endpoint alone (``--mode each``): one run per endpoint, in which every user asks for the
  trajectory list page (a random page), the annotation workspace (a random trajectory and
  step) or the API list of trajectories (a random page) again and again;
- mixed (``--mode mix``): one run in which every user asks for the three in turn; without
  --think this is the saturation throughput of the mix.

``--mode both`` (the default) runs each, then mix. In these two, users do not pause between
requests unless --think gives a mean pause: without it, 50 users keep 50 requests in flight at
all times, so a request's wait is mostly the work queued ahead of it; in the mixed run that work
is the same for every endpoint. Prints, per endpoint: requests, requests per second, errors,
p50, p95 and p99 latency in ms, and the queries and bytes of one request; and per run where the
CPU went, the load generator's share included.

Targets (50 users, PostgreSQL, 2 cores): every page and API p95 <= 500 ms, API list p95 <= 250 ms.

The lists (page and API) keep what they computed until the project's data changes
(trajectories/list_cache.py). Without writes, the 40 list pages and 20 API pages are computed
once per gunicorn worker; --edits-per-s adds an admin editing labels meanwhile (each edit makes
every list of the project be computed again), and --no-list-cache turns the cache off.

    python bench/bench_load.py                                   # SQLite, 1,000 trajectories
    python bench/bench_load.py --users 20 --duration 15          # a quick run
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/waypoint_bench_load python bench/bench_load.py
    python bench/bench_load.py --workdir var/bench-load         # keep the data for the next run
    python bench/bench_load.py --mode mix --edits-per-s 2       # mixed, with label edits
    python bench/bench_load.py --mode team                      # 300 people, think ~ Exp(5 s)

Another checkout's code (``--code DIR``): the database is seeded and gunicorn serves with DIR as
the working directory and first on the Python path, in this virtualenv, so the code of two
commits is measured back to back by the same load generator. Each checkout migrates and seeds
a database of its own: ``--fresh-db`` drops and creates the PostgreSQL database DATABASE_URL
names (its name must contain "bench") before seeding it with the served code.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/wp_bench_before \\
        python bench/bench_load.py --mode team --code ../wt-before --fresh-db

Without --fresh-db, seeding is idempotent: a database that already holds the bench project is
reused as it is. With DATABASE_URL the blobs go to var/bench-load/ (kept, like the database)
unless --workdir names another folder; with --fresh-db they go to a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

# No Django in this process: the seeding runs in a child process with the served code on its
# path (prepare), so this one only sends requests and stays small.
REPO = Path(__file__).resolve().parents[1]

PROJECT_NAME = "bench-load"
HOST = "127.0.0.1"  # loopback only: the bench never leaves the machine
PAGE_TARGET_MS = 500
API_LIST_TARGET_MS = 250
TEAM_TARGET_MS = 250  # every endpoint, in the team mode
REQUEST_TIMEOUT_S = 60
ENDPOINTS = ("list page", "workspace page", "API list")
COOKIES = ("sessionid", "csrftoken")

# The team: shares of its people by role, in percent (at least one admin).
TEAM_ROLES = {"annotator": 85, "reviewer": 10, "admin": 5}
# What each role asks for after each think time, in percent. Annotators work on the
# trajectories assigned to them: they open one in the workspace, step through it (htmx
# partials) and save label edits through the API (a step's memory or summary, a subgoal's
# text); before their first edit of a trajectory, and after a 409, they read its labels for the
# version. Reviewers read workspaces of any trajectory and the lists. Admins read the lists
# and now and then fix a label of any trajectory being annotated (so an annotator's version
# can be stale: a 409, re-read, retried). Over the default team: workspace page 17 %, step
# switch 33 %, label edit 31 % (plus the reads of the labels they need), list page 12 %,
# API list 7 %.
TEAM_MIX = {
    "annotator": {
        "workspace page": 15,
        "workspace step": 35,
        "label edit (API)": 35,
        "list page": 10,
        "API list": 5,
    },
    "reviewer": {"workspace page": 35, "workspace step": 35, "list page": 20, "API list": 10},
    "admin": {"list page": 35, "API list": 35, "workspace page": 15, "label edit (API)": 15},
}
TEAM_ENDPOINTS = (
    "workspace page",
    "workspace step",
    "labels read (API)",
    "label edit (API)",
    "list page",
    "API list",
)
EDIT_ATTEMPTS = 3  # a 409 is re-read and retried this many times in all
DEFAULTS = {  # users, think, duration: per mode
    "team": (300, 5.0, 60.0),
    "other": (50, 0.0, 30.0),
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=12, help="steps per generated trajectory")
    parser.add_argument(
        "--users", type=int, help="concurrent users (default 300 in the team mode, else 50)"
    )
    parser.add_argument(
        "--duration",
        type=float,
        help="seconds of load (at most; default 60 in the team mode, after the ramp-up, else 30)",
    )
    parser.add_argument(
        "--max-requests", type=int, default=20_000, help="each/mix modes: requests (at most)"
    )
    parser.add_argument(
        "--think",
        type=float,
        help="mean seconds a user waits between requests (team mode: exponential, default 5; "
        "else uniform, default 0)",
    )
    parser.add_argument(
        "--ramp",
        type=float,
        help="team mode: seconds over which users start, not measured (default: --think)",
    )
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers")
    parser.add_argument(
        "--edits-per-s",
        type=float,
        default=0,
        help="each/mix modes: label edits per second through the API meanwhile (each one "
        "changes what the project's lists show, so their cached pages are computed again)",
    )
    parser.add_argument(
        "--no-list-cache",
        action="store_true",
        help="run the server with WAYPOINT_LIST_CACHE_S=0 (lists computed on every request)",
    )
    parser.add_argument(
        "--mode",
        choices=("team", "each", "mix", "both"),
        default="both",
        help="a labelling team with think time, each endpoint alone (one run each), all "
        "three mixed, or each then mix (default)",
    )
    parser.add_argument("--workdir", help="folder for the SQLite file and blobs (kept)")
    parser.add_argument(
        "--code",
        help="serve (and seed with) the code of this checkout, in this virtualenv "
        "(default: the checkout this script is in)",
    )
    parser.add_argument(
        "--fresh-db",
        action="store_true",
        help="start from an empty database: drop and create the PostgreSQL database "
        "DATABASE_URL names (its name must contain 'bench'), or a new SQLite file",
    )
    parser.add_argument("--prepare-into", help=argparse.SUPPRESS)  # the seeding child's answer
    args = parser.parse_args(argv)
    users, think, duration = DEFAULTS["team" if args.mode == "team" else "other"]
    args.users = users if args.users is None else args.users
    args.think = think if args.think is None else args.think
    args.duration = duration if args.duration is None else args.duration
    args.ramp = args.think if args.ramp is None else args.ramp
    if args.users < 1 or args.trajectories < 1 or args.steps < 2 or args.duration <= 0:
        parser.error("--users and --trajectories must be >= 1, --steps >= 2, --duration > 0")
    if args.think < 0 or args.edits_per_s < 0 or args.ramp < 0:
        parser.error("--think, --ramp and --edits-per-s must be >= 0")
    code = Path(args.code or REPO).resolve()
    if not (code / "manage.py").is_file() or not (code / "config").is_dir():
        parser.error(f"--code: {code} is not a Waypoint checkout (no manage.py and config/)")
    args.code = str(code)
    url = os.environ.get("DATABASE_URL", "")
    if args.fresh_db and url.startswith("postgres") and "bench" not in database_name(url):
        parser.error(f"--fresh-db drops the database: its name must contain 'bench' ({url})")
    if code != REPO and url and not args.fresh_db:
        parser.error("--code with DATABASE_URL needs --fresh-db: each checkout seeds its own")
    return args


def database_name(url: str) -> str:
    return unquote(urlsplit(url).path.lstrip("/"))


def environment(work: Path) -> dict[str, str]:
    """Production settings (DEBUG=0) on the loopback interface, without TLS."""
    env = {
        "DEBUG": "0",
        "SECRET_KEY": "bench-load-only-" + "x" * 40,
        "ALLOWED_HOSTS": f"{HOST},localhost,testserver",
        "SECURE_SSL_REDIRECT": "0",
        "WAYPOINT_VAR_DIR": str(work / "var"),
        "MEDIA_ROOT": str(work / "blobs"),
        "STATIC_ROOT": str(work / "static"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "LOG_LEVEL": "WARNING",
    }
    env["DATABASE_URL"] = os.environ.get("DATABASE_URL") or f"sqlite:///{work / 'bench.sqlite3'}"
    return env


def served(env: dict[str, str], code: Path) -> dict[str, str]:
    """The environment of a process that runs ``code``: first on the Python path."""
    return {**os.environ, **env, "PYTHONPATH": str(code)}


def commit_of(code: Path) -> str:
    """The checkout's commit, marked when it has changes not committed."""
    try:
        head = subprocess.run(
            ["git", "-C", str(code), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(code), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"
    return head + (" with uncommitted changes" if dirty else "")


# ---------------------------------------------------------------- seeding (the child process)


def prepare(args: argparse.Namespace) -> None:
    """In the child: the served code first on the path, then seed and write what the users need."""
    sys.path.insert(0, args.code)
    if args.fresh_db and os.environ["DATABASE_URL"].startswith("postgres"):
        create_database(os.environ["DATABASE_URL"], replace=True)
    data = seed(args.trajectories, args.steps, args.users if args.mode == "team" else 0)
    data["costs"] = request_costs(data)
    from django.db import connection

    import trajectories

    data["database"] = connection.vendor
    data["served from"] = str(Path(trajectories.__file__).resolve().parents[1])
    Path(args.prepare_into).write_text(json.dumps(data))


def create_database(url: str, *, replace: bool) -> None:
    """Create the database ``url`` names, empty, on its server: with ``replace`` dropped
    first (not while in use), else only if it is missing (a machine new to the bench)."""
    import psycopg
    from psycopg import sql

    name = database_name(url)
    server = urlsplit(url)._replace(path="/postgres").geturl()
    with psycopg.connect(server, autocommit=True) as conn:
        if replace:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        elif conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            return
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    print(f"database {name}: created empty", flush=True)


def seed(trajectories: int, steps: int, team: int) -> dict:
    """The bench project with its trajectories, two users (and ``team`` more for the team
    mode, annotators with trajectories assigned), a session cookie and a token each."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from fixtures.generate import generate_dataset
    from trajectories.models import Project, Status, Trajectory
    from trajectories.services import do_create_project, do_set_membership

    started = time.monotonic()
    call_command("migrate", verbosity=0, interactive=False)
    # With DEBUG=0 the pages name static files by their hashed names, from collectstatic's
    # manifest (as a deployment has; the bench fetches the pages, not the files).
    call_command("collectstatic", verbosity=0, interactive=False)
    print(f"  migrated in {time.monotonic() - started:.0f} s", flush=True)
    users = get_user_model().objects
    admin = users.filter(username="bench-admin").first() or users.create_user("bench-admin")
    annotator = users.filter(username="bench-annotator").first() or users.create_user(
        "bench-annotator"
    )
    project = Project.objects.filter(name=PROJECT_NAME).first()
    if project is not None and not has_blobs(project):
        print("the database's bench project has no blobs in this workdir: seeding again")
        project.trajectories.all().delete()  # tasks are protected while trajectories use them
        project.delete()
        project = None
    if project is None:
        project = do_create_project(PROJECT_NAME, admin)
        do_set_membership(project, annotator, "annotator", admin)
    have = project.trajectories.count()
    if have < trajectories:
        started = time.monotonic()
        print(f"seeding {trajectories - have} trajectories of {steps} steps ...", flush=True)
        generate_dataset(project, trajectories, steps=steps, actor=admin)
        print(f"  seeded in {time.monotonic() - started:.0f} s", flush=True)
    ids = list(Trajectory.objects.filter(project=project).values_list("pk", flat=True))
    editable = Trajectory.objects.filter(project=project, status=Status.ANNOTATING)
    editable_ids = sorted(editable.values_list("pk", flat=True))
    members = seed_team(project, admin, team, editable_ids) if team else []
    if connection.vendor == "postgresql":
        # Fresh statistics, as autovacuum would gather them soon: plans for 1 row are slow.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    logins = [login_of(user, project.pk) for user in (admin, annotator)]
    team_logins = []
    for user, role, assigned in members:
        team_logins.append({**login_of(user, project.pk), "role": role, "assigned": assigned})
    return {
        "project": project.pk,
        "trajectories": ids,
        "editable": editable_ids,  # labels open to edits
        "steps": steps,
        "tasks": project.tasks.count(),
        "logins": logins,
        "team": team_logins,
    }


def team_sizes(team: int) -> dict[str, int]:
    """How many people of each role a team of ``team`` has (TEAM_ROLES, one admin at least)."""
    admins = max(1, round(team * TEAM_ROLES["admin"] / 100))
    reviewers = min(team - admins, round(team * TEAM_ROLES["reviewer"] / 100))
    return {"annotator": team - admins - reviewers, "reviewer": reviewers, "admin": admins}


def people(sizes: dict[str, int]) -> str:
    return ", ".join(f"{n} {role}{'' if n == 1 else 's'}" for role, n in sizes.items())


def seed_team(project, admin, team: int, editable: list[int]) -> list[tuple]:
    """``team`` users of the project, by TEAM_ROLES; each annotator is assigned every
    A-th trajectory open to edits (A annotators), so each such trajectory has one annotator
    while there are more of them than annotators."""
    from django.contrib.auth import get_user_model

    from annotate.services import do_assign
    from trajectories.models import Trajectory
    from trajectories.services import do_set_membership

    started = time.monotonic()
    users = get_user_model().objects
    sizes = team_sizes(team)
    by_pk = Trajectory.objects.in_bulk(editable)
    members = []
    for role, count in sizes.items():
        for i in range(count):
            name = f"bench-team-{role}-{i:03d}"
            user = users.filter(username=name).first() or users.create_user(name)
            do_set_membership(project, user, role, admin)
            assigned: list[int] = []
            if role == "annotator" and editable:
                assigned = editable[i :: sizes["annotator"]] or [editable[i % len(editable)]]
                for pk in assigned:
                    do_assign(by_pk[pk], user, admin)
            members.append((user, role, assigned))
    print(
        f"  team of {team} ({people(sizes)}) in {time.monotonic() - started:.0f} s",
        flush=True,
    )
    return members


def login_of(user, project: int) -> dict[str, str]:
    """The cookies a browser sends after its first page (its session and its CSRF secret),
    and an API token."""
    from django.test import Client
    from rest_framework.authtoken.models import Token

    client = Client()
    client.force_login(user)
    client.get(f"/projects/{project}/trajectories/")  # a page sets the CSRF cookie
    token, _ = Token.objects.get_or_create(user=user)
    cookies = "; ".join(f"{n}={client.cookies[n].value}" for n in COOKIES if n in client.cookies)
    return {"cookie": cookies, "token": token.key}


def has_blobs(project) -> bool:
    """Whether blob storage has the project's files (the workspace reads UI XML from it)."""
    from django.core.files.storage import default_storage

    from trajectories.models import Screen

    screen = Screen.objects.filter(trajectory__project=project, ui_xml__isnull=False).first()
    return screen is None or default_storage.exists(screen.ui_xml.storage_name)


def request_costs(data: dict) -> dict[str, tuple[int, int]]:
    """Queries and bytes of one request per endpoint read, in this process (Django's test
    client, signed in as the annotator): the three endpoints, a step switch and a trajectory's
    labels."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(get_user_model().objects.get(username="bench-annotator"))
    rng = random.Random(0)
    reads = {name: (path, {}) for name, path in endpoints(data, rng).items()}
    trajectory = rng.choice(data["editable"] or data["trajectories"])
    reads["workspace step"] = (
        f"/trajectories/{trajectory}/workspace/?step=1",
        {"HTTP_HX_REQUEST": "true"},
    )
    reads["labels read (API)"] = (f"/api/v1/trajectories/{trajectory}/labels/", {})
    costs = {}
    for name, (path, headers) in reads.items():
        client.get(path, **headers)  # warm
        with CaptureQueriesContext(connection) as captured:
            response = client.get(path, **headers)
        assert response.status_code == 200, (path, response.status_code)
        costs[name] = (len(captured), len(response.content))
    return costs


def endpoints(data: dict, rng: random.Random) -> dict[str, str]:
    """One request per endpoint, on a random page or trajectory."""
    trajectory = rng.choice(data["trajectories"])
    return {
        "list page": list_page(data, rng),
        "workspace page": f"/trajectories/{trajectory}/workspace/?step={rng.randint(0, 5)}",
        "API list": api_list_page(data, rng),
    }


def list_page(data: dict, rng: random.Random) -> str:
    pages = max(1, len(data["trajectories"]) // 25)
    return f"/projects/{data['project']}/trajectories/?page={rng.randint(1, pages)}"


def api_list_page(data: dict, rng: random.Random) -> str:
    pages = max(1, len(data["trajectories"]) // 50)  # the API's pages hold 50
    return f"/api/v1/projects/{data['project']}/trajectories/?page={rng.randint(1, pages)}"


def seed_with(args: argparse.Namespace, env: dict[str, str], code: Path, work: Path) -> dict:
    """Seed in a child process that runs the served code (its migrations, its services)."""
    answer = work / "seeded.json"
    command = [sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]]
    command += ["--code", str(code), "--prepare-into", str(answer)]  # absolute: cwd changes
    subprocess.run(command, cwd=code, env=served(env, code), check=True)
    data = json.loads(answer.read_text())
    if Path(data["served from"]) != code:
        raise RuntimeError(f"seeded with the code in {data['served from']}, not {code}")
    return data


# ---------------------------------------------------------------- the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def start_gunicorn(
    env: dict[str, str], port: int, workers: int, log: Path, code: Path
) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "config.wsgi:application",
        "--bind",
        f"{HOST}:{port}",
        "--workers",
        str(workers),
        "--timeout",
        "120",
    ]
    with open(log, "wb") as out:
        server = subprocess.Popen(
            command, cwd=code, env=served(env, code), stdout=out, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited:\n{log.read_text()}")
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise RuntimeError(f"gunicorn did not listen on {HOST}:{port}:\n{log.read_text()}")


def stop(server: subprocess.Popen) -> None:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


# ---------------------------------------------------------------- where the CPU went


def cpu_snapshot(server_pid: int) -> dict[str, float] | None:
    """CPU seconds so far of the machine (busy and all), gunicorn (master and workers),
    PostgreSQL's processes and this load generator, from /proc (Linux); None elsewhere."""
    try:
        with open("/proc/stat") as f:
            jiffies = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    idle = jiffies[3] + jiffies[4]  # idle and iowait
    shares = {"machine": sum(jiffies) / tick, "busy": (sum(jiffies) - idle) / tick}
    shares.update(gunicorn=0.0, postgres=0.0)
    postgres: dict[int, tuple[int, float, float]] = {}  # pid -> parent, used, children's
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # the process ended
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        ppid, used = int(fields[1]), (int(fields[11]) + int(fields[12])) / tick
        if int(entry) == server_pid or ppid == server_pid:
            shares["gunicorn"] += used
        elif name in ("postgres", "postmaster"):
            postgres[int(entry)] = (ppid, used, (int(fields[13]) + int(fields[14])) / tick)
    for ppid, used, children in postgres.values():
        # A backend that ended (a connection older than CONN_MAX_AGE is opened again) left its
        # CPU to its parent's count of children's time.
        shares["postgres"] += used + (children if ppid not in postgres else 0)
    shares["load generator"] = time.process_time()
    return shares


def cpu_shares(before: dict | None, after: dict | None, requests: int = 0) -> str:
    """Who used the cores during the run, as a share of the machine's capacity; with the
    number of requests sent, the load generator's CPU per request."""
    if not before or not after:
        return "CPU shares: not available (no /proc)"
    capacity = after["machine"] - before["machine"]
    used = {k: 100 * (after[k] - before[k]) / capacity for k in after if k != "machine"}
    others = used["busy"] - used["gunicorn"] - used["postgres"] - used["load generator"]
    generator = after["load generator"] - before["load generator"]
    per_request = f" ({1000 * generator / requests:.2f} ms of CPU a request)" if requests else ""
    return (
        f"CPU, % of the {os.cpu_count()} cores during the run: busy {used['busy']:.0f}, "
        f"gunicorn {used['gunicorn']:.0f}, PostgreSQL {used['postgres']:.0f}, "
        f"load generator {used['load generator']:.1f}{per_request}, other {max(others, 0):.0f}"
    )


# ---------------------------------------------------------------- the users


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    conflicts: int = 0  # 409: someone else edited first (an answer, not an error)
    statuses: dict[str, int] = field(default_factory=dict)

    def add(self, status_text: str, ms: float) -> None:
        self.latencies.append(ms)
        self.statuses[status_text] = self.statuses.get(status_text, 0) + 1
        if status_text == "409":
            self.conflicts += 1
        elif status_text != "200":
            self.errors += 1


async def get(port: int, path: str, headers: dict[str, str]) -> int:
    """One GET over a fresh connection (gunicorn's sync workers close it): the status code."""
    return (await send(port, "GET", path, headers))[0]


class _Exchange(asyncio.Protocol):
    """One request and its whole answer on a connection of its own, read as it arrives: the
    load generator shares the server's cores, so it does as little per request as it can."""

    def __init__(self, request: bytes, done: asyncio.Future) -> None:
        self.request, self.done, self.chunks = request, done, []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)

    def eof_received(self) -> bool:
        return False  # close: the server has said all it will

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            if exc is not None:
                self.done.set_exception(exc)
            else:
                self.done.set_result(b"".join(self.chunks))


async def send(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, bytes]:
    """One request over a fresh connection: the status code and the body of the answer."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    transport, _ = await loop.create_connection(lambda: _Exchange(request, done), HOST, port)
    try:
        answer = await done
    finally:
        transport.close()
    if not answer.startswith(b"HTTP/1."):
        raise ConnectionError("no HTTP answer")
    return int(answer[9:12]), answer.partition(b"\r\n\r\n")[2]


async def editor(
    port: int, data: dict, deadline: float, per_s: float, tally: Tally, rng: random.Random
) -> None:
    """An admin editing step labels through the API, ``per_s`` times a second on average;
    each edit raises the trajectory's version, which the API list shows."""
    headers = {"Authorization": f"Token {data['logins'][0]['token']}"}
    versions: dict[int, int] = {}
    while time.monotonic() < deadline:
        await asyncio.sleep(rng.expovariate(per_s))
        trajectory = rng.choice(data["editable"])
        base = f"/api/v1/trajectories/{trajectory}"
        if trajectory not in versions:
            status, body = await send(port, "GET", f"{base}/labels/", headers)
            versions[trajectory] = json.loads(body).get("version", 0) if status == 200 else 0
        edit = json.dumps({"version": versions[trajectory], "memory": f"bench {rng.random()}"})
        started = time.perf_counter()
        try:
            status, body = await asyncio.wait_for(
                send(port, "PATCH", f"{base}/step-labels/0/", headers, edit.encode()),
                REQUEST_TIMEOUT_S,
            )
        except (OSError, TimeoutError, ConnectionError) as exc:
            status_text = type(exc).__name__
        else:
            status_text = str(status)
            with contextlib.suppress(ValueError, KeyError, TypeError):
                # A 200 and a 409 (someone else edited) both name the version to send next.
                versions[trajectory] = json.loads(body)["version"]
            if status not in (200, 409):
                print(f"label edit: {status} {body[:200]!r}", flush=True)
        tally.add(status_text, (time.perf_counter() - started) * 1000)


async def user(
    n: int,
    port: int,
    data: dict,
    deadline: float,
    budget: list[int],
    tallies: dict[str, Tally],
    think: float = 0,
    which: tuple[str, ...] = ENDPOINTS,
) -> None:
    rng = random.Random(n)
    login = data["logins"][n % len(data["logins"])]
    if think:
        # Users who pause also arrive spread out: 50 list pages asked in the same instant
        # at the start measured that burst, not the steady state.
        await asyncio.sleep(rng.uniform(0, 2 * think))
    while time.monotonic() < deadline and budget[0] > 0:
        for name, path in endpoints(data, rng).items():
            if name not in which:
                continue
            if time.monotonic() >= deadline or budget[0] <= 0:
                return
            budget[0] -= 1
            if name.startswith("API"):
                headers = {"Authorization": f"Token {login['token']}"}
            else:
                headers = {"Cookie": login["cookie"]}
            started = time.perf_counter()
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT_S):  # no task per request
                    status = await get(port, path, headers)
            except (OSError, TimeoutError, ConnectionError) as exc:
                status_text = type(exc).__name__
            else:
                status_text = str(status)
            tallies[name].add(status_text, (time.perf_counter() - started) * 1000)
            if think:
                await asyncio.sleep(rng.uniform(0, 2 * think))


@dataclass
class Run:
    """One stretch of load: what each endpoint answered, and where the CPU went."""

    tallies: dict[str, Tally]
    elapsed: float
    cpu: str


async def drive(
    port: int,
    data: dict,
    users: int,
    duration: float,
    max_requests: int,
    think: float,
    probe=lambda: None,
    edits_per_s: float = 0,
    which: tuple[str, ...] = ENDPOINTS,
) -> Run:
    """``users`` users for ``duration`` seconds, each asking for the endpoints ``which`` in
    turn (one of them: that endpoint alone)."""
    tallies = {name: Tally() for name in which}
    # Warm every worker (imports, template caches, first connections) outside the figures.
    warm = {name: Tally() for name in tallies}
    await asyncio.gather(
        *(
            user(1000 + i, port, data, time.monotonic() + 60, [3], warm, which=which)
            for i in range(6)
        )
    )
    before = probe()
    started = time.monotonic()
    budget = [max_requests]
    editing = []
    if edits_per_s:
        tallies["label edit (API)"] = Tally()
        editing.append(
            editor(
                port,
                data,
                started + duration,
                edits_per_s,
                tallies["label edit (API)"],
                random.Random(7),
            )
        )
    await asyncio.gather(
        *(
            user(i, port, data, started + duration, budget, tallies, think, which)
            for i in range(users)
        ),
        *editing,
    )
    elapsed = time.monotonic() - started
    requests = sum(len(t.latencies) for t in tallies.values())
    return Run(tallies, elapsed, cpu_shares(before, probe(), requests))


# ---------------------------------------------------------------- the team


@dataclass
class Window:
    """The stretch whose requests count: after the ramp-up, for the run's duration."""

    start: float
    end: float


@dataclass
class Member:
    """One person of the team, and where they are in their work."""

    n: int
    role: str
    login: dict
    assigned: list[int]  # trajectories they may edit (admins: every one open to edits)
    trajectory: int = 0  # the one open in their workspace
    step: int = 0
    version: int | None = None  # of ``trajectory``'s labels, as last read
    subgoals: list[int] = field(default_factory=list)
    rng: random.Random = field(default_factory=random.Random)


class Team:
    """The team's requests against one server, timed into one tally per endpoint."""

    def __init__(self, port: int, data: dict, window: Window, think: float) -> None:
        self.port, self.data, self.window, self.think = port, data, window, think
        self.tallies = {name: Tally() for name in TEAM_ENDPOINTS}
        self.gave_up = 0  # edits still stale after EDIT_ATTEMPTS tries

    def members(self, count: int) -> list[Member]:
        logins = self.data["team"]
        if len(logins) < count:
            raise RuntimeError(f"the seeded team has {len(logins)} people, not {count}")
        found = []
        for n, login in enumerate(logins[:count]):
            assigned = login["assigned"] if login["role"] == "annotator" else []
            if login["role"] == "admin":
                assigned = self.data["editable"]
            member = Member(n, login["role"], login, assigned, rng=random.Random(n))
            member.trajectory = member.rng.choice(assigned or self.data["trajectories"])
            found.append(member)
        return found

    async def request(
        self, name: str, member: Member, method: str, path: str, body: bytes = b""
    ) -> tuple[int | None, bytes]:
        """One request as ``member``, counted under ``name`` if sent within the window."""
        if name.endswith("(API)") or name == "API list":
            headers = {"Authorization": f"Token {member.login['token']}"}
        else:
            headers = {"Cookie": member.login["cookie"]}
        if name == "workspace step":
            headers["HX-Request"] = "true"  # the workspace's step switch asks for the panels
        counted = self.window.start <= time.monotonic() < self.window.end
        started = time.perf_counter()
        status, answer = None, b""
        try:
            async with asyncio.timeout(REQUEST_TIMEOUT_S):
                status, answer = await send(self.port, method, path, headers, body)
        except (OSError, TimeoutError, ConnectionError) as exc:
            status_text = type(exc).__name__
        else:
            status_text = str(status)
        if counted:
            self.tallies[name].add(status_text, (time.perf_counter() - started) * 1000)
        return status, answer

    async def act(self, member: Member, what: str) -> None:
        """One thing a person does between two pauses."""
        rng, data = member.rng, self.data
        if what == "workspace page":
            # Open a trajectory: annotators one of theirs, the others any.
            pool = member.assigned if member.role == "annotator" else data["trajectories"]
            member.trajectory = rng.choice(pool or data["trajectories"])
            member.step, member.version = rng.randrange(data["steps"]), None
            path = f"/trajectories/{member.trajectory}/workspace/?step={member.step}"
            await self.request(what, member, "GET", path)
        elif what == "workspace step":
            member.step = (member.step + 1) % data["steps"]  # the next step, mostly
            path = f"/trajectories/{member.trajectory}/workspace/?step={member.step}"
            await self.request(what, member, "GET", path)
        elif what == "list page":
            await self.request(what, member, "GET", list_page(data, rng))
        elif what == "API list":
            await self.request(what, member, "GET", api_list_page(data, rng))
        else:
            await self.edit(member)

    async def edit(self, member: Member) -> None:
        """A label edit through the API, on the version last read; a 409 (someone else
        edited first) is answered by reading the labels again and retrying."""
        rng = member.rng
        if member.trajectory not in member.assigned:
            if not member.assigned:
                return  # nothing open to edits in this project
            member.trajectory, member.version = rng.choice(member.assigned), None
        base = f"/api/v1/trajectories/{member.trajectory}"
        kind = rng.choices(("memory", "summary", "subgoal"), (40, 30, 30))[0]
        text, which = f"bench {kind} {rng.randrange(10**6)}", rng.random()
        for _ in range(EDIT_ATTEMPTS):  # the same change, on the labels read again
            if member.version is None and not await self.read_labels(member, base):
                return
            if kind == "subgoal" and member.subgoals:
                subgoal = member.subgoals[int(which * len(member.subgoals))]
                path = f"{base}/subgoals/{subgoal}/"
                edit = {"version": member.version, "text": text}
            else:
                path = f"{base}/step-labels/{member.step}/"
                edit = {
                    "version": member.version,
                    "summary" if kind == "summary" else "memory": text,
                }
            status, answer = await self.request(
                "label edit (API)", member, "PATCH", path, json.dumps(edit).encode()
            )
            if status == 200:
                self.learn(member, answer)
                return
            member.version = None
            if status != 409:
                return  # an error, counted
        if self.window.start <= time.monotonic() < self.window.end:
            self.gave_up += 1

    async def read_labels(self, member: Member, base: str) -> bool:
        status, answer = await self.request("labels read (API)", member, "GET", f"{base}/labels/")
        return status == 200 and self.learn(member, answer)

    @staticmethod
    def learn(member: Member, answer: bytes) -> bool:
        """Keep the version and subgoals a labels answer names."""
        try:
            labels = json.loads(answer)
            member.version = int(labels["version"])
            member.subgoals = [s["id"] for s in labels.get("subgoals", [])]
        except (ValueError, KeyError, TypeError):
            member.version = None
            return False
        return True

    async def work(self, member: Member, ramp: float) -> None:
        """Start within the ramp-up, then act and pause ~ Exp(think) until the window ends."""
        rng = member.rng
        mix = TEAM_MIX[member.role]
        kinds, weights = list(mix), list(mix.values())
        await asyncio.sleep(rng.uniform(0, ramp))
        while time.monotonic() < self.window.end:
            await self.act(member, rng.choices(kinds, weights)[0])
            if self.think:
                pause = rng.expovariate(1 / self.think)
                await asyncio.sleep(min(pause, max(0.0, self.window.end - time.monotonic())))


async def drive_team(port: int, data: dict, args: argparse.Namespace, probe) -> tuple[Run, Team]:
    """The team at work: a ramp-up, then ``args.duration`` seconds measured."""
    # Warm every worker (imports, template caches, first connections) outside the figures.
    warm = Team(port, data, Window(0, 0), 0)  # counts nothing

    async def warm_up(member: Member) -> None:
        for what in ("workspace page", "workspace step", "list page", "API list"):
            await warm.act(member, what)

    await asyncio.gather(*(warm_up(m) for m in warm.members(min(6, args.users))))
    now = time.monotonic()
    window = Window(now + args.ramp, now + args.ramp + args.duration)
    team = Team(port, data, window, args.think)
    snapshots = []

    async def watch() -> None:
        await asyncio.sleep(window.start - time.monotonic())
        snapshots.append(probe())
        await asyncio.sleep(window.end - time.monotonic())
        snapshots.append(probe())

    await asyncio.gather(watch(), *(team.work(m, args.ramp) for m in team.members(args.users)))
    requests = sum(len(t.latencies) for t in team.tallies.values())
    return Run(team.tallies, args.duration, cpu_shares(*snapshots, requests)), team


# ---------------------------------------------------------------- the figures


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def header(args, data, code: Path) -> str:
    think = (
        f"think ~ Exp(mean {args.think:g} s)" if args.mode == "team" else f"think {args.think:g} s"
    )
    return (
        f"code {code} ({commit_of(code)})\n"
        f"{args.users} users ({think}), {args.duration:g} s a run, "
        f"gunicorn {args.workers} workers, DEBUG=0, {data['database']}, "
        f"{len(data['trajectories'])} trajectories ({len(data['editable'])} open to edits), "
        f"{data['tasks']} tasks, list cache {'off' if args.no_list_cache else 'on'}"
        + ("" if args.mode == "team" else f", {args.edits_per_s:g} label edits/s")
    )


def report(title: str, runs: list[Run], costs: dict, target=None) -> bool:
    """A table of the runs' endpoints; whether every one met its target without errors."""
    print(f"\n{title}\n")
    print(
        "| endpoint | requests | req/s | errors | 409 | p50 ms | p95 ms | p99 ms | queries "
        "| KiB | target |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    ok = True
    for run in runs:
        for name, tally in run.tallies.items():
            p95 = percentile(tally.latencies, 95)
            if target is not None:
                limit = target
            else:
                limit = API_LIST_TARGET_MS if name == "API list" else PAGE_TARGET_MS
            met = p95 <= limit and tally.errors == 0 and bool(tally.latencies)
            ok = ok and met
            queries, size = costs.get(name, ("-", None))
            verdict = "ok" if met else "MISSED" if tally.latencies else "MISSED (no requests)"
            print(
                f"| {name} | {len(tally.latencies)} | {len(tally.latencies) / run.elapsed:.1f} "
                f"| {tally.errors} | {tally.conflicts} "
                f"| {percentile(tally.latencies, 50):.0f} | {p95:.0f} "
                f"| {percentile(tally.latencies, 99):.0f} | {queries} "
                f"| {'-' if size is None else f'{size / 1024:.1f}'} "
                f"| p95 <= {limit} {verdict} |"
            )
            if tally.errors:
                print(f"  answers: {tally.statuses}")
        if len(run.tallies) > 1:
            total = sum(len(t.latencies) for t in run.tallies.values())
            errors = sum(t.errors for t in run.tallies.values())
            print(f"| all | {total} | {total / run.elapsed:.1f} | {errors} | | | | | | | |")
    for run in runs:
        print(f"\n{', '.join(run.tallies)}: {run.cpu}")
    return ok


def main() -> None:
    args = parse_args()
    if args.prepare_into:
        prepare(args)
        return
    code = Path(args.code)
    keep = bool(args.workdir)
    if args.workdir:
        work = Path(args.workdir).resolve()
    elif os.environ.get("DATABASE_URL") and not args.fresh_db:
        # The database outlives the run, so its blobs must too.
        work, keep = REPO / "var" / "bench-load", True
    else:
        work = Path(tempfile.mkdtemp(prefix="wp-load-"))
    if args.fresh_db and keep:
        for stale in ("bench.sqlite3", "bench.sqlite3-wal", "bench.sqlite3-shm", "blobs"):
            path = work / stale
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    env = environment(work)
    if args.no_list_cache:
        env["WAYPOINT_LIST_CACHE_S"] = "0"
    print(f"serving {code} ({commit_of(code)}); data in {work}", flush=True)
    try:
        data = seed_with(args, env, code, work)
        port = free_port()
        server = start_gunicorn(env, port, args.workers, work / "gunicorn.log", code)
        probe = lambda: cpu_snapshot(server.pid)  # noqa: E731

        def load(which: tuple[str, ...]) -> Run:
            return asyncio.run(
                drive(
                    port,
                    data,
                    args.users,
                    args.duration,
                    args.max_requests,
                    args.think,
                    probe=probe,
                    edits_per_s=args.edits_per_s,
                    which=which,
                )
            )

        try:
            team = asyncio.run(drive_team(port, data, args, probe)) if args.mode == "team" else None
            each = args.mode in ("each", "both")
            alone = [load((name,)) for name in ENDPOINTS] if each else []
            mixed = [load(ENDPOINTS)] if args.mode in ("mix", "both") else []
        finally:
            stop(server)
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    print("\n" + header(args, data, code))
    costs = {name: tuple(cost) for name, cost in data["costs"].items()}
    ok = True
    if team:
        run, at_work = team
        sizes = team_sizes(args.users)
        ok &= report(
            f"Team: {people(sizes)}, each pausing "
            f"~ Exp(mean {args.think:g} s) between requests; started over {args.ramp:g} s, "
            f"then {args.duration:g} s measured",
            [run],
            costs,
            target=TEAM_TARGET_MS,
        )
        edits = run.tallies["label edit (API)"]
        print(
            f"label edits: {edits.statuses.get('200', 0)} saved, {edits.conflicts} answered "
            f"409 (labels read again, edit retried), {at_work.gave_up} given up after "
            f"{EDIT_ATTEMPTS} tries"
        )
    if alone:
        ok &= report("Each endpoint alone: every user asks for it again and again", alone, costs)
    if mixed:
        ok &= report(
            "Mixed: every user asks for the list page, a workspace and the API list in turn",
            mixed,
            costs,
        )
    print("\nOK" if ok else "\nMISSED A TARGET")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
