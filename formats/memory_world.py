"""``memory-world``: STAMP's benchmark tasks, one per trajectory (a task instance).

Each line of ``<split>.jsonl``: the instruction, apps, intent and difficulty; the memory items
(key, value, encode step, retrieve steps, and where the value appears: the encode step's
screenshot, its app and the evidence); the gold answer and its grading rule; the reference
length; and the environment: for a task recorded on the virtual device, its virtual task id,
apps and seed, and its level when posed at L1 or L2 (which reproduce the environment exactly),
else the device it was recorded on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from trajectories.models import Intent, Trajectory

from .dataset import (
    DatasetWriter,
    ExportRun,
    Split,
    card_counts,
    check_plain_options,
    describe_filter,
)
from .waypoint import iter_records

FORMAT = "memory-world"
SCHEMA_VERSION = 1
VIRTUAL_PREFIX = "virtual:"
INTENT_NAMES = dict(Intent.choices)


def environment(record: dict[str, Any]) -> dict[str, Any]:
    """What reproduces the task's environment. On the virtual device: its task, apps and seed
    (``metadata["virtual_device"]`` from the recording, or an imported ``virtual_seed``/``seed``),
    and whether the apps were reset to that seed before the recording began."""
    metadata, task = record["metadata"], record["task"]
    device = metadata.get("virtual_device") or {}
    virtual_task = metadata.get("virtual_task")
    if virtual_task is None and task["id"].startswith(VIRTUAL_PREFIX):
        virtual_task = task["id"].split(":")[1]
    if virtual_task is not None or device:
        seed = device.get("seed", metadata.get("virtual_seed", metadata.get("seed")))
        env = {"kind": "virtual", "virtual_task": virtual_task, "apps": task["apps"], "seed": seed}
        if device:
            env["reset"] = bool(device.get("reset"))
            env["device_apps"] = device.get("apps", [])
            if "level" in device:  # posed at L1 or L2 (waypoint reset --level)
                env["level"] = device["level"]
        return env
    device = record["device"]
    return {
        "kind": "device",
        "model": device.get("model", ""),
        "android_version": device.get("android_version", ""),
        "apps": task["apps"],
    }


def task_fields(record: dict[str, Any]) -> dict[str, Any]:
    """STAMP's task fields (appendix A.7, Table 18): the guideline, the pages that must be
    visited, the final action and its output format, and the seeds the instance is made of
    (the task seed: the task's template; the platform seed: the apps and their data seed).
    Known for tasks of the virtual device; empty for others."""
    metadata = record["metadata"]
    spec = metadata.get("virtual_task_spec") or {}
    env = environment(record)
    virtual = env["kind"] == "virtual"
    device_apps = (metadata.get("virtual_device") or {}).get("apps", [])
    return {
        "guideline": spec.get("guideline", ""),
        "must_visit": spec.get("must_visit", []),
        "final_action": {
            "type": "answer",
            "output_format": spec.get("output_format", ""),
            "grading_rule": record["task"]["grading_rule"],
        },
        "task_seed": env.get("virtual_task") if virtual else None,
        "platform_seed": {"apps": device_apps, "seed": env.get("seed")} if virtual else None,
    }


def task_record(record: dict[str, Any], copy: Callable[[str], str]) -> dict[str, Any]:
    steps = {step["index"]: step for step in record["steps"]}
    items = []
    for target in record["memory_targets"]:
        step = steps.get(target["encode_step"])
        screen = record["screens"][step["screen"]] if step else None
        items.append(
            {
                "key": target["key"],
                "value": target["value"],
                "encode_step": target["encode_step"],
                "retrieve_steps": target["retrieve_steps"],
                "where": {
                    "screenshot": copy(screen["screenshot"]) if screen else None,
                    "package": screen["package"] if screen else "",
                    "evidence": target["evidence"],
                },
            }
        )
    task = record["task"]
    return {
        "task_id": record["id"],
        "task_uid": task["id"],
        "instruction": task["goal"],
        "apps": task["apps"],
        "intent": INTENT_NAMES.get(task["intent"], task["intent"]),
        "difficulty": task["difficulty"],
        "memory_items": items,
        "memory_specs": task["memory_items"],
        "gold_answer": task["gold_answer"],
        "grading_rule": task["grading_rule"],
        "reference_steps": len(record["steps"]),
        "outcome": record["outcome"],
        "environment": environment(record),
        **task_fields(record),
    }


def export_memory_world(
    trajectories: QuerySet[Trajectory],
    dest: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    options: dict[str, Any] | None = None,
    filters: dict[str, Any] | None = None,
    split: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the trajectories as Memory-World tasks into the new folder ``dest``."""
    opts = check_plain_options(FORMAT, options)
    division = Split.parse(split, "test")
    run = ExportRun(division, trajectories, progress)
    counts = {
        "trajectories": 0,
        "steps": 0,
        "memory_items": 0,
        "without_memory_items": 0,
        "without_gold_answer": 0,
        "virtual": 0,
        "virtual_without_seed": 0,
        "virtual_without_reset": 0,
    }
    with DatasetWriter(
        dest, FORMAT, SCHEMA_VERSION, splits=division.names, parquet=opts["parquet"]
    ) as writer:
        for name, record in run.records(iter_records(trajectories, lean=True)):
            task = task_record(record, writer.image)
            writer.write(name, task)
            run.per_split[name]["tasks"] += 1
            run.count_apps(record, name)
            counts["trajectories"] += 1
            counts["steps"] += len(record["steps"])
            counts["memory_items"] += len(task["memory_items"])
            counts["without_memory_items"] += not task["memory_items"]
            counts["without_gold_answer"] += not task["gold_answer"]
            if task["environment"]["kind"] == "virtual":
                counts["virtual"] += 1
                counts["virtual_without_seed"] += task["environment"]["seed"] is None
                counts["virtual_without_reset"] += task["environment"].get("reset") is False
        counts["images"] = writer.images_written
        counts["splits"] = writer.counts_per_split()
        card = _card(counts, run.per_split, run.apps, filters, division)
        writer.finish(run.head(opts, filters), counts, card)
    run.finished()
    return counts


def _card(counts, per_split, apps, filters, division) -> str:
    files = ", ".join(f'"{n}": "{n}.jsonl"' for n in division.names)
    return f"""# Waypoint export: memory-world

Memory-World tasks (STAMP's benchmark): one task instance per trajectory with its memory
items (key, value, encode step and where it appears), the gold answer and its grading rule,
and the environment that reproduces it.

- Tasks: {counts["trajectories"]} ({counts["virtual"]} on the virtual device), memory items:
  {counts["memory_items"]}, reference steps: {counts["steps"]}, images: {counts["images"]}.
- Tasks without a gold answer: {counts["without_gold_answer"]}; without memory items (nothing
  labelled, and no known variable of the virtual device shown): {counts["without_memory_items"]}.
- Virtual-device tasks with no recorded seed (their environment cannot be rebuilt exactly):
  {counts["virtual_without_seed"]}.
- Virtual-device tasks recorded without resetting the apps to their seed first (the memory
  variables are the seed's, but a cart or a note of an earlier recording may have been there):
  {counts["virtual_without_reset"]}.
- Selection: {describe_filter(filters)}.
- Split: by {division.by}, seed {division.seed}, ratios {dict(division.ratios)}.

## Counts

{card_counts(per_split, apps, "tasks")}

## Loading

```python
from datasets import load_dataset
ds = load_dataset("json", data_files={{{files}}})
```

Screenshot paths are relative to this folder. `manifest.json` lists the sha256 of every file.
"""
