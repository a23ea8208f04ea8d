"""``gui-odyssey``: trajectories in GUI-Odyssey's own layout, importable again as ``gui-odyssey``.

The layout is the one :mod:`formats.gui_odyssey` reads and the authors' ``format_converter.py``
takes (OpenGVLab/GUI-Odyssey, ``introduction.md``)::

    annotations/<episode>.json          episode_id, device_info, task_info, step_length, steps[]
    screenshots/<episode>_<step>.<ext>  each step's screenshot, its bytes as stored
    splits/waypoint_split.json          {"train": [annotation files], "test": [...], ...}
    unmapped.jsonl                      the steps GUI-Odyssey cannot express
    manifest.json, README.md

An episode's goal is ``instruction``; ``task``, ``meta_task`` and ``category`` are those an
imported episode had (empty for a recorded one); ``app`` is the task's apps; ``device_info`` is
the device (``w``, ``h``, ``device_name``, ``release_version`` and its ``sdk_version``). Each
step is (screenshot, action, info, ps) with coordinates in thousandths of the screenshot (an
integer when it maps back to the same pixel, else two decimals):

    click / long_press -> CLICK / LONG_PRESS [[x, y]] · swipe -> SCROLL [[x, y], [x2, y2]] ·
    type -> TEXT text · home / back / key KEYCODE_APP_SWITCH -> CLICK KEY_HOME / KEY_BACK /
    KEY_APPSELECT (key KEYCODE_HOME / KEYCODE_BACK too) · terminate -> COMPLETE / INCOMPLETE

A step imported from GUI-Odyssey whose action is unchanged is written as it came (``action``,
``info`` and ``ps``: a gesture's every point, a scroll's path, ``IMPOSSIBLE``), so import ->
export -> import gives the same trajectory. A step's stand-in for a missing screenshot is left
missing again (its file is not written).

GUI-Odyssey cannot hold, and the export leaves out: open_app, wait, enter, answer and other
keys (in ``unmapped.jsonl``, see :mod:`formats.exported`); the UI XML and targets; thoughts,
summaries, memory, subgoals, memory targets, anchors and links; the final screen after the
last action; timings and trainable flags; the outcome unless the episode ends with COMPLETE /
INCOMPLETE; device density and serial. A trajectory recorded in Waypoint imports again under
a new id (GUI-Odyssey's ids are its episode ids).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from trajectories.models import Trajectory
from trajectories.validation import InvalidData

from .dataset import ExportRun, Split, check_no_options, describe_filter
from .exported import (
    API_LEVELS,
    Episodes,
    blob_extension,
    episode_id,
    is_stand_in,
    layout_writer,
    originals,
)
from .gui_odyssey import ANNOTATIONS, FORMAT, SCREENSHOTS, canonical_action
from .imported import Fields, on_screen
from .waypoint import iter_records

SCHEMA_VERSION = 1
SPLIT_FILE = "splits/waypoint_split.json"
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
KEYS = {
    "home": "KEY_HOME",
    "back": "KEY_BACK",
    "KEYCODE_HOME": "KEY_HOME",
    "KEYCODE_BACK": "KEY_BACK",
    "KEYCODE_APP_SWITCH": "KEY_APPSELECT",
}


def thousandths(pixel: int, size: int) -> int | float:
    """A pixel as GUI-Odyssey's 0-1000 coordinate, read back (as the reader reads it) as the
    same pixel."""
    pixel = on_screen(pixel, size)
    whole = round(pixel * 1000 / size)
    if on_screen(whole / 1000 * size, size) == pixel:
        return whole
    return round(pixel * 1000 / size, 2)


def odyssey_step(
    action: dict[str, Any], original: Any, width: int, height: int
) -> dict[str, Any] | None:
    """(action, info, ps) of a canonical action, or None when GUI-Odyssey has none; an
    ``original`` GUI-Odyssey step that still means ``action`` is kept as it is."""
    if isinstance(original, dict) and isinstance(original.get("action"), str):
        kind = original["action"].strip().upper()
        try:
            same = (
                canonical_action(kind, original.get("info"), Fields(original, ""), width, height)
                == action
            )
        except InvalidData:
            same = False
        if same:
            info, ps = original.get("info"), original.get("ps", "")
            return {"action": original["action"], "info": info, "ps": ps}
    kind = action["type"]

    def point(x: int, y: int) -> list[int | float]:
        return [thousandths(x, width), thousandths(y, height)]

    if kind in ("click", "long_press"):
        name = "CLICK" if kind == "click" else "LONG_PRESS"
        return {"action": name, "info": [point(action["x"], action["y"])], "ps": ""}
    if kind == "swipe":
        info = [point(action["x"], action["y"]), point(action["x2"], action["y2"])]
        return {"action": "SCROLL", "info": info, "ps": ""}
    if kind == "type":
        return {"action": "TEXT", "info": action["text"], "ps": ""}
    key = KEYS.get(action.get("keycode", "") if kind == "key" else kind)
    if key:
        return {"action": "CLICK", "info": key, "ps": ""}
    if kind == "terminate":
        done = action.get("status") == "success"
        return {"action": "COMPLETE" if done else "INCOMPLETE", "info": "", "ps": ""}
    return None


def _device_info(record: dict[str, Any]) -> dict[str, Any]:
    device, first = record["device"], record["screens"][record["steps"][0]["screen"]]
    version = device.get("android_version") or ""
    return {
        "product": "",
        "release_version": version,
        "sdk_version": str(API_LEVELS[version]) if version in API_LEVELS else "",
        "h": device.get("height") or first["height"],
        "w": device.get("width") or first["width"],
        "device_name": device.get("model") or "",
    }


def _task_info(record: dict[str, Any]) -> dict[str, Any]:
    meta = (record.get("metadata") or {}).get(FORMAT) or {}
    return {
        "category": meta.get("category", ""),
        "app": list(record["task"]["apps"] or []),
        "meta_task": meta.get("meta_task", ""),
        "task": meta.get("task", ""),
        "instruction": record["task"]["goal"],
    }


class _Names:
    """Annotation file stems: the episode id where it is a safe file name not taken, else the
    trajectory's id."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def stem(self, episode: str, uid: str) -> str:
        stem = episode if SAFE_NAME.fullmatch(episode) and episode not in self.taken else uid
        self.taken.add(stem)
        return stem


