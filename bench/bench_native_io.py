"""Native (waypoint/1) export and import: speed and memory on generated datasets.

    python bench/bench_native_io.py                    # 100 x 35 and 1,000 x 35 steps, 540x1200
    python bench/bench_native_io.py --size 1080x2400   # phone-sized screenshots
    python bench/bench_native_io.py --counts 20,200    # a quick run
    python bench/bench_native_io.py --counts 100 --rounds 2   # two rounds on one dataset

Runs against throwaway SQLite databases in a temporary folder, or against PostgreSQL when
DATABASE_URL names one (it then creates and drops ``<name>_bench_*`` databases beside it).
Each export and import runs in a fresh subprocess, so its peak memory (``ru_maxrss``) is its own
(an import's file-checking workers are counted apart); a second export run under tracemalloc
gives the Python-level peak. ``--rounds`` exports and imports each generated dataset that many
times, round by round, and prints every round.

Targets (issue 26): import >= 5,000 steps/s; export >= 50 x Label Studio's JSON export, whose
418-636 tasks/s make 25,000 steps/s (``bench_vs_peers.py`` measures Label Studio itself); peak
memory at the large size <= 1.2 x the small one, for the export and for the import.
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

EXPORT_TARGET = 25_000  # steps/s: 50 x Label Studio's 418-636 tasks/s (one task per step)
IMPORT_TARGET = 5_000  # steps/s
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


def _peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    # Linux reports kilobytes, macOS bytes. RUSAGE_CHILDREN: the largest of the children.
    peak = resource.getrusage(who).ru_maxrss
    return peak / 1024 / (1024 if sys.platform == "darwin" else 1)


def _cpu_s() -> float:
    """CPU seconds of this process and of its children that ended (an import's workers):
    on a shared machine a steadier figure than the wall clock."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


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
    started, cpu = time.perf_counter(), _cpu_s()
    counts = export_trajectories(queryset, Path(args.dest), "waypoint")
    seconds = time.perf_counter() - started
    result = {
        "seconds": seconds,
        "cpu_s": _cpu_s() - cpu,
        "steps": counts["steps"],
        "files": counts["files"],
    }
    if args.tracemalloc:
        result["tracemalloc_mb"] = tracemalloc.get_traced_memory()[1] / 1024 / 1024
    else:
        result["rss_mb"] = _peak_rss_mb()
        result["rss_baseline_mb"] = baseline
    return result


def phase_import(args) -> dict:
    _setup()
    _migrate()
    from django.conf import settings

    from formats.catalogue import import_trajectories

    project = _project(args.project)
    started, cpu = time.perf_counter(), _cpu_s()
    counts = import_trajectories(project, Path(args.dest), "waypoint")
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "cpu_s": _cpu_s() - cpu,
        "steps": counts["steps"],
        "rss_mb": _peak_rss_mb(),
        "workers_rss_mb": _peak_rss_mb(resource.RUSAGE_CHILDREN),
        "workers": settings.WAYPOINT_IMPORT_WORKERS or os.cpu_count() or 1,
    }


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


