"""Waypoint side by side with its peers on the same generated data (issue 26).

    python bench/bench_vs_peers.py                           # 1,000 x 35 = 35,000 steps, 2 rounds
    python bench/bench_vs_peers.py --trajectories 100         # a reduced run (3,500 steps)
    python bench/bench_vs_peers.py --androtmem-scorer PATH    # AndroTMem's evaluate_predictions.py

Measured from outside, each peer and Waypoint one after the other, round by round:

1. native export in process (``export_trajectories``) vs Label Studio's JSON export through its
   API (``GET /api/projects/<id>/export?exportType=JSON``), one LS task per step;
2. native import (``import_trajectories`` into a fresh database) vs Label Studio's import of
   the same steps (``POST /api/projects/<id>/import``, a new project each round);
3. the evaluator from the shell, whole command (``python -m evaluation``; ``manage.py evaluate``
   beside it) vs AndroTMem's released scorer (``python evaluate_predictions.py --pred --gt``)
   on the same androtmem export and predictions, with the AMS and TCR of both compared; skipped,
   and said so, without ``--androtmem-scorer``;
4. memory graph retrieval through the API (a gunicorn worker, token auth, base64 JSON, p50 of
   ``--queries`` requests) vs the query's embedding and the numpy top-k in process.

Label Studio (pinned, ``LABEL_STUDIO_VERSION``) is pip-installed into its own virtual
environment under the cache folder (``$XDG_CACHE_HOME/waypoint-bench``, else ``~/.cache/...``;
``--label-studio-venv`` to choose), started with SQLite in the work folder,
``LATEST_VERSION_CHECK=false`` and no Redis of its own (its jobs run in the request). When it
cannot be installed or started, the bench says why and goes on without it
(``--no-label-studio`` skips it).

Databases: throwaway SQLite files, or PostgreSQL when DATABASE_URL names one (as
``bench_native_io.py``).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_native_io import REPO, Databases, phase_env  # noqa: E402
from bench_native_io import run_phase as native_phase  # noqa: E402

LABEL_STUDIO_VERSION = "1.23.2"
LS_USER = "bench@example.com"
LS_PASSWORD = "bench-only-password-1"
LS_TOKEN = "0" * 8 + "bench" + "0" * 27  # 40 characters, a legacy token for this run only
GOALS = {
    "export": ("≥ 50×", lambda ratio: ratio >= 50),
    "import": ("≥ 5,000 steps/s", None),
    "evaluate": ("≤ 1.0× the scorer's wall time", lambda ratio: ratio <= 1.0),
    "retrieve": ("≤ 2× in process", lambda ratio: ratio <= 2.0),
}


# ---------------------------------------------------------------- phases (in subprocesses)


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def phase_androtmem(args) -> dict:
    """The androtmem export of the project, and predictions for it in AndroTMem's layout
    (about one in ten wrong)."""
    _setup()
    from formats.catalogue import export_trajectories
    from trajectories.models import Project, Trajectory

    project = Project.objects.get(name=args.project)
    folder = Path(args.dest)
    export_trajectories(Trajectory.objects.filter(project=project), folder, "androtmem")
    rng = random.Random(0)
    lines = 0
    with open(folder.parent / "predictions.jsonl", "w", encoding="utf-8") as out:
        for line in open(folder / "test.jsonl", encoding="utf-8"):
            task = json.loads(line)
            for step in task["steps"]:
                form = step["actionForm"]
                action = {
                    "action": form["action"],
                    "value": form.get("value") or "",
                    "direction": form.get("direction") or "",
                }
                if form.get("bbox"):
                    x0, y0, x1, y1 = form["bbox"]
                    action["x"], action["y"] = (x0 + x1) / 2, (y0 + y1) / 2
                if rng.random() < 0.1:
                    action["action"] = rng.choice(["back", "tap", "text", "swipe"])
                record = {"task_id": task["task_id"], "step_index": step["step_index"]}
                record["prediction"] = {"action": action}
                out.write(json.dumps(record) + "\n")
                lines += 1
    return {"lines": lines}


def phase_ls_tasks(args) -> dict:
    """One Label Studio task per step of the androtmem export: its screenshot's path, the
    instruction and the step's action."""
    folder = Path(args.dest)
    tasks = []
    for line in open(folder / "test.jsonl", encoding="utf-8"):
        task = json.loads(line)
        for step in task["steps"]:
            tasks.append(
                {
                    "data": {
                        "image": f"/data/local-files/?d={step['image_name']}",
                        "task_id": task["task_id"],
                        "step_index": step["step_index"],
                        "instruction": task.get("instruction_en", ""),
                        "action": json.dumps(step["actionForm"]),
                    }
                }
            )
    Path(args.out).write_text(json.dumps(tasks))
    return {"tasks": len(tasks)}


