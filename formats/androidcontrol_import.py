"""AndroidControl episodes read as trajectories, streamed from their GZIP TFRecord shards.

Each record of a shard (``android_control-00000-of-00020``) is a ``tf.train.Example``, one
episode, with the features of the dataset's README (google-research ``android_control``):
``episode_id`` (int64), ``goal`` (bytes), ``screenshots`` (PNG bytes, one per observation),
``accessibility_trees`` (serialized android_env ``AndroidAccessibilityForest``, one per
observation), ``screenshot_widths`` / ``screenshot_heights`` (int64), ``actions`` (one JSON
object per action, ``len(screenshots) - 1`` of them) and ``step_instructions`` (one per action).

An episode becomes a trajectory with one screen per observation (the last is the final screen):

- the screenshot (its size must be the declared one; an empty one is a grey stand-in of the
  declared size and the step before it is not trainable, listed in
  ``metadata["androidcontrol"]["missing_screenshots"]``) and the forest as a uiautomator dump
  (:func:`forest_to_uiautomator_xml`) that real-phone tools parse; the screen's package is the
  package of the application window in front;
- actions: ``click`` / ``long_press`` at (x, y) in pixels, their target the element there;
  ``scroll`` {direction} a finger swipe through the centre over half the screen the opposite
  way (AndroidControl names the way the content moves: ``scroll down`` is a swipe up);
  ``input_text`` types; ``type`` (click at (x, y), type, enter) types into the element at
  (x, y), its target; ``open_app`` opens ``app_name``; ``navigate_back`` / ``navigate_home`` /
  ``wait`` are back / home / wait. Every original action is kept, in order, in
  ``metadata["androidcontrol"]["actions"]``;
- step instructions are both: each step's ``summary`` (what the ``androidcontrol`` export
  writes back as ``step_instruction``) and, since one instruction repeated over consecutive
  actions is one low-level goal reached by several actions, a subgoal per run of equal
  instructions (``origin`` ``androidcontrol``), which segmentation, the memory graph and the
  proposers use as they use a person's subgoals.

The trajectory id is a stable id of ``episode_id`` (importing the shards again adds nothing and
resumes an import that stopped), the task ``androidcontrol:<episode_id>``, its apps the
packages of the application windows the episode shows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lxml import etree

from trajectories.images import check_image
from trajectories.records import ScreenRecord, StepRecord, TaskRecord, TrajectoryRecord
from trajectories.uixml import MAX_DEPTH, UIXmlError, parse_ui_xml
from trajectories.validation import InvalidData, fail, shown

from .dataset import is_system_package
from .imported import check_image_side, missing_screenshot, on_screen, stable_uid
from .protos import WINDOW_TYPES, DecodeError, Forest
from .spool import Spool, spooled
from .tfrecord import Features, parse_example, records, tfrecord_files

FORMAT = "androidcontrol"
WAIT_MS = 1000  # AndroidControl's wait names no duration
XML_HEADER = b"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
FLAGS = (
    ("checkable", "is_checkable"),
    ("checked", "is_checked"),
    ("clickable", "is_clickable"),
    ("enabled", "is_enabled"),
    ("focusable", "is_focusable"),
    ("focused", "is_focused"),
    ("scrollable", "is_scrollable"),
    ("long-clickable", "is_long_clickable"),
    ("password", "is_password"),
    ("selected", "is_selected"),
)
APPLICATION = WINDOW_TYPES.index("TYPE_APPLICATION")
SCROLL_FINGER = {"down": "up", "up": "down", "left": "right", "right": "left"}


# ---------------------------------------------------------------- the forest as a dump


def xml_text(value: str) -> str:
    """A string as XML 1.0 can carry it (uiautomator writes "." for what it cannot)."""
    return _NOT_XML.sub(".", value)


def forest_to_uiautomator_xml(forest: Any) -> tuple[bytes, str]:
    """A uiautomator dump of an accessibility forest, and the package in front.

    Each window's tree becomes a top ``<node>`` of ``<hierarchy>``, windows from the back to
    the front (``layer``), so a later one is drawn over an earlier one as in a dump's sibling
    order. A tree's roots are its nodes no other node names as a child; a child id that names
    no node is left out (the forest lists only what the device reported), and a node reached
    twice is written once.
    """
    hierarchy = etree.Element("hierarchy", rotation="0")
    package = ""
    windows = sorted(enumerate(forest.windows), key=lambda item: (item[1].layer, item[0]))
    for _, window in windows:
        nodes = {node.unique_id: node for node in window.tree.nodes}
        children = {child for node in window.tree.nodes for child in node.child_ids}
        roots = [node for node in window.tree.nodes if node.unique_id not in children]
        written: set[int] = set()
        stack = [(node, hierarchy, 0, i) for i, node in reversed(list(enumerate(roots)))]
        while stack:
            node, parent, depth, index = stack.pop()
            if node.unique_id in written:
                continue
            if depth >= MAX_DEPTH:
                raise UIXmlError(f"node {node.unique_id}: nested deeper than {MAX_DEPTH} levels")
            written.add(node.unique_id)
            element = etree.SubElement(parent, "node", _attributes(node, index))
            kids = [nodes[c] for c in node.child_ids if c in nodes and c not in written]
            stack.extend((kid, element, depth + 1, i) for i, kid in reversed(list(enumerate(kids))))
        if window.window_type == APPLICATION and roots and roots[0].package_name:
            package = roots[0].package_name  # the last application window is in front
    xml = XML_HEADER + etree.tostring(hierarchy, encoding="UTF-8", xml_declaration=False)
    return xml, package


def _attributes(node: Any, index: int) -> dict[str, str]:
    box = node.bounds_in_screen
    attrs = {
        "index": str(index),
        "text": xml_text(node.text),
        "resource-id": xml_text(node.view_id_resource_name),
        "class": xml_text(node.class_name),
        "package": xml_text(node.package_name),
        "content-desc": xml_text(node.content_description),
    }
    attrs.update((name, "true" if getattr(node, field) else "false") for name, field in FLAGS)
    attrs["bounds"] = f"[{box.left},{box.top}][{box.right},{box.bottom}]"
    if node.hint_text:
        attrs["hint"] = xml_text(node.hint_text)
    return attrs


# ---------------------------------------------------------------- actions


def canonical_action(action: Any, width: int, height: int, where: str) -> dict[str, Any]:
    """The canonical action of an AndroidControl action (pixels of its screenshot)."""
    if not isinstance(action, dict):
        raise fail(where, f"must be a JSON object, got {shown(action)}")
    kind = action.get("action_type")

    def point() -> tuple[int, int]:
        x, y = action.get("x"), action.get("y")
        for name, value in (("x", x), ("y", y)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise fail(f"{where}.{name}", f"must be a number, got {shown(value)}")
        return int(round(x)), int(round(y))

    def text() -> str:
        value = action.get("text")
        if not isinstance(value, str) or not value:
            raise fail(f"{where}.text", f"must be the text typed, got {shown(value)}")
        return value

    if kind in ("click", "long_press"):
        x, y = point()
        return {"type": kind, "x": x, "y": y}
    if kind == "scroll":
        direction = str(action.get("direction") or "").lower()
        if direction not in SCROLL_FINGER:
            raise fail(f"{where}.direction", f"must be up, down, left or right: {shown(direction)}")
        cx, cy, dx, dy = width // 2, height // 2, width // 4, height // 4
        start, end = {
            "up": ((cx, cy + dy), (cx, cy - dy)),
            "down": ((cx, cy - dy), (cx, cy + dy)),
            "left": ((cx + dx, cy), (cx - dx, cy)),
            "right": ((cx - dx, cy), (cx + dx, cy)),
        }[SCROLL_FINGER[direction]]
        return {"type": "swipe", "x": start[0], "y": start[1], "x2": end[0], "y2": end[1]}
    if kind in ("input_text", "type"):
        return {"type": "type", "text": text()}
    if kind == "open_app":
        name = action.get("app_name")
        if not isinstance(name, str) or not name:
            raise fail(f"{where}.app_name", f"must name the app, got {shown(name)}")
        return {"type": "open_app", "package": name, "app_label": name}
    if kind == "navigate_back":
        return {"type": "back"}
    if kind == "navigate_home":
        return {"type": "home"}
    if kind == "wait":
        return {"type": "wait", "duration_ms": WAIT_MS}
    raise fail(f"{where}.action_type", f"unknown AndroidControl action {shown(kind)}")


def subgoals_of(instructions: list[str]) -> list[dict[str, Any]]:
    """A subgoal per run of equal consecutive step instructions."""
    out: list[dict[str, Any]] = []
    for index, text in enumerate(instructions):
        if out and out[-1]["text"] == text:
            out[-1]["end"] = index
        elif text:
            out.append({"start": index, "end": index, "text": text, "origin": FORMAT})
    return out


# ---------------------------------------------------------------- episodes


def _episode(
    example: Any, where: str, name: str, number: int, spool: Spool
) -> tuple[str, TrajectoryRecord]:
    f = Features(example, where)
    episode_id = f.one("episode_id", "int64")
    where = f"{where} (episode {episode_id}):"
    f = Features(example, where.rstrip(":"))
    goal = f.text("goal")
    shots = f.values("screenshots", "bytes")
    trees = f.values("accessibility_trees", "bytes")
    widths, heights = (
        f.values("screenshot_widths", "int64"),
        f.values("screenshot_heights", "int64"),
    )
    raw_actions = f.values("actions", "bytes")
    instructions = [
        _utf8(v, f"{where} step_instructions")
        for v in f.values("step_instructions", "bytes", required=False)
    ]
    n = len(shots)
    if n < 2:
        raise fail(where, f"an episode needs at least two screenshots, got {n}")
    for key, values in (
        ("accessibility_trees", trees),
        ("screenshot_widths", widths),
        ("screenshot_heights", heights),
    ):
        if len(values) != n:
            raise fail(where, f"{key}: {len(values)} values for {n} screenshots")
    if len(raw_actions) != n - 1:
        raise fail(
            where, f"actions: {len(raw_actions)} actions for {n} screenshots (expected {n - 1})"
        )
    if instructions and len(instructions) != n - 1:
        raise fail(
            where, f"step_instructions: {len(instructions)} for {n - 1} actions (expected as many)"
        )
    screens: list[ScreenRecord] = []
    trees_parsed = []
    missing: list[int] = []
    apps: list[str] = []
    for i in range(n):
        place = f"{where} screenshots[{i}]"
        width, height = widths[i], heights[i]
        check_image_side(width, height, f"{where} screenshot_widths/heights[{i}]")
        if shots[i]:
            info = check_image(shots[i], place)
            if (info.width, info.height) != (width, height):
                raise fail(place, f"is {info.width}x{info.height}, declared {width}x{height}")
            shot, kind = spool.file(shots[i], ".png"), info.content_type
        else:
            missing.append(i)
            shot, kind = spool.file(missing_screenshot(width, height), ".png"), "image/png"
        try:
            forest = Forest.FromString(trees[i])
            xml, package = forest_to_uiautomator_xml(forest)
            tree = parse_ui_xml(xml)
        except (DecodeError, RecursionError, ValueError) as exc:
            raise fail(
                f"{where} accessibility_trees[{i}]", f"not an accessibility forest ({exc})"
            ) from None
        trees_parsed.append(tree)
        if package and not is_system_package(package) and package not in apps:
            apps.append(package)
        screens.append(
            ScreenRecord(
                screenshot=shot,
                screenshot_type=kind,
                ui_xml=spool.file(xml, ".xml"),
                width=width,
                height=height,
                package=package,
            )
        )
    originals = []
    steps = []
    for i, raw in enumerate(raw_actions):
        place = f"{where} actions[{i}]"
        try:
            action = json.loads(_utf8(raw, place))
        except json.JSONDecodeError as exc:
            raise fail(place, f"invalid JSON at column {exc.colno}: {exc.msg}") from None
        originals.append(action)
        screen = screens[i]
        canonical = canonical_action(action, screen.width, screen.height, place)
        target = None
        if "x" in action and "y" in action and canonical["type"] != "swipe":
            x, y = on_screen(action["x"], screen.width), on_screen(action["y"], screen.height)
            element = trees_parsed[i].element_at(x, y)
            target = element.to_target() if element is not None else None
        steps.append(
            StepRecord(
                index=i,
                screen=i,
                action=canonical,
                target=target,
                summary=instructions[i] if instructions else "",
                trainable=i not in missing,
            )
        )
    meta: dict[str, Any] = {"episode_id": episode_id, "file": name, "record": number}
    meta["actions"] = originals
    if missing:
        meta["missing_screenshots"] = missing
    record = TrajectoryRecord(
        uid=stable_uid(FORMAT, str(episode_id)),
        task=TaskRecord(uid=f"{FORMAT}:{episode_id}", goal=goal, apps=apps),
        screens=screens,
        steps=steps,
        final_screen=n - 1,
        device={"width": screens[0].width, "height": screens[0].height},
        source="imported",
        metadata={FORMAT: meta},
        subgoals=subgoals_of(instructions),
    )
    return where, record


def _utf8(value: bytes, where: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidData(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _shards(folder: Path) -> list[Path]:
    files = tfrecord_files(folder)
    if not files:
        raise InvalidData(
            "no TFRecord shards: looked for files named like android_control-00000-of-00020 "
            "or *.tfrecord(.gz) in the import folder"
        )
    return files


def _read(folder: Path, spool: Spool) -> Iterator[tuple[str, TrajectoryRecord]]:
    """Yield (where, record) for every episode of the AndroidControl shards of a folder."""
    for path in _shards(folder):
        name = path.relative_to(folder).as_posix()
        for number, data in records(path, name):
            where = f"{name} record {number}"
            yield _episode(parse_example(data, where), where, name, number, spool)


read_androidcontrol = spooled(_read)


def count_episodes(folder: Path) -> int:
    """How many episodes the shards hold (their framing read, no record parsed)."""
    folder = Path(folder)
    return sum(
        1
        for path in _shards(folder)
        for _ in records(path, path.relative_to(folder).as_posix(), check=False)
    )
