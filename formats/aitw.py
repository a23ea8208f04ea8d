"""Android in the Wild (AitW) read as trajectories, streamed from its GZIP TFRecord shards.

Each record is a ``tf.train.Example``, one step, with the features of the dataset's README
(google-research ``android_in_the_wild``): ``episode_id`` (bytes), ``step_id``,
``episode_length``, ``goal_info``, ``current_activity``, ``device_type``,
``android_api_level``, ``image/encoded`` (the screenshot's raw pixels, ``image/height`` x
``image/width`` x ``image/channels`` bytes, as ``visualization_utils.py`` decodes them),
``image/ui_annotations_positions`` (normalised (y, x, height, width) per element),
``image/ui_annotations_text`` and ``image/ui_annotations_ui_types``, ``results/action_type``
(``action_type.py``), ``results/type_action``, ``results/yx_touch`` and ``results/yx_lift``
(normalised (y, x)).

Records are grouped into episodes by ``episode_id``, as the authors' demo reads them: the steps
of an episode are consecutive (across shard files, taken in name order) and numbered 0, 1, ...
by ``step_id`` (their order in the shard may differ). An episode becomes a trajectory:

- each step's screen: the pixels as a PNG (an already encoded PNG or JPEG is kept as it is;
  an empty image is a grey stand-in of the declared size, its step not trainable), and a
  uiautomator dump of the UI annotations (a ``TextView`` with the OCR text for ``TEXT``, an
  ``ImageView`` whose content-desc names the icon for ``ICON_*``, every one a tap target, as
  action matching takes them), the package and activity of ``current_activity``;
- actions as ``action_matching.py`` reads them: a dual-point action whose touch and lift lie
  within 0.04 (normalised distance) is a tap, a ``click`` at the touch point (its target the
  annotation there), else a ``swipe`` from touch to lift; ``TYPE`` types ``type_action``;
  ``PRESS_BACK`` / ``PRESS_HOME`` / ``PRESS_ENTER`` are back / home / enter;
  ``STATUS_TASK_COMPLETE`` / ``STATUS_TASK_IMPOSSIBLE`` end with ``terminate`` success /
  failure (the trajectory's outcome). The originals are kept, in order, in
  ``metadata["aitw"]["actions"]``;
- the goal is ``goal_info``; episodes of the same goal share a task (``aitw:<hash of goal>``);
  the device is ``device_type`` with the Android release of ``android_api_level``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree
from PIL import Image

from trajectories.images import check_image, sniff_image_type
from trajectories.records import FileRef, ScreenRecord, StepRecord, TaskRecord, TrajectoryRecord
from trajectories.uixml import parse_ui_xml
from trajectories.validation import InvalidData, fail, shown

from .androidcontrol_import import XML_HEADER, xml_text
from .dataset import is_system_package
from .droidbot import ANDROID_VERSIONS
from .imported import check_image_side, missing_screenshot, on_screen, png_of, stable_uid
from .spool import Spool, spooled
from .tfrecord import Features, parse_example, records, tfrecord_files

FORMAT = "aitw"
# results/action_type (android_in_the_wild/action_type.py)
TYPE, DUAL_POINT, PRESS_BACK, PRESS_HOME, PRESS_ENTER = 3, 4, 5, 6, 7
STATUS_TASK_COMPLETE, STATUS_TASK_IMPOSSIBLE = 10, 11
TAP_DISTANCE = 0.04  # action_matching._SWIPE_DISTANCE_THRESHOLD
MODES = {1: "L", 3: "RGB", 4: "RGBA"}
FLAGS = ("checkable", "checked", "focusable", "focused", "scrollable", "long-clickable")
FLAGS += ("password", "selected")


@dataclass
class _Step:
    """One step of an episode, its screenshot already spooled (no pixels held)."""

    step_id: int
    where: str
    screen: ScreenRecord
    action: dict[str, Any]
    target: dict[str, Any] | None
    original: dict[str, Any]
    trainable: bool


@dataclass
class _Episode:
    episode_id: str
    where: str
    goal: str = ""
    device_type: str = ""
    api_level: int = 0
    steps: list[_Step] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- one step


def annotations_xml(
    positions: list[float],
    texts: list[str],
    types: list[str],
    size: tuple[int, int],
    package: str,
) -> bytes:
    """A uiautomator dump of a screen's UI annotations: a full-screen root and one node each."""
    width, height = size
    hierarchy = etree.Element("hierarchy", rotation="0")
    root = etree.SubElement(hierarchy, "node", _attributes(0, "android.widget.FrameLayout", "", ""))
    root.set("package", xml_text(package))
    root.set("clickable", "false")
    root.set("bounds", f"[0,0][{width},{height}]")
    for i in range(len(positions) // 4):
        y, x, h, w = positions[4 * i : 4 * i + 4]
        kind = types[i] if i < len(types) else ""
        text = texts[i] if i < len(texts) else ""
        icon = kind.upper().startswith("ICON")
        node = etree.SubElement(
            root,
            "node",
            _attributes(
                i,
                "android.widget.ImageView" if icon else "android.widget.TextView",
                "" if icon else text,
                kind[5:].lower().replace("_", " ") if icon else "",
            ),
        )
        node.set("package", xml_text(package))
        left, top = on_screen(x * width, width), on_screen(y * height, height)
        right, bottom = (
            on_screen((x + w) * width, width + 1),
            on_screen((y + h) * height, height + 1),
        )
        node.set("bounds", f"[{left},{top}][{max(left, right)},{max(top, bottom)}]")
    return XML_HEADER + etree.tostring(hierarchy, encoding="UTF-8", xml_declaration=False)


def _attributes(index: int, class_name: str, text: str, desc: str) -> dict[str, str]:
    attrs = {
        "index": str(index),
        "text": xml_text(text),
        "resource-id": "",
        "class": class_name,
        "package": "",
        "content-desc": xml_text(desc),
        "clickable": "true",
        "enabled": "true",
    }
    attrs.update((name, "false") for name in FLAGS)
    return attrs


def _screenshot(f: Features, where: str, spool: Spool) -> tuple[FileRef, str, int, int, bool]:
    """The step's screenshot as a spooled image: (file, type, width, height, present)."""
    height, width = f.one("image/height", "int64"), f.one("image/width", "int64")
    channels = f.one("image/channels", "int64", 3)
    check_image_side(width, height, f"{where}: image/width, image/height")
    data = f.one("image/encoded", "bytes", b"")
    if not data:
        return (
            spool.file(missing_screenshot(width, height), ".png"),
            "image/png",
            width,
            height,
            False,
        )
    if sniff_image_type(data) is not None:  # an encoded image, as some copies store them
        info = check_image(data, f"{where}: image/encoded")
        suffix = ".jpg" if info.content_type == "image/jpeg" else ".png"
        return spool.file(data, suffix), info.content_type, info.width, info.height, True
    if channels not in MODES:
        raise fail(f"{where}: image/channels", f"must be 1, 3 or 4, got {channels}")
    if len(data) != width * height * channels:
        raise fail(
            f"{where}: image/encoded",
            f"holds {len(data)} bytes, not {height} x {width} x {channels} pixels",
        )
    image = Image.frombytes(MODES[channels], (width, height), data)
    return spool.file(png_of(image), ".png"), "image/png", width, height, True


SIMPLE = {
    PRESS_BACK: {"type": "back"},
    PRESS_HOME: {"type": "home"},
    PRESS_ENTER: {"type": "enter"},
    STATUS_TASK_COMPLETE: {"type": "terminate", "status": "success"},
    STATUS_TASK_IMPOSSIBLE: {"type": "terminate", "status": "failure"},
}


def _action(f: Features, where: str, width: int, height: int) -> tuple[dict, dict]:
    """(canonical action, original) of a step's ``results/*`` features."""
    kind = f.one("results/action_type", "int64")
    original: dict[str, Any] = {"action_type": kind}
    if kind == DUAL_POINT:
        touch = f.values("results/yx_touch", "float")
        lift = f.values("results/yx_lift", "float")
        for key, point in (("results/yx_touch", touch), ("results/yx_lift", lift)):
            if len(point) != 2 or not all(math.isfinite(v) for v in point):
                raise fail(f"{where}: {key}", f"must be a (y, x) pair, got {shown(point)}")
        original.update(touch=touch, lift=lift)
    elif kind == TYPE:
        original["text"] = f.text("results/type_action", "")
        if not original["text"]:
            raise fail(f"{where}: results/type_action", "a TYPE action needs the text typed")
    elif kind not in SIMPLE:
        raise fail(f"{where}: results/action_type", f"unknown AitW action type {kind}")
    return canonical_action(original, width, height), original


def canonical_action(original: dict[str, Any], width: int, height: int) -> dict[str, Any]:
    """The canonical action of an AitW action (``action_type`` with its ``touch`` and ``lift``
    (y, x) or its ``text``, as ``metadata["aitw"]["actions"]`` keeps them), in pixels of a
    ``width`` x ``height`` screenshot."""
    kind = original["action_type"]
    if kind == DUAL_POINT:
        touch, lift = original["touch"], original["lift"]
        (ty, tx), (ly, lx) = touch, lift
        px = on_screen(tx * width, width), on_screen(ty * height, height)
        if math.dist(touch, lift) <= TAP_DISTANCE:
            return {"type": "click", "x": px[0], "y": px[1]}
        x2, y2 = on_screen(lx * width, width), on_screen(ly * height, height)
        return {"type": "swipe", "x": px[0], "y": px[1], "x2": x2, "y2": y2}
    if kind == TYPE:
        return {"type": "type", "text": original["text"]}
    return dict(SIMPLE[kind])


def _step(f: Features, where: str, spool: Spool) -> _Step:
    shot, content_type, width, height, present = _screenshot(f, where, spool)
    activity = f.text("current_activity", "")
    package, _, activity_name = activity.partition("/") if "/" in activity else ("", "", activity)
    positions = f.values("image/ui_annotations_positions", "float", required=False)
    if len(positions) % 4 or not all(math.isfinite(v) for v in positions):
        raise fail(
            f"{where}: image/ui_annotations_positions",
            f"must hold (y, x, height, width) per element, got {len(positions)} numbers",
        )
    texts = [
        _text(v, where) for v in f.values("image/ui_annotations_text", "bytes", required=False)
    ]
    kinds = [
        _text(v, where) for v in f.values("image/ui_annotations_ui_types", "bytes", required=False)
    ]
    xml = annotations_xml(positions, texts, kinds, (width, height), package)
    action, original = _action(f, where, width, height)
    target = None
    if action["type"] == "click":
        element = parse_ui_xml(xml).element_at(action["x"], action["y"])
        if element is not None and element.path != "0":
            target = element.to_target()
    screen = ScreenRecord(
        screenshot=shot,
        screenshot_type=content_type,
        ui_xml=spool.file(xml, ".xml"),
        width=width,
        height=height,
        package=package,
        activity=activity_name,
    )
    return _Step(f.one("step_id", "int64"), where, screen, action, target, original, present)


def _text(value: bytes, where: str) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidData(f"{where}: not UTF-8 text ({exc.reason})") from None


# ---------------------------------------------------------------- episodes


def _episode_id(f: Features) -> str:
    if f.has("episode_id") and f.map["episode_id"].WhichOneof("kind") == "int64_list":
        return str(f.one("episode_id", "int64"))
    return f.text("episode_id")


def _record(episode: _Episode) -> tuple[str, TrajectoryRecord]:
    where = episode.where
    steps = sorted(episode.steps, key=lambda s: s.step_id)
    ids = [s.step_id for s in steps]
    if ids != list(range(len(ids))):
        raise fail(where, f"step_id must run 0, 1, 2, ... without gaps, got {shown(str(ids[:10]))}")
    apps = []
    for s in steps:
        package = s.screen.package
        if package and not is_system_package(package) and package not in apps:
            apps.append(package)
    outcome = {"success": "success", "failure": "failure"}.get(steps[-1].action.get("status", ""))
    device: dict[str, Any] = {"width": steps[0].screen.width, "height": steps[0].screen.height}
    if episode.device_type:
        device["model"] = episode.device_type
    if episode.api_level in ANDROID_VERSIONS:
        device["android_version"] = ANDROID_VERSIONS[episode.api_level]
    missing = [i for i, s in enumerate(steps) if not s.trainable]
    meta: dict[str, Any] = {
        "episode_id": episode.episode_id,
        "files": episode.files,
        "actions": [s.original for s in steps],
    }
    if missing:
        meta["missing_screenshots"] = missing
    record = TrajectoryRecord(
        uid=stable_uid(FORMAT, episode.episode_id),
        task=TaskRecord(
            uid=f"{FORMAT}:{hashlib.sha256(episode.goal.encode()).hexdigest()[:16]}",
            goal=episode.goal,
            apps=apps,
        ),
        screens=[s.screen for s in steps],
        steps=[
            StepRecord(index=i, screen=i, action=s.action, target=s.target, trainable=s.trainable)
            for i, s in enumerate(steps)
        ],
        final_screen=len(steps) - 1,
        device=device,
        source="imported",
        outcome=outcome or "uncertain",
        metadata={FORMAT: meta},
    )
    return where, record


def _shards(folder: Path) -> list[Path]:
    files = tfrecord_files(folder)
    if not files:
        raise InvalidData(
            "no TFRecord shards: looked for files named like general-00000-of-00321 "
            "or *.tfrecord(.gz) in the import folder"
        )
    return files


def _examples(folder: Path, *, check: bool = True) -> Iterator[tuple[str, str, Any]]:
    for path in _shards(folder):
        name = path.relative_to(folder).as_posix()
        for number, data in records(path, name, check=check):
            where = f"{name} record {number}"
            yield name, where, parse_example(data, where)


def _read(folder: Path, spool: Spool) -> Iterator[tuple[str, TrajectoryRecord]]:
    """Yield (where, record) for every episode of the AitW shards of a folder."""
    current: _Episode | None = None
    done: set[str] = set()
    for name, where, example in _examples(folder):
        f = Features(example, where)
        episode_id = _episode_id(f)
        if current is None or episode_id != current.episode_id:
            if current is not None:
                done.add(current.episode_id)
                yield _record(current)
            if episode_id in done:
                raise fail(
                    f"{where}: episode_id",
                    f"episode {shown(episode_id)} appears again after other episodes "
                    "(an episode's steps must be consecutive)",
                )
            current = _Episode(episode_id, f"{where} (episode {shown(episode_id)}):")
            current.goal = f.text("goal_info")
            current.device_type = f.text("device_type", "")
            current.api_level = f.one("android_api_level", "int64", 0)
        if name not in current.files:
            current.files.append(name)
        place = f"{where} (episode {shown(episode_id)})"
        current.steps.append(_step(Features(example, place), place, spool))
    if current is not None:
        yield _record(current)


read_aitw = spooled(_read)


def count_episodes(folder: Path) -> int:
    """How many episodes the shards hold (each record's episode_id read)."""
    count, last = 0, None
    for _, where, example in _examples(Path(folder), check=False):
        episode_id = _episode_id(Features(example, where))
        if episode_id != last:
            count, last = count + 1, episode_id
    return count