def phase_graph(args) -> dict:
    """A memory graph of the project (the build job, in process), and an API token."""
    _setup()
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from graphs.services import do_build_memory_graph
    from trajectories.jobs import run_job
    from trajectories.models import Project

    project = Project.objects.get(name=args.project)
    user = get_user_model().objects.get(username="bench")
    started = time.perf_counter()
    graph = do_build_memory_graph(project, user, {}, queue=False)
    run_job(graph.job_id)
    graph.refresh_from_db()
    if graph.status != "ready":
        raise SystemExit(f"graph build failed: {graph.message}")
    token, _ = Token.objects.get_or_create(user=user)
    return {
        "graph": graph.pk,
        "token": token.key,
        "nodes": graph.node_count,
        "seconds": time.perf_counter() - started,
    }


def _query_screen():
    from fixtures.generate import render, shop_product

    screen = render(shop_product("Acme Tent", (540, 1200)))
    xml = screen.xml if isinstance(screen.xml, str) else screen.xml.decode()
    return screen.png, xml


def phase_inprocess(args) -> dict:
    """The query's embedding and the numpy top-k (with the subgoals gathered and the memory
    block), in process: the floor under the API's figure."""
    _setup()
    from graphs.embedders import get_embedder
    from graphs.index import index_of
    from graphs.models import MemoryGraph
    from graphs.retrieve import format_memory_block, retrieve

    graph = MemoryGraph.objects.get(pk=args.graph)
    embedder = get_embedder(graph.params["embedder"])
    index = index_of(graph)
    png, xml = _query_screen()
    times = []
    for i in range(args.queries + 10):
        started = time.perf_counter()
        query = embedder.embed_screens([(png, xml)])[0]
        format_memory_block(retrieve(index, query, 3), args.task)
        if i >= 10:  # the first ones warm up
            times.append(1000 * (time.perf_counter() - started))
    return {"p50_ms": statistics.median(times)}


def phase_query_body(args) -> dict:
    png, xml = _query_screen()
    body = {"screenshot": base64.b64encode(png).decode(), "xml": xml, "k": 3, "task": args.task}
    Path(args.out).write_text(json.dumps(body))
    return {"bytes": len(png)}


PHASES = {
    "androtmem": phase_androtmem,
    "ls-tasks": phase_ls_tasks,
    "graph": phase_graph,
    "inprocess": phase_inprocess,
    "query-body": phase_query_body,
}


