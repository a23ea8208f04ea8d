"""``aitw``: trajectories in Android in the Wild's own layout, importable again as ``aitw``.

Each split is a GZIP TFRecord shard, ``<split>-00000-of-00001``, of ``tf.train.Example``
records, one per step, an episode's steps consecutive and numbered by ``step_id``, with the
features :mod:`formats.aitw` reads and the dataset's README lists: ``episode_id``,
``step_id``, ``episode_length``, ``goal_info``, ``current_activity`` (``package/activity``),
``device_type``, ``android_api_level``, ``image/encoded`` (the screenshot's raw pixels,
``image/height`` x ``image/width`` x ``image/channels`` bytes, as the authors'
``visualization_utils.py`` decodes them), ``image/ui_annotations_positions`` /
``_text`` / ``_ui_types`` (from the UI XML: an ``ImageView`` or an element with only a
content-desc is ``ICON_<DESC>``, any other element with text is ``TEXT``, normalised
(y, x, height, width)), ``results/action_type``, ``results/type_action``,
``results/yx_touch`` and ``results/yx_lift`` (normalised (y, x); (-1, -1) when unused).
Records are framed by :class:`formats.tfrecord.TFRecordWriter`; the protobufs are
:data:`formats.protos.Example`.

Actions: click -> DUAL_POINT with touch = lift; swipe -> DUAL_POINT from touch to lift (a
swipe shorter than AitW's tap distance, 0.04, would read as a tap: it is unmapped); type ->
TYPE; back / home / enter (and keys KEYCODE_BACK / _HOME / _ENTER) -> PRESS_BACK / _HOME /
_ENTER; terminate -> STATUS_TASK_COMPLETE / STATUS_TASK_IMPOSSIBLE. A step imported from AitW
whose action is unchanged is written with its original touch and lift, so import -> export ->
import gives the same trajectory, screenshots' bytes included (the reader makes the same PNG
of the same pixels); a stand-in for a missing screenshot is written as an empty
``image/encoded`` again.

AitW cannot hold, and the export leaves out: open_app, long_press, wait, answer and other keys
(in ``unmapped.jsonl``, see :mod:`formats.exported`); a swipe's duration; the UI XML beyond
its text and icon elements and their bounds (a hierarchy, resource ids, classes, flags);
targets, thoughts, summaries, memory, subgoals, memory targets, anchors and links; the final
screen after the last action; timings and trainable flags; the outcome unless the episode ends
with a status action; the task's id, intent and apps (AitW's are the packages its screens
show); device density and serial. A screenshot's bytes come back the same only when they are
the PNG the reader makes of raw pixels (a JPEG, or a PNG saved otherwise, comes back as that
PNG of the same pixels). A trajectory recorded in Waypoint imports again under a new id.
"""

from __future__ import annotations

import io
import math
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db.models import QuerySet
from PIL import Image

from trajectories.models import Trajectory
from trajectories.uixml import parse_ui_xml

from .aitw import (
    DUAL_POINT,
    FORMAT,
    MODES,
    PRESS_BACK,
    PRESS_ENTER,
    PRESS_HOME,
    STATUS_TASK_COMPLETE,
    STATUS_TASK_IMPOSSIBLE,
    TAP_DISTANCE,
    TYPE,
    canonical_action,
)
from .dataset import ExportRun, Split, check_no_options, describe_filter
from .exported import (
    API_LEVELS,
    Episodes,
    blob_bytes,
    episode_id,
    is_stand_in,
    layout_writer,
    originals,
)
from .protos import Example
from .tfrecord import TFRecordWriter
from .waypoint import iter_records

SCHEMA_VERSION = 1
PRESSES = {
    "back": PRESS_BACK,
    "home": PRESS_HOME,
    "enter": PRESS_ENTER,
    "KEYCODE_BACK": PRESS_BACK,
    "KEYCODE_HOME": PRESS_HOME,
    "KEYCODE_ENTER": PRESS_ENTER,
}
UNUSED_POINT = [-1.0, -1.0]


