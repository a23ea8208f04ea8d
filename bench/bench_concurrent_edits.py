"""Concurrent editors against a real server: `python bench/bench_concurrent_edits.py`.

Starts Waypoint on loopback (gunicorn with 3 workers when it is installed, as in production,
else `manage.py runserver`), then N editors (threads, one user and API token each) edit the
same trajectory's step labels through the labels API as fast as they can: read the version,
PATCH a step's memory text with it, and on a 409 carry on with the version the answer names.

It prints, for each number of editors, the requests sent and how many answered 2xx, 409
(someone edited first: expected) and 5xx (must be 0), then checks that no accepted edit was
lost (the trajectory's version went up once per 2xx).

Uses a throwaway SQLite database unless DATABASE_URL is set (e.g. a PostgreSQL database
created for the benchmark: its tables are created by `migrate`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("DATABASE_URL", f"sqlite:///{work / 'bench.sqlite3'}")
    env.setdefault("MEDIA_ROOT", str(work / "media"))
    env.setdefault("WAYPOINT_VAR_DIR", str(work / "var"))
    env.update(
        DEBUG="0",
        SECRET_KEY="bench-only-secret",
        SECURE_SSL_REDIRECT="0",
        ALLOWED_HOSTS="127.0.0.1",
        LOG_LEVEL="WARNING",
    )
    return env


def prepare(env: dict[str, str], editors: int) -> tuple[int, list[str]]:
    """Migrate, create the editors (project admins) and one generated trajectory."""
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from fixtures.generate import generate_record
    from trajectories.models import Role, Trajectory
    from trajectories.services import do_create_project, do_import_trajectory, do_set_membership

    call_command("migrate", verbosity=0, interactive=False)
    users = get_user_model().objects
    owner = users.create_user(f"owner-{time.time_ns()}")
    project = do_create_project("Concurrent edits", owner)
    tokens = []
    for i in range(editors):
        user = users.create_user(f"editor-{i}-{time.time_ns()}")
        do_set_membership(project, user, Role.ADMIN, owner)
        tokens.append(Token.objects.create(user=user).key)
    trajectory, _ = do_import_trajectory(project, generate_record(1, steps=12))
    Trajectory.objects.filter(pk=trajectory.pk).update(status="annotating")
    from django.db import connections

    connections.close_all()
    return trajectory.pk, tokens


def start_server(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    if _has("gunicorn"):
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "3",
            "--threads",
            "4",
        ]
    else:
        command = [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server did not start:\n{log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the server did not listen within 60 s")


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def call(base: str, method: str, path: str, token: str, body: dict | None = None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        base + path,
        data=data,
        method=method,
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        payload = exc.read()
        try:
            return exc.code, json.loads(payload)
        except ValueError:
            return exc.code, {"detail": payload[:200].decode(errors="replace")}


def run_editors(
    base: str, trajectory_id: int, tokens: list[str], edits_each: int
) -> tuple[Counter, list[float]]:
    """Each editor sends ``edits_each`` PATCHes; returns the status counts and latencies."""
    counts: Counter = Counter()
    latencies: list[float] = []
    lock = threading.Lock()
    start = threading.Barrier(len(tokens))

    def editor(n: int, token: str) -> None:
        _status, labels = call(base, "GET", f"/api/v1/trajectories/{trajectory_id}/labels/", token)
        version = labels.get("version", 0)
        start.wait()
        for i in range(edits_each):
            t0 = time.perf_counter()
            code, body = call(
                base,
                "PATCH",
                f"/api/v1/trajectories/{trajectory_id}/step-labels/{(n + i) % 12}/",
                token,
                {"version": version, "memory": f"editor {n} edit {i}"},
            )
            elapsed = (time.perf_counter() - t0) * 1000
            with lock:
                counts[code] += 1
                latencies.append(elapsed)
            if isinstance(body, dict) and isinstance(body.get("version"), int):
                version = body["version"]

    threads = [threading.Thread(target=editor, args=(n, t)) for n, t in enumerate(tokens)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts, latencies


def print_exceptions(log: Path) -> None:
    """The exceptions the server logged, counted (the 5xx answers' causes)."""
    found = Counter(
        line.strip()
        for line in log.read_text(errors="replace").splitlines()
        if re.match(r"^[\w.]+(Error|Exception): ", line)
    )
    for line, n in found.most_common(5):
        print(f"  {n} x {line[:160]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--editors", default="4,20", help="numbers of editors (default 4,20)")
    parser.add_argument("--edits", type=int, default=40, help="edits per editor (default 40)")
    options = parser.parse_args()
    runs = [int(n) for n in options.editors.split(",")]

    work = Path(tempfile.mkdtemp(prefix="waypoint-bench-edits-"))
    env = server_env(work)
    trajectory_id, tokens = prepare(env, max(runs))
    port = free_port()
    server = start_server(env, port, work / "server.log")
    base = f"http://127.0.0.1:{port}"
    engine = "PostgreSQL" if env["DATABASE_URL"].startswith("postgres") else "SQLite"
    print(f"{engine}, {server.args[2] if len(server.args) > 2 else 'server'} on {base}")
    print("| editors | requests | 2xx | 409 | 5xx | other | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|")
    failed = False
    try:
        from trajectories.models import Trajectory

        for editors in runs:
            before = Trajectory.objects.get(pk=trajectory_id).version
            counts, latencies = run_editors(base, trajectory_id, tokens[:editors], options.edits)
            ok = sum(n for code, n in counts.items() if 200 <= code < 300)
            conflicts = counts[409]
            server_errors = sum(n for code, n in counts.items() if code >= 500)
            other = sum(counts.values()) - ok - conflicts - server_errors
            latencies.sort()
            p95 = latencies[int(len(latencies) * 0.95) - 1]
            print(
                f"| {editors} | {sum(counts.values())} | {ok} | {conflicts} | {server_errors} "
                f"| {other} | {statistics.median(latencies):.0f} | {p95:.0f} |"
            )
            after = Trajectory.objects.get(pk=trajectory_id).version
            if after - before != ok:
                print(f"  LOST EDITS: {ok} accepted, the version rose by {after - before}")
                failed = True
            failed = failed or server_errors > 0 or other > 0
    finally:
        server.terminate()
        server.wait(timeout=30)
        if failed:
            print_exceptions(work / "server.log")
            print(f"server log: {work / 'server.log'}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