def run_phase(phase: str, env: dict[str, str], **options) -> dict:
    command = [sys.executable, __file__, "--phase", phase]
    for key, value in options.items():
        if value not in (None, False):
            command += [f"--{key.replace('_', '-')}", str(value)]
    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"bench phase {phase} failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- helpers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, seconds: float, process: subprocess.Popen | None = None) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=5):
                return True
        except urllib.error.HTTPError:
            return True  # it answers
        except OSError:
            time.sleep(1)
    return False


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def request(url: str, token: str, *, data: bytes | None = None, scheme: str = "Token") -> bytes:
    headers = {"Authorization": f"{scheme} {token}"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    with urllib.request.urlopen(req, timeout=3600) as answer:
        return answer.read()


def timed_command(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return seconds, done.stdout


# ---------------------------------------------------------------- Label Studio


class LabelStudio:
    """Label Studio in its own virtual environment, on SQLite in the work folder."""

    def __init__(self, venv: Path, work: Path):
        self.venv, self.work = venv, work
        self.process: subprocess.Popen | None = None
        self.url = ""

    def install(self) -> str | None:
        """None when it is installed; else why it is not."""
        binary = self.venv / "bin" / "label-studio"
        if binary.exists():
            return None
        print(f"installing Label Studio {LABEL_STUDIO_VERSION} into {self.venv} ...", flush=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)
            done = subprocess.run(
                [
                    str(self.venv / "bin" / "pip"),
                    "install",
                    "-q",
                    f"label-studio=={LABEL_STUDIO_VERSION}",
                ],
                capture_output=True,
                text=True,
            )
        except (OSError, subprocess.CalledProcessError) as exc:
            return f"could not make its virtual environment ({exc})"
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            return f"pip could not install label-studio=={LABEL_STUDIO_VERSION}:\n{tail}"
        return None

    def start(self) -> str | None:
        port = free_port()
        data = self.work / "label-studio"
        data.mkdir(exist_ok=True)
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DJANGO_", "DATABASE", "REDIS", "CELERY"))
        }
        env.update(
            LATEST_VERSION_CHECK="false",
            LABEL_STUDIO_BASE_DATA_DIR=str(data),
            LOCAL_FILES_SERVING_ENABLED="true",
            DATA_UPLOAD_MAX_MEMORY_SIZE=str(2 * 1024**3),
            DATA_UPLOAD_MAX_NUMBER_FIELDS=str(10**7),
        )
        log = open(self.work / "label-studio.log", "w")
        self.process = subprocess.Popen(
            [
                str(self.venv / "bin" / "label-studio"),
                "start",
                "--no-browser",
                "--port",
                str(port),
                "--data-dir",
                str(data),
                "--username",
                LS_USER,
                "--password",
                LS_PASSWORD,
                "--user-token",
                LS_TOKEN,
                "--enable-legacy-api-token",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{port}"
        print(f"starting Label Studio at {self.url} (its first start migrates) ...", flush=True)
        if not wait_for(f"{self.url}/health", 600, self.process):
            tail = "\n".join((self.work / "label-studio.log").read_text().splitlines()[-8:])
            self.stop()
            return f"it did not answer on {self.url}/health:\n{tail}"
        return None

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)

    def api(self, path: str, body: object | None = None) -> object:
        data = None if body is None else json.dumps(body).encode()
        return json.loads(request(f"{self.url}/api/{path}", LS_TOKEN, data=data) or b"null")

    def new_project(self, title: str) -> int:
        config = (
            '<View><Image name="screen" value="$image"/>'
            '<TextArea name="note" toName="screen"/></View>'
        )
        return self.api("projects/", {"title": title, "label_config": config})["id"]

    def import_tasks(self, project: int, tasks_file: Path) -> tuple[float, int]:
        started = time.perf_counter()
        answer = json.loads(
            request(
                f"{self.url}/api/projects/{project}/import", LS_TOKEN, data=tasks_file.read_bytes()
            )
        )
        return time.perf_counter() - started, int(answer.get("task_count", 0))

    def export_json(self, project: int) -> tuple[float, int]:
        started = time.perf_counter()
        body = request(
            f"{self.url}/api/projects/{project}/export?exportType=JSON&download_all_tasks=true",
            LS_TOKEN,
        )
        seconds = time.perf_counter() - started
        return seconds, len(json.loads(body))


# ---------------------------------------------------------------- Waypoint's server


class Waypoint:
    """A gunicorn worker of Waypoint on the bench database."""

    def __init__(self, env: dict[str, str], work: Path):
        self.env, self.work = env, work
        self.process: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> None:
        port = free_port()
        env = dict(self.env, ALLOWED_HOSTS="127.0.0.1,localhost", SECURE_SSL_REDIRECT="0")
        log = open(self.work / "gunicorn.log", "w")
        gunicorn = Path(sys.executable).parent / "gunicorn"
        self.process = subprocess.Popen(
            [str(gunicorn), "config.wsgi:application", "--bind", f"127.0.0.1:{port}"]
            + ["--workers", "1", "--log-level", "warning"],
            env=env,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{port}"
        if not wait_for(f"{self.url}/api/v1/", 120, self.process):
            raise SystemExit(f"gunicorn did not start: {(self.work / 'gunicorn.log').read_text()}")

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)

    def retrieval_p50(self, graph: int, token: str, body: bytes, queries: int) -> float:
        url = f"{self.url}/api/v1/graphs/{graph}/retrieve"
        times = []
        for i in range(queries + 10):
            started = time.perf_counter()
            request(url, token, data=body)
            if i >= 10:  # the first ones load the graph into the worker
                times.append(1000 * (time.perf_counter() - started))
        return statistics.median(times)


# ---------------------------------------------------------------- the scorer


SUMMARY = {
    "ams": (r"AMS \(Action Match\):\s*([0-9.]+)", r"^AMS: ([0-9.]+)"),
    "tcr": (r"TCR \(Task Completion\):\s*([0-9.]+)%", r"^TCR: ([0-9.]+)%"),
}


def figures(text: str, theirs: bool) -> dict[str, float | None]:
    found = {}
    for name, (peer, ours) in SUMMARY.items():
        match = re.search(peer if theirs else ours, text, re.M)
        found[name] = float(match.group(1)) if match else None
    return found


# ---------------------------------------------------------------- the run


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds else 0.0


def span(values: list[float], unit: str = "", digits: int = 0) -> str:
    if not values:
        return "-"
    low, high = min(values), max(values)
    text = (
        f"{low:,.{digits}f}"
        if round(low, digits) == round(high, digits)
        else (f"{low:,.{digits}f}–{high:,.{digits}f}")
    )
    return f"{text}{unit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectories", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=35)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=200, help="retrieval requests per round")
    parser.add_argument("--task", default="compare the prices and write them down in Notes")
    parser.add_argument("--androtmem-scorer", help="AndroTMem's evaluate_predictions.py")
    parser.add_argument("--no-label-studio", action="store_true")
    parser.add_argument("--label-studio-venv", help="its virtual environment (made if missing)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    parser.add_argument("--dest", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--graph", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(PHASES[args.phase](args)))
        return

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "waypoint-bench"
    venv = Path(args.label_studio_venv or cache / f"ls-{LABEL_STUDIO_VERSION}")
    work = Path(tempfile.mkdtemp(prefix="waypoint-bench-peers-"))
    databases = Databases(work)
    engine = "PostgreSQL" if databases.postgres else "SQLite"
    label_studio = None
    notes: list[str] = []
    server = None
    try:
        label = f"{args.trajectories}x{args.steps}"
        source = phase_env(databases, f"src_{label}", work)
        project = f"bench {label}"
        print(f"generating {args.trajectories} trajectories of {args.steps} steps ...", flush=True)
        generated = native_phase(
            "generate",
            source,
            project=project,
            count=args.trajectories,
            steps=args.steps,
            size="540x1200",
            seed=args.trajectories,
        )
        steps = generated["steps"]
        benchmark = work / "androtmem"
        run_phase("androtmem", source, project=project, dest=benchmark)
        predictions = work / "predictions.jsonl"
        tasks_file = work / "ls-tasks.json"
        run_phase("ls-tasks", source, dest=benchmark, out=tasks_file)

        if args.no_label_studio:
            notes.append("Label Studio: skipped (--no-label-studio)")
        else:
            label_studio = LabelStudio(venv, work)
            why = label_studio.install() or label_studio.start()
            if why:
                notes.append(f"Label Studio: not run: {why}")
                label_studio = None

        print("building a memory graph of the project ...", flush=True)
        graph = run_phase("graph", source, project=project)
        body_file = work / "query.json"
        run_phase("query-body", source, out=body_file, task=args.task)
        server = Waypoint(source, work)
        server.start()

        rows: dict[str, list] = {
            key: []
            for key in (
                "export",
                "ls_export",
                "import",
                "ls_import",
                "light",
                "manage",
                "scorer",
                "api",
                "inprocess",
            )
        }
        agreement = []
        scorer = Path(args.androtmem_scorer) if args.androtmem_scorer else None
        if scorer is not None and not scorer.is_file():
            notes.append(f"AndroTMem's scorer: skipped: no file {scorer}")
            scorer = None
        elif scorer is None:
            notes.append("AndroTMem's scorer: skipped (give --androtmem-scorer PATH)")
        for round_ in range(1, args.rounds + 1):
            print(f"round {round_}/{args.rounds}: native export, import ...", flush=True)
            dest = work / f"native_{round_}"
            exported = native_phase("export", source, project=project, dest=dest)
            rows["export"].append(rate(exported["steps"], exported["seconds"]))
            target = phase_env(databases, f"dst_{label}_{round_}", work)
            imported = native_phase("import", target, project=project, dest=dest)
            rows["import"].append(rate(imported["steps"], imported["seconds"]))
            shutil.rmtree(dest, ignore_errors=True)
            if label_studio is not None:
                print(f"round {round_}: Label Studio import, export ...", flush=True)
                ls_project = label_studio.new_project(f"bench round {round_}")
                seconds, count = label_studio.import_tasks(ls_project, tasks_file)
                rows["ls_import"].append(rate(count, seconds))
                seconds, count = label_studio.export_json(ls_project)
                rows["ls_export"].append(rate(count, seconds))
            print(f"round {round_}: the evaluator ...", flush=True)
            light, ours = timed_command(
                [sys.executable, "-m", "evaluation", "--benchmark", str(benchmark)]
                + ["--predictions", str(predictions)],
                source,
            )
            rows["light"].append(light)
            manage, _ = timed_command(
                [sys.executable, "manage.py", "evaluate", "--benchmark", str(benchmark)]
                + ["--predictions", str(predictions)],
                source,
            )
            rows["manage"].append(manage)
            if scorer is not None:
                seconds, theirs = timed_command(
                    [sys.executable, str(scorer), "--pred", str(predictions)]
                    + ["--gt", str(benchmark / "test.jsonl")],
                    source,
                )
                rows["scorer"].append(seconds)
                agreement.append((figures(ours, False), figures(theirs, True)))
            print(f"round {round_}: retrieval ...", flush=True)
            rows["api"].append(
                server.retrieval_p50(
                    graph["graph"], graph["token"], body_file.read_bytes(), args.queries
                )
            )
            inproc = run_phase(
                "inprocess", source, graph=graph["graph"], queries=args.queries, task=args.task
            )
            rows["inprocess"].append(inproc["p50_ms"])

        report(rows, agreement, args, engine, steps, graph, notes, scorer)
    finally:
        if server is not None:
            server.stop()
        if label_studio is not None:
            label_studio.stop()
        if databases.postgres:
            databases.drop_all()
        if args.keep:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def report(rows, agreement, args, engine, steps, graph, notes, scorer) -> None:
    print()
    print(
        f"Waypoint vs peers, {steps:,} steps ({args.trajectories} x {args.steps}), database "
        f"{engine}, {args.rounds} rounds; Label Studio {LABEL_STUDIO_VERSION}, one task per step"
    )
    table = []

    def ratios(ours: list[float], theirs: list[float], invert: bool = False) -> list[float]:
        pairs = zip(ours, theirs, strict=False)
        return [(t / o if invert else o / t) for o, t in pairs if o and t]

    export = ratios(rows["export"], rows["ls_export"])
    table.append(
        (
            "native export, in process",
            f"{span(rows['export'])} steps/s",
            f"LS JSON export (API) {span(rows['ls_export'])} tasks/s" if rows["ls_export"] else "-",
            f"{span(export, '×', 1)}" if export else "-",
            "≥ 50×",
        )
    )
    imports = ratios(rows["import"], rows["ls_import"])
    table.append(
        (
            "native import",
            f"{span(rows['import'])} steps/s",
            f"LS import {span(rows['ls_import'])} tasks/s" if rows["ls_import"] else "-",
            f"{span(imports, '×', 1)}" if imports else "-",
            "≥ 5,000 steps/s",
        )
    )
    evaluate = ratios(rows["light"], rows["scorer"])
    table.append(
        (
            "evaluator, whole command (python -m evaluation)",
            f"{span(rows['light'], ' s', 2)} (manage.py evaluate {span(rows['manage'], ' s', 2)})",
            f"scorer {span(rows['scorer'], ' s', 2)}" if rows["scorer"] else "scorer skipped",
            f"{span(evaluate, '×', 2)} the scorer's time" if evaluate else "-",
            "≤ 1.0×, same results",
        )
    )
    retrieve = ratios(rows["api"], rows["inprocess"])
    table.append(
        (
            f"retrieval through the API (graph of {graph['nodes']} nodes, k=3)",
            f"p50 {span(rows['api'], ' ms', 2)}",
            f"embedding + numpy top-k in process {span(rows['inprocess'], ' ms', 2)}",
            f"{span(retrieve, '×', 2)}",
            "≤ 2×",
        )
    )
    print()
    print("| what | Waypoint | the peer | ratio | goal |")
    print("|---|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(row) + " |")
    print()
    if scorer is not None:
        print(f"scorer: {scorer}")
        standin = "STAND-IN" in scorer.read_text(errors="replace")[:2000]
        if standin:
            print("  (a STAND-IN written from the rules: its times are not AndroTMem's figure)")
        for ours, theirs in agreement:
            same = all(
                ours[k] is not None and theirs[k] is not None and abs(ours[k] - theirs[k]) < 1e-9
                for k in ours
            )
            print(f"  AMS / TCR: Waypoint {ours}, scorer {theirs}: {'same' if same else 'DIFFER'}")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
