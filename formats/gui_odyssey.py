"""GUI-Odyssey episodes read as trajectories: ``annotations/*.json`` and ``screenshots/``.

The layout is the one the dataset's ``Quickstart.md`` prepares (OpenGVLab/GUI-Odyssey): one
JSON file per episode in ``annotations/`` and the screenshots in ``screenshots/`` (flat, as
``preprocessing.py`` leaves them, or still in their sub-folders). An episode has, after
``introduction.md``: ``episode_id``, ``device_info`` (``w``, ``h``, ``device_name``,
``product``, ``release_version``, ``sdk_version``), ``task_info`` (``category``, ``app``,
``meta_task``, ``task``, ``instruction``), ``step_length`` and ``steps[]`` with ``step``,
``screenshot``, ``action``, ``info`` and ``ps``.

An episode becomes a cross-app trajectory: the goal is the ``instruction`` (the detailed
phrasing; ``task`` and ``meta_task`` are in the metadata), the task's apps are ``app`` (app
names), the device is ``device_info``. Coordinates are 0-1000 of the screen, turned into
pixels of the step's screenshot (``v / 1000 * size``, kept on the screen). Actions, as the
authors' ``format_converter.py`` decodes them:

- ``CLICK`` / ``LONG_PRESS`` with ``info`` ``KEY_HOME`` / ``KEY_BACK`` / ``KEY_APPSELECT`` are
  home / back / the recent-apps key (``KEYCODE_APP_SWITCH``); with a list of points, a click
  (a long press) at the first point: a gesture of several points (several fingers, or a
  touch that moved) keeps all of them in the original action;
- ``SCROLL`` [[x1, y1], [x2, y2]] is a swipe between the first and the last point (``ps``, the
  whole path, is kept in the original);
- ``TEXT`` (``TYPE``) types ``info``; ``HOME`` / ``BACK`` are home / back;
- ``COMPLETE`` ends with ``terminate`` success, ``INCOMPLETE`` / ``IMPOSSIBLE`` with failure
  (the trajectory's outcome); ``ps`` (the annotator's note) is kept in the original.

Every original step (``action``, ``info``, ``ps``) is kept, in order, in
``metadata["gui-odyssey"]["actions"]``. A screenshot that is missing is a grey stand-in of the
device's size and its step is not trainable (``metadata["gui-odyssey"]["missing_screenshots"]``).
GUI-Odyssey has no UI hierarchy: its screens have none.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajectories.bounds import load_json
from trajectories.records import ScreenRecord, StepRecord, TaskRecord, TrajectoryRecord
from trajectories.validation import InvalidData, fail, shown

from .archive import read_file
from .imported import Fields, image_file, missing_screenshot, number, on_screen, stable_uid

FORMAT = "gui-odyssey"
ANNOTATIONS = "annotations"
SCREENSHOTS = "screenshots"
KEYS = {
    "KEY_HOME": {"type": "home"},
    "KEY_BACK": {"type": "back"},
    "KEY_APPSELECT": {"type": "key", "keycode": "KEYCODE_APP_SWITCH"},
}
FAILED = ("INCOMPLETE", "IMPOSSIBLE")


def _annotation_files(folder: Path) -> list[Path]:
    path = folder / ANNOTATIONS
    if not path.is_dir():
        raise InvalidData(f"{ANNOTATIONS}/: folder is missing (GUI-Odyssey has annotations/)")
    return sorted(p for p in path.iterdir() if p.is_file() and p.suffix == ".json")


def count_episodes(folder: Path) -> int:
    return len(_annotation_files(Path(folder)))


def _screenshots(folder: Path, checked: dict[str, Any]) -> dict[str, str]:
    """Screenshot file names -> their paths below the folder (read once per import)."""
    if "screenshots" not in checked:
        root = folder / SCREENSHOTS
        found: dict[str, str] = {}
        if root.is_dir():
            for path in sorted(root.rglob("*")):
                if path.is_file():
                    found.setdefault(path.name, path.relative_to(folder).as_posix())
        checked["screenshots"] = found
    return checked["screenshots"]


def read_gui_odyssey(
    folder: Path, checked: dict[str, Any] | None = None
) -> Iterator[tuple[str, TrajectoryRecord]]:
    """Yield (where, record) for every episode of a GUI-Odyssey folder."""
    folder = Path(folder)
    checked = {} if checked is None else checked
    for path in _annotation_files(folder):
        name = f"{ANNOTATIONS}/{path.name}"
        try:
            obj = load_json(read_file(folder, name, name), name)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InvalidData(f"{name}: invalid JSON ({exc})") from None
        episode_id = str(Fields(obj, f"{name}:").get("episode_id", (str, int), path.stem))
        where = f"{name} (episode {shown(episode_id)}):"
        yield where, _episode(folder, Fields(obj, where), episode_id, checked)


def _episode(
    folder: Path, episode: Fields, episode_id: str, checked: dict[str, Any]
) -> TrajectoryRecord:
    device = Fields(episode.get("device_info", dict, {}), episode.at("device_info"))
    task = Fields(episode.get("task_info", dict), episode.at("task_info"))
    apps = task.get("app", list, [])
    if not all(isinstance(app, str) for app in apps):
        raise fail(task.at("app"), "must be a list of app names")
    shots = _screenshots(folder, checked)
    raw_steps = episode.get("steps", list)
    if not raw_steps:
        raise fail(episode.at("steps"), "an episode needs at least one step")
    screens, steps, originals, missing = [], [], [], []
    outcome = "uncertain"
    for i, raw in enumerate(raw_steps):
        step = Fields(raw, f"{episode.at('steps')}[{i}]")
        index = step.get("step", int, i)
        if index != i:
            raise fail(step.at("step"), f"steps must be numbered 0, 1, 2, ...: expected {i}")
        shot_name = step.get("screenshot", str, "")
        found = shots.get(Path(shot_name).name) if shot_name else None
        if found is None:
            width, height = device.get("w", int, 0), device.get("h", int, 0)
            if not (width and height):
                raise fail(
                    step.at("screenshot"),
                    f"{shown(shot_name)} is missing and device_info gives no w and h",
                )
            missing.append(i)
            screen = ScreenRecord(
                screenshot=missing_screenshot(width, height), width=width, height=height
            )
        else:
            ref, info = image_file(folder, found, step.at("screenshot"), checked)
            screen = ScreenRecord(
                screenshot=ref,
                screenshot_type=info.content_type,
                width=info.width,
                height=info.height,
            )
        screens.append(screen)
        kind = step.get("action", str).strip().upper()
        original = {k: raw.get(k) for k in ("action", "info", "ps") if k in raw}
        originals.append(original)
        action = canonical_action(kind, raw.get("info"), step, screen.width, screen.height)
        if kind == "COMPLETE":
            outcome = "success"
        elif kind in FAILED:
            outcome = "failure"
        steps.append(StepRecord(index=i, screen=i, action=action, trainable=i not in missing))
    meta: dict[str, Any] = {"episode_id": episode_id, "actions": originals}
    for key in ("category", "meta_task", "task"):
        value = task.get(key, str, "")
        if value:
            meta[key] = value
    if missing:
        meta["missing_screenshots"] = missing
    goal = task.text("instruction", "task")
    task_key = task.get("task", str, "") or goal
    return TrajectoryRecord(
        uid=stable_uid(FORMAT, episode_id),
        task=TaskRecord(
            uid=f"{FORMAT}:{hashlib.sha256(task_key.encode()).hexdigest()[:16]}",
            goal=goal,
            apps=apps,
        ),
        screens=screens,
        steps=steps,
        device=_device(device, screens[0]),
        source="imported",
        outcome=outcome,
        metadata={FORMAT: meta},
    )


def _device(device: Fields, first: ScreenRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "width": device.get("w", int, first.width),
        "height": device.get("h", int, first.height),
    }
    if device.get("device_name", str, ""):
        out["model"] = device.obj["device_name"]
    version = device.obj.get("release_version")
    if isinstance(version, str | int) and not isinstance(version, bool) and str(version):
        out["android_version"] = str(version)
    return out


def _points(info: Any, step: Fields) -> list[tuple[float, float]]:
    """The points of an ``info``: a list of [x, y] (a JSON string of one is read too)."""
    if isinstance(info, str) and info.strip().startswith("["):
        try:
            info = json.loads(info)
        except json.JSONDecodeError:
            raise fail(step.at("info"), f"not a list of points: {shown(info)}") from None
    if (
        isinstance(info, list)
        and len(info) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in info)
    ):
        info = [info]  # one point given bare
    if not isinstance(info, list) or not info:
        raise fail(step.at("info"), f"must be a list of [x, y] points, got {shown(info)}")
    points = []
    for k, point in enumerate(info):
        place = f"{step.at('info')}[{k}]"
        if not isinstance(point, list) or len(point) != 2:
            raise fail(place, f"must be [x, y], got {shown(point)}")
        x, y = (number(v, f"{place}[{n}]") for n, v in enumerate(point))
        for v, n in ((x, 0), (y, 1)):
            if not -0.5 <= v <= 1000.5:
                raise fail(f"{place}[{n}]", f"must lie in 0-1000, got {v:g}")
        points.append((x, y))
    return points


def canonical_action(kind: str, info: Any, step: Fields, width: int, height: int) -> dict:
    """The canonical action of a GUI-Odyssey step (``kind`` upper-cased), pixels of a
    ``width`` x ``height`` screenshot."""

    def pixel(point: tuple[float, float]) -> tuple[int, int]:
        return on_screen(point[0] / 1000 * width, width), on_screen(
            point[1] / 1000 * height, height
        )

    if kind in ("CLICK", "LONG_PRESS"):
        if isinstance(info, str) and info.strip().upper() in KEYS:
            return dict(KEYS[info.strip().upper()])
        x, y = pixel(_points(info, step)[0])
        return {"type": "click" if kind == "CLICK" else "long_press", "x": x, "y": y}
    if kind == "SCROLL":
        points = _points(info, step)
        if len(points) < 2:
            raise fail(step.at("info"), "a scroll needs its start and end points")
        (x, y), (x2, y2) = pixel(points[0]), pixel(points[-1])
        return {"type": "swipe", "x": x, "y": y, "x2": x2, "y2": y2}
    if kind in ("TEXT", "TYPE"):
        if not isinstance(info, str) or not info:
            raise fail(step.at("info"), f"must be the text typed, got {shown(info)}")
        return {"type": "type", "text": info}
    if kind == "COMPLETE":
        return {"type": "terminate", "status": "success"}
    if kind in FAILED:
        return {"type": "terminate", "status": "failure"}
    if kind in ("HOME", "BACK"):
        return {"type": kind.lower()}
    raise fail(step.at("action"), f"unknown GUI-Odyssey action {shown(kind)}")
