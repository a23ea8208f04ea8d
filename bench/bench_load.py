"""Many users at once against gunicorn: `python bench/bench_load.py`.

Seeds a project with N generated trajectories (default 1,000, which name 782 distinct tasks) into
the database named by DATABASE_URL, or a throwaway SQLite file; starts gunicorn (3 sync workers,
DEBUG=0) on the loopback interface; then C concurrent users (default 50) load it, for a bounded
time and number of requests per run:

- each endpoint alone (``--mode each``): one run per endpoint, in which every user asks for the
  trajectory list page (a random page), the annotation workspace (a random trajectory and
  step) or the API list of trajectories (a random page) again and again;
- mixed (``--mode mix``): one run in which every user asks for the three in turn.

``--mode both`` (the default) does both. Users do not pause between requests unless --think
gives a mean pause: without it, 50 users keep 50 requests in flight at all times, so a
request's wait is mostly the work queued ahead of it; in the mixed run that work is the same
for every endpoint. Prints, per endpoint: requests, requests per second, errors, p50, p95 and
p99 latency in ms, and the queries and bytes of one request; and per run where the CPU went.

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

Seeding is idempotent: a database that already holds the bench project is reused as it is. With
DATABASE_URL the blobs go to var/bench-load/ (kept, like the database) unless --workdir names
another folder.
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PROJECT_NAME = "bench-load"
HOST = "127.0.0.1"  # loopback only: the bench never leaves the machine
PAGE_TARGET_MS = 500
API_LIST_TARGET_MS = 250
REQUEST_TIMEOUT_S = 60
ENDPOINTS = ("list page", "workspace page", "API list")
COOKIES = ("sessionid", "csrftoken")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=12, help="steps per generated trajectory")
    parser.add_argument("--users", type=int, default=50, help="concurrent users")
    parser.add_argument("--duration", type=float, default=30, help="seconds of load (at most)")
    parser.add_argument("--max-requests", type=int, default=20_000, help="requests (at most)")
    parser.add_argument(
        "--think", type=float, default=0, help="mean seconds a user waits between requests"
    )
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers")
    parser.add_argument(
        "--edits-per-s",
        type=float,
        default=0,
        help="label edits per second through the API meanwhile (each one changes what the "
        "project's lists show, so their cached pages are computed again)",
    )
    parser.add_argument(
        "--no-list-cache",
        action="store_true",
        help="run the server with WAYPOINT_LIST_CACHE_S=0 (lists computed on every request)",
    )
    parser.add_argument(
        "--mode",
        choices=("each", "mix", "both"),
        default="both",
        help="each endpoint alone (one run each), all three mixed, or both (default)",
    )
    parser.add_argument("--workdir", help="folder for the SQLite file and blobs (kept)")
    args = parser.parse_args()
    if args.users < 1 or args.trajectories < 1 or args.steps < 2 or args.duration <= 0:
        parser.error("--users and --trajectories must be >= 1, --steps >= 2, --duration > 0")
    if args.think < 0 or args.edits_per_s < 0:
        parser.error("--think and --edits-per-s must be >= 0")
    return args


def environment(work: Path) -> dict[str, str]:
    """Production settings (DEBUG=0) on the loopback interface, without TLS."""
    env = {
        "DEBUG": "0",
        "SECRET_KEY": "bench-load-only-" + "x" * 40,
        "ALLOWED_HOSTS": f"{HOST},localhost,testserver",
        "SECURE_SSL_REDIRECT": "0",
        "WAYPOINT_VAR_DIR": str(work / "var"),
        "MEDIA_ROOT": str(work / "blobs"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "LOG_LEVEL": "WARNING",
    }
    env["DATABASE_URL"] = os.environ.get("DATABASE_URL") or f"sqlite:///{work / 'bench.sqlite3'}"
    return env


# ---------------------------------------------------------------- seeding


def seed(trajectories: int, steps: int) -> dict:
    """The bench project with its trajectories, two users, a session cookie and a token each."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from fixtures.generate import generate_dataset
    from trajectories.models import Project, Status, Trajectory
    from trajectories.services import do_create_project, do_set_membership

    call_command("migrate", verbosity=0, interactive=False)
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
        if connection.vendor == "postgresql":
            # Fresh statistics, as autovacuum would gather them soon: plans for 1 row are slow.
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
    ids = list(Trajectory.objects.filter(project=project).values_list("pk", flat=True))
    editable = Trajectory.objects.filter(project=project, status=Status.ANNOTATING)
    logins = []
    for user in (admin, annotator):
        client = Client()
        client.force_login(user)
        client.get(f"/projects/{project.pk}/trajectories/")  # a page sets the CSRF cookie
        token, _ = Token.objects.get_or_create(user=user)
        # The cookies a browser sends after its first page: its session and its CSRF secret.
        cookies = "; ".join(f"{name}={client.cookies[name].value}" for name in COOKIES)
        logins.append({"cookie": cookies, "token": token.key})
    return {
        "project": project.pk,
        "trajectories": ids,
        "editable": list(editable.values_list("pk", flat=True)),  # labels open to edits
        "tasks": project.tasks.count(),
        "logins": logins,
    }


