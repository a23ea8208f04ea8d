"""``androidcontrol``: one record per step in AndroidControl's action space.

Each line of ``<split>.jsonl`` holds the episode (trajectory) id, the step index, the
high-level goal, the step instruction (the step's summary), the screenshot and UI XML (paths
relative to the export folder) with the screenshot size, and the action:

    click / long_press {x, y} (pixels) · scroll {direction} · input_text {text} ·
    open_app {app_name} · navigate_back · navigate_home · wait

A scroll's direction is where the content moves into view, the opposite of the finger: a swipe
up is ``scroll down`` (AndroidControl's convention). Steps with no AndroidControl action (key,
enter, answer, terminate) are not in the split files: they are written to ``unmapped.jsonl``
with their Waypoint action, and the dataset card counts them by type.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from trajectories.models import Trajectory
from trajectories.validation import InvalidData

from .androtmem import swipe_direction
from .dataset import (
    DatasetWriter,
    ExportRun,
    Split,
    card_counts,
    check_plain_options,
    describe_filter,
)
from .waypoint import iter_records

FORMAT = "androidcontrol"
SCHEMA_VERSION = 1
UNMAPPED_FILE = "unmapped"
SCROLL = {"up": "down", "down": "up", "left": "right", "right": "left"}


def androidcontrol_action(
    action: dict[str, Any], labels: dict[str, str] | None = None
) -> dict[str, Any] | None:
    """The AndroidControl action of a canonical one, or None when it has none; ``labels``
    (package -> name) names an app opened without its name."""
    kind = action["type"]
    if kind in ("click", "long_press"):
        return {"action_type": kind, "x": action["x"], "y": action["y"]}
    if kind == "swipe":
        return {"action_type": "scroll", "direction": SCROLL[swipe_direction(action)]}
    if kind == "type":
        return {"action_type": "input_text", "text": action["text"]}
    if kind == "open_app":
        package = action["package"]
        name = action.get("app_label") or (labels or {}).get(package) or package
        return {"action_type": "open_app", "app_name": name}
    if kind == "back":
        return {"action_type": "navigate_back"}
    if kind == "home":
        return {"action_type": "navigate_home"}
    if kind == "wait":
        return {"action_type": "wait"}
    return None


def app_labels(record: dict[str, Any]) -> dict[str, str]:
    """Package -> app name, as the device named its apps (the virtual device's, in the
    trajectory's metadata)."""
    apps = (record.get("metadata") or {}).get("virtual_device", {}).get("apps", [])
    return {a["package"]: a["label"] for a in apps if a.get("package") and a.get("label")}


def step_records(
    record: dict[str, Any], copy: Callable[[str, str | None], str]
) -> list[tuple[dict[str, Any], bool]]:
    """(step record, mapped) for every step of a native record."""
    out = []
    labels = app_labels(record)
    for step in record["steps"]:
        screen = record["screens"][step["screen"]]
        action = androidcontrol_action(step["action"], labels)
        xml = screen["ui_xml"]
        item = {
            # An episode imported from AndroidControl keeps its own id, as text like every
            # other's (one type per column: Arrow refuses a column of numbers and strings).
            "episode_id": str(
                (record["metadata"].get(FORMAT) or {}).get("episode_id", record["id"])
            ),
            "step_index": step["index"],
            "goal": record["task"]["goal"],
            "step_instruction": step["summary"],
            "screenshot": copy(screen["screenshot"], None),
            "screenshot_width": screen["width"],
            "screenshot_height": screen["height"],
            "ui_xml": copy(xml, f"xml/{xml.rsplit('/', 1)[1]}") if xml else None,
            "package": screen["package"],
            "action": action,
        }
        if action is None:
            item["waypoint_action"] = step["action"]
        out.append((item, action is not None))
    return out


def export_androidcontrol(
    trajectories: QuerySet[Trajectory],
    dest: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    options: dict[str, Any] | None = None,
    filters: dict[str, Any] | None = None,
    split: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the trajectories' steps as AndroidControl records into the new folder ``dest``."""
    opts = check_plain_options(FORMAT, options)
    division = Split.parse(split, "train")
    if UNMAPPED_FILE in division.names:
        raise InvalidData(f"split.ratios: {UNMAPPED_FILE!r} is reserved for unmapped steps")
    run = ExportRun(division, trajectories, progress)
    unmapped: Counter = Counter()
    counts = {"trajectories": 0, "steps": 0, "records": 0, "unmapped": 0}
    with DatasetWriter(
        dest,
        FORMAT,
        SCHEMA_VERSION,
        splits=[*division.names, UNMAPPED_FILE],
        parquet=opts["parquet"],
        apart=[UNMAPPED_FILE],
    ) as writer:
        for name, record in run.records(iter_records(trajectories, lean=True)):
            for item, mapped in step_records(record, writer.image):
                if mapped:
                    writer.write(name, item)
                    run.per_split[name]["steps"] += 1
                    counts["records"] += 1
                    run.count_apps(record, name)
                else:
                    writer.write(UNMAPPED_FILE, {**item, "split": name})
                    unmapped[item["waypoint_action"]["type"]] += 1
                    counts["unmapped"] += 1
            counts["trajectories"] += 1
            counts["steps"] += len(record["steps"])
        counts["images"] = writer.images_written
        written = writer.counts_per_split()
        counts["splits"] = {k: v for k, v in written.items() if k in run.per_split}
        counts["unmapped_actions"] = dict(sorted(unmapped.items()))
        card = _card(counts, run.per_split, run.apps, filters, division)
        writer.finish(run.head(opts, filters), counts, card)
    run.finished()
    return counts


def _card(counts, per_split, apps, filters, division) -> str:
    files = ", ".join(f'"{n}": "{n}.jsonl"' for n in division.names)
    unmapped = counts["unmapped_actions"]
    unmapped_rows = "\n".join(f"| {kind} | {n} |" for kind, n in unmapped.items()) or "| - | 0 |"
    return f"""# Waypoint export: androidcontrol

One record per step in AndroidControl's action space (click, long_press, scroll, input_text,
open_app, navigate_back, navigate_home, wait) with the high-level goal, the step instruction,
the screenshot and the UI XML.

- Episodes (trajectories): {counts["trajectories"]}, steps: {counts["steps"]}, records:
  {counts["records"]}, files copied: {counts["images"]}.
- Selection: {describe_filter(filters)}.
- Split: by {division.by}, seed {division.seed}, ratios {dict(division.ratios)}.
- Coordinates are screenshot pixels; a scroll's direction is where the content moves into view
  (a finger swipe up is `scroll down`).

## Steps that AndroidControl cannot express

They are not in the split files; each is in `unmapped.jsonl` with its episode, step index,
split and Waypoint action (`waypoint_action`).

| Waypoint action | steps |
|---|---|
{unmapped_rows}

## Counts

{card_counts(per_split, apps, "steps")}

## Loading

```python
from datasets import load_dataset
ds = load_dataset("json", data_files={{{files}}})
```

Screenshot and UI XML paths are relative to this folder. `manifest.json` lists the sha256 of
every file.
"""
