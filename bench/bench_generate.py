"""Environments generated at STAMP's scale (issue 37): ``generate_environments`` run for N
verified environments on virtual devices by Celery workers, its report (failures by stage,
distinct layouts, palettes, densities, domains, memory types, solver paths, environments per
hour), then the verified runs exported as stamp-sft and loaded by Hugging Face ``datasets`` (the
loader LLaMA-Factory and ms-swift read JSON datasets with), and the projection of the time
STAMP's 4,194 trajectories would take on N workers.

    .venv/bin/python bench/bench_generate.py [--count 400] [--seed 1] [--devices 2]
        [--workers 2] [--generator procedural] [--domains ...]

Everything lives in a temporary folder (the database of DATABASE_URL, else SQLite; a file broker,
a private adb server, the installed packages). The machine is shared: say its load with the
figures. The tests generate a handful; this is the long loop.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import datasets

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Sets up Django on a throwaway database and storage, and a private adb server.
from bench_agents import TMP, Devices, load, start_workers, stop_workers  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from environments.models import EnvironmentStatus, Generation  # noqa: E402
from formats.catalogue import export_trajectories  # noqa: E402
from trajectories.models import Trajectory  # noqa: E402
from trajectories.services import do_create_project  # noqa: E402

STAMP_TRAJECTORIES = 4194
STAMP_ENVIRONMENTS = 356


def export_and_load(generation: Generation) -> None:
    """The verified runs as stamp-sft, loaded as LLaMA-Factory and ms-swift load JSON data."""
    ids = generation.environments.filter(status=EnvironmentStatus.VERIFIED).values("trajectory_id")
    trajectories = Trajectory.objects.filter(pk__in=ids)
    out = Path(TMP) / "sft"
    began = time.monotonic()
    counts = export_trajectories(trajectories, out, "stamp-sft")
    took = time.monotonic() - began
    print(
        f"stamp-sft: {counts['trajectories']} trajectories, {counts['samples']} samples "
        f"({counts['memory_samples']} memory), {counts['images']} images in {took:.1f} s; "
        f"reasoning {counts['reasoning']}, critic-masked steps {counts['critic_masked_steps']}"
    )
    loaded = datasets.load_dataset(
        "json", data_files={"train": str(out / "train.jsonl")}, cache_dir=str(Path(TMP) / "hf")
    )["train"]
    claims = sum(
        "".join(m["content"] for m in s["messages"]).count("<image>") != len(s["images"])
        for s in loaded
    )
    empty = sum("<think></think>" in s["messages"][-1]["content"] for s in loaded)
    weights = sorted({s["weight"] for s in loaded})
    info = json.loads((out / "dataset_info.json").read_text())
    print(
        f"datasets.load_dataset: {len(loaded)} samples, {claims} with placeholders that do not "
        f"match their images, {empty} empty <think>; weights {weights}; dataset_info "
        f"{sorted(info)} (sharegpt)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--generator", default="procedural")
    parser.add_argument("--domains", default="")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench", password="bench-password")
    project = do_create_project("Bench generate", user)
    devices = Devices(project)
    workers = []
    try:
        devices.up_to(args.devices)
        workers = start_workers(args.workers)
        print(f"{args.devices} virtual devices, {args.workers} Celery workers; {load()}")
        began = time.monotonic()
        call_command(
            "generate_environments",
            "--count", str(args.count), "--seed", str(args.seed), "--project", str(project.pk),
            "--generator", args.generator, "--domains", args.domains,
        )  # fmt: skip
        wall = time.monotonic() - began
        generation = Generation.objects.get(project=project)
        verified = generation.environments.filter(status=EnvironmentStatus.VERIFIED).count()
        per_hour = verified * 3600 / wall
        print(f"{load()}")
        print(
            f"{verified} verified in {wall:.0f} s: {per_hour:.0f} environments per hour on "
            f"{args.workers} workers ({per_hour / args.workers:.0f} per worker); STAMP's "
            f"{STAMP_ENVIRONMENTS} RL environments in {STAMP_ENVIRONMENTS / per_hour * 60:.0f} min"
        )
        for n in (1, 2, 8, 32):
            hours = STAMP_TRAJECTORIES / (per_hour / args.workers * n)
            print(
                f"  STAMP's {STAMP_TRAJECTORIES} SFT trajectories (one verified run per "
                f"environment) on {n} worker(s) and device(s): {hours:.1f} h"
            )
        export_and_load(generation)
    finally:
        stop_workers(workers)
        devices.stop()
        print(f"packages installed in {settings.WAYPOINT_PACKAGES_DIR}")


if __name__ == "__main__":
    main()