def float32(value: float) -> float:
    """A number as a ``float_list`` holds it (what the reader will read back)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def shard_name(split: str) -> str:
    return f"{split}-00000-of-00001"


def aitw_results(
    action: dict[str, Any], original: Any, width: int, height: int
) -> dict[str, Any] | None:
    """The AitW action (``action_type``, ``touch``, ``lift``, ``text``) of a canonical action,
    or None when AitW has none; an ``original`` AitW action that still means ``action`` is
    kept as it is."""
    if isinstance(original, dict):
        try:
            same = canonical_action(original, width, height) == action
        except (KeyError, TypeError, ValueError):
            same = False
        if same:
            return {
                "action_type": original["action_type"],
                "touch": list(original.get("touch") or UNUSED_POINT),
                "lift": list(original.get("lift") or UNUSED_POINT),
                "text": original.get("text", ""),
            }
    kind = action["type"]
    found: dict[str, Any] = {"touch": UNUSED_POINT, "lift": UNUSED_POINT, "text": ""}
    if kind in ("click", "swipe"):
        touch = [float32(action["y"] / height), float32(action["x"] / width)]
        lift = touch
        if kind == "swipe":
            lift = [float32(action["y2"] / height), float32(action["x2"] / width)]
            if math.dist(touch, lift) <= TAP_DISTANCE:
                return None  # AitW would read it as a tap
        return {**found, "action_type": DUAL_POINT, "touch": touch, "lift": lift}
    if kind == "type":
        return {**found, "action_type": TYPE, "text": action["text"]}
    press = PRESSES.get(action.get("keycode", "") if kind == "key" else kind)
    if press:
        return {**found, "action_type": press}
    if kind == "terminate":
        done = action.get("status") == "success"
        return {**found, "action_type": STATUS_TASK_COMPLETE if done else STATUS_TASK_IMPOSSIBLE}
    return None


def raw_pixels(screen: dict[str, Any]) -> tuple[bytes, int, int, int]:
    """(pixels, width, height, channels) of a screen's screenshot; no pixels for a stand-in."""
    if is_stand_in(screen):
        return b"", screen["width"], screen["height"], 3
    with Image.open(io.BytesIO(blob_bytes(screen["screenshot"]))) as image:
        if image.mode not in MODES.values():
            alpha = "A" in image.getbands() or "transparency" in image.info
            image = image.convert("RGBA" if alpha else "RGB")
        image.load()
        return image.tobytes(), image.width, image.height, len(image.getbands())


def ui_annotations(
    xml: bytes | None, width: int, height: int
) -> tuple[list[float], list[bytes], list[bytes]]:
    """(positions, texts, types) of a screen's UI XML: its elements with text, its icons."""
    positions: list[float] = []
    texts: list[str] = []
    kinds: list[str] = []
    if not xml:
        return positions, [], []
    tree = parse_ui_xml(xml)
    parents = {el.path.rsplit("/", 1)[0] for el in tree.elements if "/" in el.path}
    for el in tree.elements:
        if el.depth == 0:
            continue  # the window itself, as the reader writes it
        image = el.class_name.endswith(("ImageView", "ImageButton"))
        leaf = el.path not in parents
        if not (el.text or el.content_desc or (leaf and (image or "TextView" in el.class_name))):
            continue
        icon = image or (not el.text and bool(el.content_desc))
        left, top, right, bottom = el.bounds
        positions += [top / height, left / width, (bottom - top) / height, (right - left) / width]
        desc = el.content_desc.strip().upper().replace(" ", "_")
        kinds.append(("ICON_" + desc if desc else "ICON") if icon else "TEXT")
        texts.append("" if icon else el.text)
    return positions, [t.encode() for t in texts], [k.encode() for k in kinds]


class _Features:
    """A ``tf.train.Example`` filled feature by feature."""

    def __init__(self) -> None:
        self.example = Example()
        self.map = self.example.features.feature

    def bytes(self, key: str, *values: bytes | str) -> None:
        self.map[key].bytes_list.value.extend(
            v.encode("utf-8") if isinstance(v, str) else v for v in values
        )

    def int64(self, key: str, *values: int) -> None:
        self.map[key].int64_list.value.extend(values)

    def float(self, key: str, *values: float) -> None:
        self.map[key].float_list.value.extend(values)

    def serialized(self) -> bytes:
        return self.example.SerializeToString(deterministic=True)