def export_gui_odyssey(
    trajectories: QuerySet[Trajectory],
    dest: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    options: dict[str, Any] | None = None,
    filters: dict[str, Any] | None = None,
    split: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the trajectories as GUI-Odyssey episodes into the new folder ``dest``."""
    check_no_options(FORMAT, options)
    run = ExportRun(Split.parse(split, "train"), trajectories, progress)
    listed: dict[str, list[str]] = {"train": [], "test": []}
    listed.update((name, []) for name in run.division.names)
    names = _Names()
    with layout_writer(dest, FORMAT, SCHEMA_VERSION) as writer:
        episodes = Episodes(run, writer)
        for name, record in run.records(iter_records(trajectories, lean=True)):
            episode = episode_id(record, FORMAT)
            stem = names.stem(episode, record["id"])
            steps = []
            for step, original in zip(record["steps"], originals(record, FORMAT), strict=True):
                screen = record["screens"][step["screen"]]
                written = odyssey_step(step["action"], original, screen["width"], screen["height"])
                if written is None:
                    episodes.unmapped.add(episode, step, name)
                    continue
                shot = f"{stem}_{len(steps)}.{blob_extension(screen['screenshot'])}"
                if not is_stand_in(screen):
                    writer.image(screen["screenshot"], f"{SCREENSHOTS}/{shot}")
                steps.append({"step": len(steps), "screenshot": shot, **written})
            if steps:
                annotation = {
                    "episode_id": episode,
                    "device_info": _device_info(record),
                    "task_info": _task_info(record),
                    "step_length": len(steps),
                    "steps": steps,
                }
                text = json.dumps(annotation, ensure_ascii=False, indent=1) + "\n"
                writer.write_text(f"{ANNOTATIONS}/{stem}.json", text)
                listed[name].append(f"{stem}.json")
            episodes.add(record, name, len(steps))
        writer.write_text(SPLIT_FILE, json.dumps(listed, ensure_ascii=False, indent=1) + "\n")
        episodes.counts["images"] = writer.images_written
        card = _card(episodes.counts, filters, run.division, episodes.card_end())
        counts = episodes.finish(filters, card)
    run.finished()
    return counts


def _card(counts, filters, division, end: str) -> str:
    return f"""# Waypoint export: gui-odyssey

Trajectories as GUI-Odyssey episodes: `annotations/*.json` (one episode each), their
screenshots in `screenshots/` and the split in `{SPLIT_FILE}` (lists of annotation files per
split, as GUI-Odyssey's `splits/*.json`). Waypoint imports this folder again as `gui-odyssey`;
GUI-Odyssey's `format_converter.py` reads it once placed in its `data/` folder.

- Trajectories: {counts["trajectories"]}, episodes written: {counts["episodes"]}, steps:
  {counts["steps"]}, screenshots: {counts["images"]}.
- Selection: {describe_filter(filters)}.
- Split: by {division.by}, seed {division.seed}, ratios {dict(division.ratios)}.
- Coordinates are thousandths (0-1000) of the screenshot.

## What GUI-Odyssey cannot hold

Left out: the UI XML and tap targets, thoughts, summaries, memory, subgoals, memory targets,
anchors and their links, the final screen after the last action, timings, trainable flags,
the outcome of an episode that does not end with COMPLETE or INCOMPLETE, the device's density.

Steps with no GUI-Odyssey action are not in their episode (its steps are numbered again
without them); each is in `unmapped.jsonl` with its episode, Waypoint step index, split and
Waypoint action (`waypoint_action`). Trajectories none of whose steps GUI-Odyssey can express
have no episode: {counts["empty_episodes"]}.

{end}"""