def measure(count: int, args, databases: Databases, work: Path) -> list[dict]:
    label = f"{count}x{args.steps}"
    source = phase_env(databases, f"src_{label}", work)
    project = f"bench {label}"
    print(f"[{label}] generating {count} trajectories of {args.steps} steps ...", flush=True)
    size = f"{args.size[0]}x{args.size[1]}"
    gen = run_phase(
        "generate", source, project=project, count=count, steps=args.steps, size=size, seed=count
    )
    rows = []
    for round_ in range(1, args.rounds + 1):
        dest = work / f"export_{label}_{round_}"
        print(f"[{label}] round {round_}: exporting ...", flush=True)
        export = run_phase("export", source, project=project, dest=dest)
        traced = None
        if not args.no_tracemalloc and round_ == 1:
            traced_dest = work / f"export_{label}_traced"
            traced = run_phase(
                "export", source, project=project, dest=traced_dest, tracemalloc=True
            )
            shutil.rmtree(traced_dest)
        print(f"[{label}] round {round_}: importing into a fresh database ...", flush=True)
        target = phase_env(databases, f"dst_{label}_{round_}", work)
        imported = run_phase("import", target, project=project, dest=dest)
        export_bytes = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
        shutil.rmtree(dest)
        rows.append(
            {
                "label": label,
                "round": round_,
                "steps": export["steps"],
                "generate_s": gen["seconds"],
                "renders": gen["renders"],
                "export_s": export["seconds"],
                "export_rate": export["steps"] / export["seconds"],
                "export_cpu_rate": export["steps"] / export["cpu_s"],
                "export_rss_mb": export["rss_mb"],
                "export_rss_baseline_mb": export["rss_baseline_mb"],
                "export_traced_mb": traced["tracemalloc_mb"] if traced else None,
                "export_mb": export_bytes / 1024 / 1024,
                "import_s": imported["seconds"],
                "import_rate": imported["steps"] / imported["seconds"],
                "import_cpu_rate": imported["steps"] / imported["cpu_s"],
                "import_rss_mb": imported["rss_mb"],
                "import_workers_rss_mb": imported["workers_rss_mb"],
                "workers": imported["workers"],
            }
        )
    return rows


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def report(rows: list[dict], args, engine: str) -> None:
    print()
    print(f"Native format I/O, {args.size[0]}x{args.size[1]} screenshots, database: {engine}")
    print(f"command: {' '.join(sys.argv)}")
    header = (
        f"{'dataset':>10} {'round':>5} {'steps':>7} {'generate':>9} {'export':>11}"
        f" {'export MB':>10} {'peak RSS':>9} {'py peak':>8} {'import':>10} {'imp. RSS':>9}"
        f" {'workers':>12} {'per CPU s: export':>17} {'import':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        traced = f"{r['export_traced_mb']:.1f}" if r["export_traced_mb"] is not None else "-"
        workers = f"{r['workers']} x {r['import_workers_rss_mb']:.0f}M"
        print(
            f"{r['label']:>10} {r['round']:>5} {r['steps']:>7} {r['generate_s']:>8.1f}s"
            f" {r['export_rate']:>7.0f}/s {r['export_mb']:>9.1f}M"
            f" {r['export_rss_mb']:>8.1f}M {traced:>7}M"
            f" {r['import_rate']:>6.0f}/s {r['import_rss_mb']:>8.1f}M {workers:>12}"
            f" {r['export_cpu_rate']:>15.0f}/s {r['import_cpu_rate']:>5.0f}/s"
        )
    print()
    labels = list(dict.fromkeys(r["label"] for r in rows))
    small = [r for r in rows if r["label"] == labels[0]]
    large = [r for r in rows if r["label"] == labels[-1]]

    def ratio(key: str) -> float:
        return max(r[key] for r in large) / max(r[key] for r in small)

    slowest_export = min(r["export_rate"] for r in rows)
    slowest_import = min(r["import_rate"] for r in rows)
    lines = [
        (
            "export speed (slowest)",
            f"{slowest_export:,.0f} steps/s",
            f">= {EXPORT_TARGET:,} steps/s",
            slowest_export >= EXPORT_TARGET,
        ),
        (
            f"export peak RSS {labels[-1]} / {labels[0]}",
            f"{ratio('export_rss_mb'):.2f}",
            f"<= {PEAK_RATIO_TARGET}",
            ratio("export_rss_mb") <= PEAK_RATIO_TARGET,
        ),
    ]
    if small[0]["export_traced_mb"] and large[0]["export_traced_mb"] is not None:
        traced_ratio = large[0]["export_traced_mb"] / small[0]["export_traced_mb"]
        lines.append(
            (
                f"export tracemalloc peak {labels[-1]} / {labels[0]}",
                f"{traced_ratio:.2f}",
                "(for information)",
                None,
            )
        )
    lines += [
        (
            "import speed (slowest)",
            f"{slowest_import:,.0f} steps/s",
            f">= {IMPORT_TARGET:,} steps/s",
            slowest_import >= IMPORT_TARGET,
        ),
        (
            f"import peak RSS {labels[-1]} / {labels[0]}",
            f"{ratio('import_rss_mb'):.2f}",
            f"<= {PEAK_RATIO_TARGET}",
            ratio("import_rss_mb") <= PEAK_RATIO_TARGET,
        ),
        (
            f"import workers' peak RSS {labels[-1]} / {labels[0]}",
            f"{ratio('import_workers_rss_mb'):.2f}" if small[0]["import_workers_rss_mb"] else "-",
            f"<= {PEAK_RATIO_TARGET}",
            not small[0]["import_workers_rss_mb"]
            or ratio("import_workers_rss_mb") <= PEAK_RATIO_TARGET,
        ),
    ]
    width = max(len(name) for name, *_ in lines)
    for name, value, target, ok in lines:
        mark = "" if ok is None else verdict(ok)
        print(f"{name:<{width}}  {value:>16}  target {target:<18} {mark}")
    print()
    renders = {r["label"]: r["renders"] for r in rows}
    rendered = ", ".join(f"{n} screens rendered for {label}" for label, n in renders.items())
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
    parser.add_argument("--rounds", type=int, default=1, help="exports and imports per dataset")
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
        rows = [row for count in counts for row in measure(count, args, databases, work)]
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
