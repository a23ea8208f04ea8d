"""``androidcontrol-tfrecord``: trajectories in AndroidControl's own layout, importable again as
``androidcontrol``.

The ``androidcontrol`` export writes AndroidControl's action space as JSON Lines for training;
this one writes the dataset itself, as :mod:`formats.androidcontrol_import` reads it (the
dataset's README, google-research ``android_control``)::

    android_control-00000-of-00001   GZIP TFRecord, one tf.train.Example per episode
    splits.json                      {"train": [episode ids], "test": [...], ...}
    unmapped.jsonl                   the steps AndroidControl cannot express
    manifest.json, README.md

An episode's features: ``episode_id`` (int64: an imported episode's own, else 60 bits of the
sha256 of the trajectory id), ``goal``, ``screenshots`` (each step's screenshot as stored, then
the final screen; a trajectory without one repeats its last step's screen; a stand-in for a
missing screenshot is empty again), ``screenshot_widths`` / ``_heights``,
``accessibility_trees`` (the UI XML as an android_env ``AndroidAccessibilityForest``: each
top node of the dump is a window's tree, an application window when its package is the
screen's, so the reader finds the same package in front), ``actions`` (AndroidControl's JSON,
:func:`formats.androidcontrol.androidcontrol_action`) and ``step_instructions`` (each step's
summary, when any step has one); a screen without UI XML has an empty forest (an empty dump
when read again). A step imported from AndroidControl whose action is unchanged
is written with its original JSON (a scroll's direction, a ``type`` at a point), so import ->
export -> import gives the same trajectory: screenshots, XML, actions, step instructions and
the subgoals they make.

AndroidControl cannot hold, and the export leaves out: key, enter, answer and terminate steps
(in ``unmapped.jsonl``, see :mod:`formats.exported`); a swipe's exact points (it is a scroll
direction, read back as a swipe over half the screen); the XML's attributes a forest has no
field for (rotation, ``index``); targets, thoughts, memory, subgoals other than runs of equal
step instructions, memory targets, anchors and links; activities; timings and trainable flags;
the outcome; the task's id, intent and apps (AndroidControl's are the packages of its
application windows); the device's model, version, density and serial. A trajectory recorded in
Waypoint imports again under a new id.

Why a format of its own rather than an option of ``androidcontrol``: the two are different
files (JSON Lines with Parquet, or the TFRecord dataset that takes no options), only this one
imports again, and an export's manifest names its format, which is how an import tells them
apart (:data:`formats.detect.MANIFEST_FORMATS`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db.models import QuerySet
from lxml import etree

from trajectories.models import Trajectory
from trajectories.uixml import UIXmlError, clean_ui_xml, parse_bounds
from trajectories.validation import InvalidData

from .androidcontrol import androidcontrol_action, app_labels
from .androidcontrol_import import APPLICATION, FLAGS, canonical_action
from .androidcontrol_import import FORMAT as IMPORT_FORMAT
from .dataset import ExportRun, Split, check_no_options, describe_filter
from .exported import Episodes, blob_bytes, is_stand_in, layout_writer, originals
from .protos import WINDOW_TYPES, Example, Forest
from .tfrecord import TFRecordWriter
from .waypoint import iter_records

FORMAT = "androidcontrol-tfrecord"
SCHEMA_VERSION = 1
SHARD = "android_control-00000-of-00001"
SPLITS_FILE = "splits.json"
SYSTEM = WINDOW_TYPES.index("TYPE_SYSTEM")


def episode_number(record: dict[str, Any]) -> int:
    """An imported episode's own id, else a stable number of the trajectory's id."""
    meta = (record.get("metadata") or {}).get(IMPORT_FORMAT) or {}
    found = meta.get("episode_id")
    if isinstance(found, int) and not isinstance(found, bool):
        return found
    return int(hashlib.sha256(record["id"].encode()).hexdigest()[:15], 16)


def _parse(xml: bytes) -> Any:
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    return etree.fromstring(clean_ui_xml(xml), parser)


def xml_to_forest(xml: bytes, package: str) -> Any:
    """An accessibility forest of a uiautomator dump (see the module's docstring)."""
    forest = Forest()
    doc = _parse(xml)
    ids: dict[Any, int] = {}
    for number, element in enumerate(doc.iter("node")):
        ids[element] = number
    for layer, top in enumerate(child for child in doc if child.tag == "node"):
        window = forest.windows.add()
        window.id, window.layer = layer, layer
        front = bool(package) and top.get("package", "") == package
        window.window_type = APPLICATION if front else SYSTEM
        stack = [(top, 0)]
        while stack:
            element, depth = stack.pop()
            node = window.tree.nodes.add()
            node.unique_id = ids[element]
            node.window_id = layer
            node.depth = depth
            try:
                left, top_, right, bottom = parse_bounds(element.get("bounds", ""))
            except UIXmlError:
                left = top_ = right = bottom = 0
            box = node.bounds_in_screen
            box.left, box.top, box.right, box.bottom = left, top_, right, bottom
            node.class_name = element.get("class", "")
            node.content_description = element.get("content-desc", "")
            node.hint_text = element.get("hint", "")
            node.package_name = element.get("package", "")
            node.text = element.get("text", "")
            node.view_id_resource_name = element.get("resource-id", "")
            node.is_visible_to_user = True
            for attribute, field in FLAGS:
                setattr(node, field, element.get(attribute) == "true")
            kids = [child for child in element if child.tag == "node"]
            node.child_ids.extend(ids[kid] for kid in kids)
            stack.extend((kid, depth + 1) for kid in reversed(kids))
    return forest


def control_action(
    action: dict[str, Any], original: Any, labels: dict[str, str], width: int, height: int
) -> dict[str, Any] | None:
    """AndroidControl's action of a canonical one (None when it has none); an ``original`` one
    that still means ``action`` is kept as it is."""
    if isinstance(original, dict):
        try:
            same = canonical_action(original, width, height, "") == action
        except (InvalidData, ValueError, TypeError):
            same = False
        if same:
            return original
    return androidcontrol_action(action, labels)


def _screenshot(screen: dict[str, Any]) -> bytes:
    return b"" if is_stand_in(screen) else blob_bytes(screen["screenshot"])


def _tree(screen: dict[str, Any]) -> bytes:
    if not screen["ui_xml"]:
        return b""  # an empty forest: the reader makes an empty dump of it
    forest = xml_to_forest(blob_bytes(screen["ui_xml"]), screen["package"] or "")
    return forest.SerializeToString(deterministic=True)


def _episode(
    record: dict[str, Any], kept: list[tuple[dict, dict, str]], final: dict[str, Any]
) -> bytes:
    example = Example()
    f = example.features.feature
    screens = [screen for screen, _, _ in kept] + [final]
    f["episode_id"].int64_list.value.append(episode_number(record))
    f["goal"].bytes_list.value.append(record["task"]["goal"].encode("utf-8"))
    for screen in screens:
        f["screenshots"].bytes_list.value.append(_screenshot(screen))
        f["accessibility_trees"].bytes_list.value.append(_tree(screen))
        f["screenshot_widths"].int64_list.value.append(screen["width"])
        f["screenshot_heights"].int64_list.value.append(screen["height"])
    for _, action, _ in kept:
        text = json.dumps(action, ensure_ascii=False, separators=(",", ":"))
        f["actions"].bytes_list.value.append(text.encode("utf-8"))
    if any(summary for _, _, summary in kept):
        f["step_instructions"].bytes_list.value.extend(s.encode("utf-8") for _, _, s in kept)
    return example.SerializeToString(deterministic=True)


def export_androidcontrol_tfrecord(
    trajectories: QuerySet[Trajectory],
    dest: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    options: dict[str, Any] | None = None,
    filters: dict[str, Any] | None = None,
    split: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the trajectories as AndroidControl episodes into the new folder ``dest``."""
    check_no_options(FORMAT, options)
    run = ExportRun(Split.parse(split, "train"), trajectories, progress)
    listed: dict[str, list[int]] = {name: [] for name in run.division.names}
    with layout_writer(dest, FORMAT, SCHEMA_VERSION) as writer:
        shard = TFRecordWriter(writer.binary(SHARD))
        episodes = Episodes(run, writer)
        for name, record in run.records(iter_records(trajectories, lean=True)):
            number = episode_number(record)
            labels = app_labels(record)
            kept = []
            for step, original in zip(
                record["steps"], originals(record, IMPORT_FORMAT), strict=True
            ):
                screen = record["screens"][step["screen"]]
                action = control_action(
                    step["action"], original, labels, screen["width"], screen["height"]
                )
                if action is None:
                    episodes.unmapped.add(number, step, name)
                else:
                    kept.append((screen, action, step["summary"] or ""))
            if kept:
                last = record["final_screen"]
                final = record["screens"][last] if last is not None else kept[-1][0]
                shard.write(_episode(record, kept, final))
                listed[name].append(number)
            episodes.add(record, name, len(kept))
        shard.close()
        writer.write_text(SPLITS_FILE, json.dumps(listed, indent=1) + "\n")
        card = _card(episodes.counts, filters, run.division, episodes.card_end())
        counts = episodes.finish(filters, card)
    run.finished()
    return counts


def _card(counts, filters, division, end: str) -> str:
    return f"""# Waypoint export: androidcontrol-tfrecord

Trajectories as AndroidControl episodes: a GZIP TFRecord shard (`{SHARD}`) of
`tf.train.Example` records, one per episode (`goal`, `screenshots`, `accessibility_trees`,
`actions`, `step_instructions`, ...), and `{SPLITS_FILE}` (episode ids per split). Waypoint
imports this folder again as `androidcontrol`; AndroidControl's own tools read the shard with
`tf.data.TFRecordDataset(files, compression_type="GZIP")`.

- Trajectories: {counts["trajectories"]}, episodes written: {counts["episodes"]}, steps:
  {counts["steps"]}.
- Selection: {describe_filter(filters)}.
- Split: by {division.by}, seed {division.seed}, ratios {dict(division.ratios)}.
- Coordinates are screenshot pixels; a scroll's direction is where the content moves into view.

## What AndroidControl cannot hold

Left out: a swipe's exact points (a scroll direction), tap targets, thoughts, memory, subgoals
other than runs of equal step instructions, memory targets, anchors and their links,
activities, timings, trainable flags, the outcome, the task's id and intent, the device's
model and version.

Steps with no AndroidControl action are not in their episode; each is in `unmapped.jsonl` with
its episode, Waypoint step index, split and Waypoint action (`waypoint_action`). Trajectories
none of whose steps AndroidControl can express have no episode: {counts["empty_episodes"]}.

{end}"""