def _step_example(
    record: dict[str, Any],
    episode: str,
    number: int,
    length: int,
    screen: dict[str, Any],
    results: dict[str, Any],
) -> bytes:
    f = _Features()
    device = record["device"]
    f.bytes("episode_id", episode)
    f.int64("step_id", number)
    f.int64("episode_length", length)
    f.bytes("goal_info", record["task"]["goal"])
    package, activity = screen["package"] or "", screen["activity"] or ""
    f.bytes("current_activity", f"{package}/{activity}" if package else activity)
    f.bytes("device_type", device.get("model") or "")
    if device.get("android_version") in API_LEVELS:
        f.int64("android_api_level", API_LEVELS[device["android_version"]])
    pixels, width, height, channels = raw_pixels(screen)
    f.bytes("image/encoded", pixels)
    f.int64("image/width", width)
    f.int64("image/height", height)
    f.int64("image/channels", channels)
    xml = blob_bytes(screen["ui_xml"]) if screen["ui_xml"] else None
    positions, texts, kinds = ui_annotations(xml, width, height)
    f.float("image/ui_annotations_positions", *positions)
    f.bytes("image/ui_annotations_text", *texts)
    f.bytes("image/ui_annotations_ui_types", *kinds)
    f.int64("results/action_type", results["action_type"])
    f.bytes("results/type_action", results["text"])
    f.float("results/yx_touch", *results["touch"])
    f.float("results/yx_lift", *results["lift"])
    return f.serialized()


def export_aitw(
    trajectories: QuerySet[Trajectory],
    dest: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    options: dict[str, Any] | None = None,
    filters: dict[str, Any] | None = None,
    split: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the trajectories as AitW TFRecord shards, one per split, into the new folder
    ``dest``."""
    check_no_options(FORMAT, options)
    run = ExportRun(Split.parse(split, "train"), trajectories, progress)
    with layout_writer(dest, FORMAT, SCHEMA_VERSION) as writer:
        names = run.division.names
        shards = {name: TFRecordWriter(writer.binary(shard_name(name))) for name in names}
        episodes = Episodes(run, writer)
        for name, record in run.records(iter_records(trajectories, lean=True)):
            episode = episode_id(record, FORMAT)
            steps = []
            for step, original in zip(record["steps"], originals(record, FORMAT), strict=True):
                screen = record["screens"][step["screen"]]
                results = aitw_results(step["action"], original, screen["width"], screen["height"])
                if results is None:
                    episodes.unmapped.add(episode, step, name)
                else:
                    steps.append((screen, results))
            for number, (screen, results) in enumerate(steps):
                shards[name].write(
                    _step_example(record, episode, number, len(steps), screen, results)
                )
            episodes.add(record, name, len(steps))
        for shard in shards.values():
            shard.close()
        card = _card(episodes.counts, filters, run.division, episodes.card_end())
        counts = episodes.finish(filters, card)
    run.finished()
    return counts


def _card(counts, filters, division, end: str) -> str:
    shards = ", ".join(f"`{shard_name(n)}`" for n in division.names)
    return f"""# Waypoint export: aitw

Trajectories as Android in the Wild episodes: GZIP TFRecord shards ({shards}) of
`tf.train.Example` records, one per step, with AitW's features (`episode_id`, `step_id`,
`goal_info`, `image/encoded` as raw pixels, UI annotations, `results/*`). Waypoint imports this
folder again as `aitw`; AitW's own tools read the shards with
`tf.data.TFRecordDataset(files, compression_type="GZIP")`.

- Trajectories: {counts["trajectories"]}, episodes written: {counts["episodes"]}, steps:
  {counts["steps"]}.
- Selection: {describe_filter(filters)}.
- Split: by {division.by}, seed {division.seed}, ratios {dict(division.ratios)}.
- Points are normalised (y, x); a tap has its lift at its touch.

## What AitW cannot hold

Left out: the UI XML beyond its text and icon elements (a flat list of boxes), tap targets,
thoughts, summaries, memory, subgoals, memory targets, anchors and their links, the final
screen after the last action, timings, trainable flags, a swipe's duration, the outcome of an
episode that does not end with a status action, the task's id and intent, the device's
density.

Steps with no AitW action are not in their episode (its steps are numbered again without
them); each is in `unmapped.jsonl` with its episode, Waypoint step index, split and Waypoint
action (`waypoint_action`). Trajectories none of whose steps AitW can express have no
episode: {counts["empty_episodes"]}.

{end}"""
