"""Native (waypoint/1) export and import: speed and memory on generated datasets.

    python bench/bench_native_io.py                    # 100 x 35 and 1,000 x 35 steps, 540x1200
    python bench/bench_native_io.py --size 1080x2400   # phone-sized screenshots
    python bench/bench_native_io.py --counts 20,200    # a quick run

Runs against throwaway SQLite databases in a temporary folder, or against PostgreSQL when
DATABASE_URL names one (it then creates and drops ``<name>_bench_*`` databases beside it).
Each export and import runs in a fresh subprocess, so its peak memory (``ru_maxrss``) is its own;
a second export run under tracemalloc gives the Python-level peak.

Targets: export >= 5,000 steps/s; export peak at the large size <= 1.2 x the small one (memory
does not grow with the dataset); import >= 1,000 steps/s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

EXPORT_TARGET = 5000  # steps/s
IMPORT_TARGET = 1000  # steps/s
PEAK_RATIO_TARGET = 1.2


# ---------------------------------------------------------------- phases (in subprocesses)


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def _migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _project(name: str):
    from django.contrib.auth import get_user_model

    from trajectories.models import Project
    from trajectories.services import do_create_project

    user, _ = get_user_model().objects.get_or_create(username="bench")
    return Project.objects.filter(name=name).first() or do_create_project(name, user)


def _peak_rss_mb() -> float:
    # Linux reports kilobytes, macOS bytes.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 / (1024 if sys.platform == "darwin" else 1)


def phase_generate(args) -> dict:
    _setup()
    _migrate()
    from fixtures.generate import generate_dataset, render

    project = _project(args.project)
    started = time.perf_counter()
    counts = generate_dataset(project, args.count, steps=args.steps, seed=args.seed, size=args.size)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "steps": counts["steps"],
        "renders": render.cache_info().misses,
    }


def phase_export(args) -> dict:
    _setup()
    from formats.catalogue import export_trajectories
    from trajectories.models import Project, Trajectory

    project = Project.objects.get(name=args.project)
    queryset = Trajectory.objects.filter(project=project)
    baseline = _peak_rss_mb()
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start()
    started = time.perf_counter()
    counts = export_trajectories(queryset, Path(args.dest), "waypoint")
    seconds = time.perf_counter() - started
    result = {"seconds": seconds, "steps": counts["steps"], "files": counts["files"]}
    if args.tracemalloc:
        result["tracemalloc_mb"] = tracemalloc.get_traced_memory()[1] / 1024 / 1024
    else:
        result["rss_mb"] = _peak_rss_mb()
        result["rss_baseline_mb"] = baseline
    return result


def phase_import(args) -> dict:
    _setup()
    _migrate()
    from formats.catalogue import import_trajectories

    project = _project(args.project)
    started = time.perf_counter()
    counts = import_trajectories(project, Path(args.dest), "waypoint")
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "steps": counts["steps"], "rss_mb": _peak_rss_mb()}


PHASES = {"generate": phase_generate, "export": phase_export, "import": phase_import}


# ---------------------------------------------------------------- the driver


class Databases:
    """Fresh databases by name: SQLite files in the work folder, or PostgreSQL databases."""

    def __init__(self, work: Path):
        self.work = work
        self.base = os.environ.get("DATABASE_URL", "")
        self.created: list[str] = []

    @property
    def postgres(self) -> bool:
        return self.base.startswith(("postgres://", "postgresql://"))

    def url(self, name: str) -> str:
        if not self.postgres:
            return f"sqlite:///{self.work / name}.sqlite3"
        parts = urlsplit(self.base)
        dbname = f"{parts.path.lstrip('/') or 'waypoint'}_bench_{name}"
        self._admin(f'DROP DATABASE IF EXISTS "{dbname}"', f'CREATE DATABASE "{dbname}"')
        self.created.append(dbname)
        return urlunsplit(parts._replace(path=f"/{dbname}"))

    def _admin(self, *statements: str) -> None:
        import psycopg

        parts = urlsplit(self.base)
        admin = urlunsplit(parts._replace(path="/postgres", scheme="postgresql"))
        with psycopg.connect(admin, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)

    def drop_all(self) -> None:
        for dbname in self.created:
            self._admin(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


def run_phase(phase: str, env: dict[str, str], **options) -> dict:
    command = [sys.executable, __file__, "--phase", phase]
    for key, value in options.items():
        if value is True:
            command.append(f"--{key}")
        elif value not in (None, False):
            command += [f"--{key}", str(value)]
    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"bench phase {phase} failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def phase_env(databases: Databases, name: str, work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="0",  # DEBUG keeps a log of every query: not what production measures
        SECRET_KEY=os.environ.get("SECRET_KEY", "bench-only-not-secret"),
        DATABASE_URL=databases.url(name),
        WAYPOINT_VAR_DIR=str(work / name),
        MEDIA_ROOT=str(work / name / "blobs"),
        LOG_LEVEL="WARNING",
    )
    env.pop("AWS_STORAGE_BUCKET_NAME", None)
    return env


def measure(count: int, args, databases: Databases, work: Path) -> dict:
    label = f"{count}x{args.steps}"
    source = phase_env(databases, f"src_{label}", work)
    project = f"bench {label}"
    print(f"[{label}] generating {count} trajectories of {args.steps} steps ...", flush=True)
    size = f"{args.size[0]}x{args.size[1]}"
    gen = run_phase(
        "generate", source, project=project, count=count, steps=args.steps, size=size, seed=count
    )
    dest = work / f"export_{label}"
    print(f"[{label}] exporting ...", flush=True)
    export = run_phase("export", source, project=project, dest=dest)
    traced = None
    if not args.no_tracemalloc:
        traced_dest = work / f"export_{label}_traced"
        traced = run_phase("export", source, project=project, dest=traced_dest, tracemalloc=True)
        shutil.rmtree(traced_dest)
    print(f"[{label}] importing into a fresh database ...", flush=True)
    target = phase_env(databases, f"dst_{label}", work)
    imported = run_phase("import", target, project=project, dest=dest)
    export_bytes = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
    return {
        "label": label,
        "steps": export["steps"],
        "generate_s": gen["seconds"],
        "renders": gen["renders"],
        "export_s": export["seconds"],
        "export_rate": export["steps"] / export["seconds"],
        "export_rss_mb": export["rss_mb"],
        "export_rss_baseline_mb": export["rss_baseline_mb"],
        "export_traced_mb": traced["tracemalloc_mb"] if traced else None,
        "export_mb": export_bytes / 1024 / 1024,
        "import_s": imported["seconds"],
        "import_rate": imported["steps"] / imported["seconds"],
        "import_rss_mb": imported["rss_mb"],
    }


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def report(rows: list[dict], args, engine: str) -> None:
    print()
    print(f"Native format I/O, {args.size[0]}x{args.size[1]} screenshots, database: {engine}")
    header = (
        f"{'dataset':>10} {'steps':>7} {'generate':>9} {'export':>11} {'export MB':>10}"
        f" {'peak RSS':>9} {'py peak':>8} {'import':>10} {'imp. RSS':>9}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        traced = f"{r['export_traced_mb']:.1f}" if r["export_traced_mb"] is not None else "-"
        print(
            f"{r['label']:>10} {r['steps']:>7} {r['generate_s']:>8.1f}s"
            f" {r['export_rate']:>7.0f}/s {r['export_mb']:>9.1f}M"
            f" {r['export_rss_mb']:>8.1f}M {traced:>7}M"
            f" {r['import_rate']:>6.0f}/s {r['import_rss_mb']:>8.1f}M"
        )
    print()
    small, large = rows[0], rows[-1]
    rss_ratio = large["export_rss_mb"] / small["export_rss_mb"]
    lines = [
        (
            "export speed (slowest)",
            f"{min(r['export_rate'] for r in rows):,.0f} steps/s",
            f">= {EXPORT_TARGET:,} steps/s",
            min(r["export_rate"] for r in rows) >= EXPORT_TARGET,
        ),
        (
            f"export peak RSS {large['label']} / {small['label']}",
            f"{rss_ratio:.2f}",
            f"<= {PEAK_RATIO_TARGET}",
            rss_ratio <= PEAK_RATIO_TARGET,
        ),
    ]
    if small["export_traced_mb"] and large["export_traced_mb"] is not None:
        traced_ratio = large["export_traced_mb"] / small["export_traced_mb"]
        lines.append(
            (
                f"export tracemalloc peak {large['label']} / {small['label']}",
                f"{traced_ratio:.2f}",
                "(for information)",
                None,
            )
        )
    lines.append(
        (
            "import speed (slowest)",
            f"{min(r['import_rate'] for r in rows):,.0f} steps/s",
            f">= {IMPORT_TARGET:,} steps/s",
            min(r["import_rate"] for r in rows) >= IMPORT_TARGET,
        )
    )
    width = max(len(name) for name, *_ in lines)
    for name, value, target, ok in lines:
        mark = "" if ok is None else verdict(ok)
        print(f"{name:<{width}}  {value:>16}  target {target:<18} {mark}")
    print()
    rendered = ", ".join(f"{r['renders']} screens rendered for {r['label']}" for r in rows)
    print(f"generate = generating and importing through do_import_trajectory ({rendered}).")


def parse_size(text: str) -> tuple[int, int]:
    width, _, height = text.lower().partition("x")
    return int(width), int(height)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=parse_size, default=(540, 1200), help="WIDTHxHEIGHT")
    parser.add_argument("--steps", type=int, default=35)
    parser.add_argument("--counts", default="100,1000", help="trajectory counts, small first")
    parser.add_argument("--no-tracemalloc", action="store_true", help="skip the traced export run")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    # Internal: one phase in a subprocess.
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--project", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--dest", help=argparse.SUPPRESS)
    parser.add_argument("--tracemalloc", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.phase:
        print(json.dumps(PHASES[args.phase](args)))
        return

    counts = [int(c) for c in args.counts.split(",")]
    work = Path(tempfile.mkdtemp(prefix="waypoint-bench-"))
    databases = Databases(work)
    engine = "PostgreSQL" if databases.postgres else "SQLite"
    try:
        rows = [measure(count, args, databases, work) for count in counts]
        report(rows, args, engine)
    finally:
        if databases.postgres:
            databases.drop_all()
        if args.keep:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
