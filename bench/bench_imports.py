"""Imports of the public datasets' formats: speed and memory on generated data.

    python bench/bench_imports.py                        # every format at 1,000 and 10,000 steps
    python bench/bench_imports.py --formats aitw --counts 200,2000   # a quick run

For each format (androtmem, androidcontrol, gui-odyssey, aitw) the driver writes a dataset in the
format's own layout (TFRecord shards with CRC-32C framing, tf.train.Example and accessibility
forests encoded as the published protos give them; JSON files and PNG screenshots), every
screenshot distinct, then imports it with ``import_trajectories`` into a fresh database in a
fresh subprocess, so the peak memory (``ru_maxrss``) is the import's own. Databases as
``bench_native_io.py`` makes them: SQLite files in a temporary folder, or PostgreSQL databases
``<name>_bench_*`` beside the one DATABASE_URL names.

Targets (issue 36): the steps per second of each format at the large size, printed; peak RSS of
the import at the large size <= 1.2 x at the small one (the TFRecord formats stream their shards
a record at a time, and every format keeps its screenshots on disk between the two passes).
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_native_io import Databases, phase_env  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

FORMATS = ("androtmem", "androidcontrol", "gui-odyssey", "aitw")
PEAK_RATIO_TARGET = 1.2
STEPS_PER_EPISODE = 10
W, H = 108, 240
AITW_W, AITW_H = 54, 120  # raw pixels: 19 KiB a step


# ---------------------------------------------------------------- generated datasets


def _png(i: int, size: tuple[int, int] = (W, H)) -> bytes:
    image = Image.new("RGB", size, (i % 251, (i // 251) % 251, 90))
    ImageDraw.Draw(image).rectangle((10, 100, 98, 140), fill=(240, (i * 7) % 256, 240))
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


def _frame(data: bytes) -> bytes:
    from formats.tfrecord import masked_crc

    length = struct.pack("<Q", len(data))
    return (
        length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))
    )


def _write_shard(path: Path, records: Iterable[bytes]) -> None:
    """Records written as they are made: the driver's memory stays small, and a child started
    from it inherits its peak (``ru_maxrss`` survives fork and exec on Linux)."""
    import gzip

    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb", compresslevel=1) as out:
        for record in records:
            out.write(_frame(record))


def write_androtmem(folder: Path, steps: int) -> None:
    (folder / "images").mkdir(parents=True)
    with open(folder / "bench.jsonl", "w") as out:
        for e in range(steps // STEPS_PER_EPISODE):
            task_steps = []
            for s in range(STEPS_PER_EPISODE):
                name = f"task_{e:05d}/step_{s:03d}.png"
                path = folder / "images" / name
                path.parent.mkdir(exist_ok=True)
                path.write_bytes(_png(e * STEPS_PER_EPISODE + s))
                form = {"action": "tap", "bbox": [10, 100, 98, 140], "value": "", "direction": ""}
                if s % 3 == 1:
                    form = {"action": "text", "bbox": None, "value": f"item {s}", "direction": ""}
                status = [{"id": f"a{s}", "type": "state_change", "content_en": f"step {s}"}]
                links = [{"source": f"a{s - 1}", "type": "enables", "is_critical": True}]
                task_steps.append(
                    {
                        "step_index": s,
                        "image_name": name,
                        "actionForm": form,
                        "extra_info": {"status": status, "links": links if s else []},
                    }
                )
            task = {"task_id": f"task_{e:05d}", "instruction_en": f"Task {e}", "steps": task_steps}
            out.write(json.dumps(task) + "\n")


def write_gui_odyssey(folder: Path, steps: int) -> None:
    (folder / "annotations").mkdir(parents=True)
    (folder / "screenshots").mkdir()
    for e in range(steps // STEPS_PER_EPISODE):
        episode_steps = []
        for s in range(STEPS_PER_EPISODE):
            name = f"ep{e:05d}_{s}.png"
            (folder / "screenshots" / name).write_bytes(_png(e * STEPS_PER_EPISODE + s))
            action, info = (
                ("CLICK", [[500, 500]]) if s % 2 else ("SCROLL", [[500, 800], [500, 200]])
            )
            episode_steps.append({"step": s, "screenshot": name, "action": action, "info": info})
        episode = {
            "episode_id": f"ep{e:05d}",
            "device_info": {"w": W, "h": H, "device_name": "Pixel 7 Pro"},
            "task_info": {"app": ["Chrome", "Notes"], "instruction": f"Task {e}", "task": f"t{e}"},
            "steps": episode_steps,
        }
        (folder / "annotations" / f"ep{e:05d}.json").write_text(json.dumps(episode))


def write_androidcontrol(folder: Path, steps: int) -> None:
    from tests.formats import wire

    tree = wire.forest(
        wire.window(
            [
                wire.node(0, (0, 0, W, H), children=(1,)),
                wire.node(1, (10, 100, 98, 140), class_name="android.widget.Button", text="Buy"),
            ]
        )
    )

    def episodes() -> Iterator[bytes]:
        for e in range(steps // STEPS_PER_EPISODE):
            n = STEPS_PER_EPISODE + 1
            actions = [
                {"action_type": "click", "x": 54, "y": 120}
                if s % 2
                else {"action_type": "scroll", "direction": "down"}
                for s in range(STEPS_PER_EPISODE)
            ]
            yield (
                wire.example(
                    {
                        "episode_id": wire.int64_feature(e),
                        "goal": wire.bytes_feature(f"Task {e}".encode()),
                        "screenshots": wire.bytes_feature(*[_png(e * n + s) for s in range(n)]),
                        "accessibility_trees": wire.bytes_feature(*[tree] * n),
                        "screenshot_widths": wire.int64_feature(*[W] * n),
                        "screenshot_heights": wire.int64_feature(*[H] * n),
                        "actions": wire.bytes_feature(*[json.dumps(a).encode() for a in actions]),
                        "step_instructions": wire.bytes_feature(*[b"do it"] * STEPS_PER_EPISODE),
                    }
                )
            )

    _write_shard(folder / "android_control-00000-of-00001", episodes())


def write_aitw(folder: Path, steps: int) -> None:
    import os

    from tests.formats import wire

    def steps_() -> Iterator[bytes]:
        for e in range(steps // STEPS_PER_EPISODE):
            for s in range(STEPS_PER_EPISODE):
                i = e * STEPS_PER_EPISODE + s
                # Raw RGB as the dataset stores it: a band of noise (text, photos) over a flat
                # screen, so gzip packs it about as it packs real screenshots.
                total = AITW_W * AITW_H * 3
                noise = os.urandom(total // 4)
                flat = bytes([i % 251, (i // 251) % 251, 90]) * ((total - len(noise)) // 3 + 1)
                pixels = (noise + flat)[:total]
                touch, lift = ((0.5, 0.5), (0.5, 0.5)) if s % 2 else ((0.8, 0.5), (0.2, 0.5))
                yield (
                    wire.example(
                        {
                            "episode_id": wire.bytes_feature(f"ep{e}".encode()),
                            "step_id": wire.int64_feature(s),
                            "goal_info": wire.bytes_feature(f"Task {e}".encode()),
                            "current_activity": wire.bytes_feature(b"com.android.chrome/.Main"),
                            "image/height": wire.int64_feature(AITW_H),
                            "image/width": wire.int64_feature(AITW_W),
                            "image/channels": wire.int64_feature(3),
                            "image/encoded": wire.bytes_feature(pixels),
                            "image/ui_annotations_positions": wire.float_feature(
                                0.4, 0.1, 0.2, 0.8
                            ),
                            "image/ui_annotations_text": wire.bytes_feature(b"Buy"),
                            "image/ui_annotations_ui_types": wire.bytes_feature(b"TEXT"),
                            "results/action_type": wire.int64_feature(4),
                            "results/yx_touch": wire.float_feature(*touch),
                            "results/yx_lift": wire.float_feature(*lift),
                        }
                    )
                )

    _write_shard(folder / "general-00000-of-00001", steps_())


WRITERS = {
    "androtmem": write_androtmem,
    "androidcontrol": write_androidcontrol,
    "gui-odyssey": write_gui_odyssey,
    "aitw": write_aitw,
}


# ---------------------------------------------------------------- the import (a subprocess)


def phase_import(args) -> dict:
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from formats.catalogue import import_trajectories
    from trajectories.services import do_create_project

    call_command("migrate", verbosity=0, interactive=False)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    project = do_create_project("bench", user)
    started = time.perf_counter()
    counts = import_trajectories(project, Path(args.dest), args.format)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "seconds": seconds,
        "steps": counts["steps"],
        "rss_mb": peak / 1024 / (1024 if sys.platform == "darwin" else 1),
    }


# ---------------------------------------------------------------- the driver


def run_phase(env: dict[str, str], fmt: str, dest: Path) -> dict:
    command = [sys.executable, __file__, "--phase", "import", "--format", fmt, "--dest", str(dest)]
    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"the import of {fmt} failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--counts", default="1000,10000", help="steps: small,large")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--format", help=argparse.SUPPRESS)
    parser.add_argument("--dest", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(phase_import(args)))
        return
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
    import django

    django.setup()  # the driver writes TFRecords with formats.tfrecord's checksum
    counts = [int(c) for c in args.counts.split(",")]
    formats = [f for f in args.formats.split(",") if f]
    work = Path(tempfile.mkdtemp(prefix="waypoint-bench-imports-"))
    databases = Databases(work)
    rows = []
    try:
        for fmt in formats:
            for count in counts:
                folder = work / f"{fmt}_{count}"
                started = time.perf_counter()
                WRITERS[fmt](folder, count)
                made = time.perf_counter() - started
                print(f"[{fmt} {count}] written in {made:.1f}s; importing ...", flush=True)
                env = phase_env(databases, f"{fmt.replace('-', '_')}_{count}", work)
                result = run_phase(env, fmt, folder)
                rows.append({"format": fmt, "count": count, **result})
                shutil.rmtree(folder)
    finally:
        databases.drop_all()
        shutil.rmtree(work, ignore_errors=True)
    engine = "PostgreSQL" if databases.postgres else "SQLite"
    print()
    print(f"Dataset imports, {W}x{H} screenshots, {STEPS_PER_EPISODE} steps an episode, {engine}")
    print(f"command: {' '.join(sys.argv)}")
    header = f"{'format':>15} {'steps':>7} {'seconds':>8} {'steps/s':>8} {'peak RSS':>9}"
    print(header)
    print("-" * len(header))
    for r in rows:
        rate = r["steps"] / r["seconds"]
        print(
            f"{r['format']:>15} {r['steps']:>7} {r['seconds']:>8.1f} {rate:>8.0f}"
            f" {r['rss_mb']:>8.1f}M"
        )
    print()
    for fmt in formats:
        small, large = (next(r for r in rows if r["format"] == fmt and r["count"] == c)
                        for c in (counts[0], counts[-1]))  # fmt: skip
        ratio = large["rss_mb"] / small["rss_mb"]
        verdict = "ok" if ratio <= PEAK_RATIO_TARGET else "MISSED"
        print(
            f"{fmt:>15}: {large['steps'] / large['seconds']:,.0f} steps/s at {large['steps']:,}"
            f" steps; peak RSS {counts[-1]:,} / {counts[0]:,} steps = {ratio:.2f}"
            f" (target <= {PEAK_RATIO_TARGET}) {verdict}"
        )


if __name__ == "__main__":
    main()