def has_blobs(project) -> bool:
    """Whether blob storage has the project's files (the workspace reads UI XML from it)."""
    from django.core.files.storage import default_storage

    from trajectories.models import Screen

    screen = Screen.objects.filter(trajectory__project=project, ui_xml__isnull=False).first()
    return screen is None or default_storage.exists(screen.ui_xml.storage_name)


def request_costs(data: dict) -> dict[str, tuple[int, int]]:
    """Queries and bytes of one request per endpoint, in this process (Django's test client)."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(get_user_model().objects.get(username="bench-annotator"))
    costs = {}
    for name, path in endpoints(data, random.Random(0)).items():
        client.get(path)  # warm
        with CaptureQueriesContext(connection) as captured:
            response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        costs[name] = (len(captured), len(response.content))
    return costs


def endpoints(data: dict, rng: random.Random) -> dict[str, str]:
    """One request per endpoint, on a random page or trajectory."""
    project, ids = data["project"], data["trajectories"]
    pages = max(1, len(ids) // 25)
    api_pages = max(1, pages // 2)  # the API's pages hold 50
    trajectory = rng.choice(ids)
    return {
        "list page": f"/projects/{project}/trajectories/?page={rng.randint(1, pages)}",
        "workspace page": f"/trajectories/{trajectory}/workspace/?step={rng.randint(0, 5)}",
        "API list": f"/api/v1/projects/{project}/trajectories/?page={rng.randint(1, api_pages)}",
    }


# ---------------------------------------------------------------- the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def start_gunicorn(env: dict[str, str], port: int, workers: int, log: Path) -> subprocess.Popen:
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
            command, cwd=REPO, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
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


def cpu_shares(before: dict | None, after: dict | None) -> str:
    """Who used the cores during the run, as a share of the machine's capacity."""
    if not before or not after:
        return "CPU shares: not available (no /proc)"
    capacity = after["machine"] - before["machine"]
    used = {k: 100 * (after[k] - before[k]) / capacity for k in after if k != "machine"}
    others = used["busy"] - used["gunicorn"] - used["postgres"] - used["load generator"]
    return (
        f"CPU, % of the {os.cpu_count()} cores during the run: busy {used['busy']:.0f}, "
        f"gunicorn {used['gunicorn']:.0f}, PostgreSQL {used['postgres']:.0f}, "
        f"load generator {used['load generator']:.0f}, other {max(others, 0):.0f}"
    )


# ---------------------------------------------------------------- the users


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    statuses: dict[str, int] = field(default_factory=dict)


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
            if status != 200:
                print(f"label edit: {status} {body[:200]!r}", flush=True)
        tally.latencies.append((time.perf_counter() - started) * 1000)
        tally.statuses[status_text] = tally.statuses.get(status_text, 0) + 1
        if status_text != "200":
            tally.errors += 1


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
            tally = tallies[name]
            started = time.perf_counter()
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT_S):  # no task per request
                    status = await get(port, path, headers)
            except (OSError, TimeoutError, ConnectionError) as exc:
                status_text = type(exc).__name__
            else:
                status_text = str(status)
            tally.latencies.append((time.perf_counter() - started) * 1000)
            tally.statuses[status_text] = tally.statuses.get(status_text, 0) + 1
            if status_text != "200":
                tally.errors += 1
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
    return Run(tallies, elapsed, cpu_shares(before, probe()))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def header(args, data, db: str) -> str:
    return (
        f"{args.users} users (think {args.think:g} s), {args.duration:g} s a run, "
        f"gunicorn {args.workers} workers, DEBUG=0, {db}, "
        f"{len(data['trajectories'])} trajectories, {data['tasks']} tasks, "
        f"list cache {'off' if args.no_list_cache else 'on'}, "
        f"{args.edits_per_s:g} label edits/s"
    )


def report(title: str, runs: list[Run], costs: dict) -> bool:
    """A table of the runs' endpoints; whether every one met its target without errors."""
    print(f"\n{title}\n")
    print(
        "| endpoint | requests | req/s | errors | p50 ms | p95 ms | p99 ms | queries | KiB "
        "| target |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    ok = True
    for run in runs:
        for name, tally in run.tallies.items():
            p95 = percentile(tally.latencies, 95)
            target = API_LIST_TARGET_MS if name == "API list" else PAGE_TARGET_MS
            met = p95 <= target and tally.errors == 0
            ok = ok and met
            queries, size = costs.get(name, (0, 0))
            print(
                f"| {name} | {len(tally.latencies)} | {len(tally.latencies) / run.elapsed:.1f} "
                f"| {tally.errors} | {percentile(tally.latencies, 50):.0f} | {p95:.0f} "
                f"| {percentile(tally.latencies, 99):.0f} | {queries} | {size / 1024:.1f} "
                f"| p95 <= {target} {'ok' if met else 'MISSED'} |"
            )
            if tally.errors:
                print(f"  answers: {tally.statuses}")
    for run in runs:
        print(f"\n{', '.join(run.tallies)}: {run.cpu}")
    return ok


def main() -> None:
    args = parse_args()
    if args.workdir:
        work = Path(args.workdir)
    elif os.environ.get("DATABASE_URL"):
        # The database outlives the run, so its blobs must too.
        work = REPO / "var" / "bench-load"
        args.workdir = str(work)
    else:
        work = Path(tempfile.mkdtemp(prefix="wp-load-"))
    work.mkdir(parents=True, exist_ok=True)
    env = environment(work)
    if args.no_list_cache:
        env["WAYPOINT_LIST_CACHE_S"] = "0"
    os.environ.update(env)
    data = seed(args.trajectories, args.steps)
    costs = request_costs(data)
    from django.db import connection

    db = connection.vendor
    connection.close()
    port = free_port()
    server = start_gunicorn(env, port, args.workers, work / "gunicorn.log")

    def load(which: tuple[str, ...]) -> Run:
        return asyncio.run(
            drive(
                port,
                data,
                args.users,
                args.duration,
                args.max_requests,
                args.think,
                probe=lambda: cpu_snapshot(server.pid),
                edits_per_s=args.edits_per_s,
                which=which,
            )
        )

    try:
        alone = [load((name,)) for name in ENDPOINTS] if args.mode in ("each", "both") else []
        mixed = [load(ENDPOINTS)] if args.mode in ("mix", "both") else []
    finally:
        stop(server)
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    print("\n" + header(args, data, db))
    ok = True
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
