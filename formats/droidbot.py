"""DroidBot output folders (``droidbot -o <folder>``) read as trajectories.

A DroidBot run leaves::

    states/state_<tag>.json   one captured state: ``state_str`` (its identity hash),
                              ``foreground_activity`` ("package/activity") and ``views[]``
    states/screen_<tag>.png   its screenshot (often JPEG bytes despite the name: sniffed by content)
    events/event_<tag>.json   one input event: ``start_state`` / ``stop_state`` (state_str hashes)
                              and ``event`` {event_type, x, y, view, name, direction, duration, ...}
    utg.js                    ``var utg = {...}``: app package, device model, serial, SDK (optional)

Tags are times (``2017-08-11_155427``), so sorting by tag is sorting by time.

How events become trajectories
------------------------------
Events are taken in tag order and chained into ``screen -> action -> screen`` trajectories:

* A step needs both its start and its stop state in ``states/`` (a state is found by the
  ``state_str`` inside its JSON, not by its file name). An event whose start or stop state is
  missing ends the current trajectory; so does an event that does not start where the previous
  one stopped (a new trajectory starts with it).
* When a state was captured more than once, a step's start screen is the latest capture at or
  before the event's tag and its stop screen the earliest capture at or after it.
* Actions map to the canonical schema the way DroidBot sent them (``droidbot/input_event.py``):

  - ``touch`` -> ``click`` at (x, y) when given, else at the view's bounds centre
    (``(x1 + x2) // 2``, ``(y1 + y2) // 2``, DroidBot's ``get_view_center``);
  - ``long_touch`` -> ``long_press`` with ``duration_ms`` = the event's duration (default 2000);
  - ``scroll`` -> ``swipe`` as DroidBot's ``ScrollEvent.send`` draws it: from the view centre
    (or x, y; else the screen centre), offset by 2/5 of the view's (else the screen's) height or
    width, 500 ms. ``UP`` drags the finger from centre - 2/5 h to centre + 2/5 h (the finger
    moves *down*, the content shows what is above); ``DOWN`` the reverse; ``LEFT`` drags from
    left to right, ``RIGHT`` from right to left;
  - ``swipe`` -> ``swipe`` between its start and end points (or views), with its duration;
  - ``key`` -> ``back`` / ``home`` / ``enter`` for BACK / HOME / ENTER, else ``key`` with
    ``keycode`` ``KEYCODE_<NAME>``;
  - ``set_text`` -> ``type`` with the text (DroidBot touches the view first; the view is the
    target);
  - ``intent`` -> ``open_app`` when it launches an app (``am start [...] <package>/<activity>``,
    ``am start -n ...`` or ``monkey -p <package>``), with the package of the component.

* An event that cannot be expressed is dropped and listed in the trajectory's
  ``metadata["droidbot"]["skipped"]``: a gesture whose point lies outside the screenshot (DroidBot
  taps the centre of inverted bounds of views scrolled off screen, e.g. ``[[0, 3306], [1440,
  2560]]``, which lands at y = 2933 on a 2560-pixel screen). If such an event left the state
  unchanged (start state = stop state) the trajectory continues across it, since nothing
  happened; otherwise it ends there. Intents that do not launch an app (broadcasts, force-stop,
  ``am start -a VIEW -d url`` without a component), ``manual`` / ``exit`` events and unknown event
  types always end the trajectory.

Each trajectory: ``uid`` = uuid5 of the app package and its events (tag, start and stop
``state_str``), so importing the same folder (or a .zip of it) twice creates nothing new; task
``droidbot:<package>`` with goal ``Explore <package> (DroidBot)`` where the package is utg.js's
``app_package`` (else the most common foreground package of the states); source ``imported``;
device width / height from the first screenshot (model, serial and Android version from utg.js
when present). Screens carry the screenshot bytes as they are (JPEG stays JPEG), UI XML built with
:func:`trajectories.uixml.views_to_uiautomator_xml`, their size read from the image, and the
package / activity of ``foreground_activity`` (split at "/"). A step's target is the element of
the converted XML that is the event's view (same bounds, class, resource-id and text), else the
element at the action's point (``UITree.element_at``), else the view's own fields.

Bad input raises :class:`~trajectories.validation.InvalidData` naming the file: a missing
``states/`` or ``events/`` folder, malformed JSON, a state without its screenshot, a screenshot
that is not an image or is truncated.
"""

from __future__ import annotations

import json
import re
import shlex
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from trajectories.bounds import load_json
from trajectories.images import check_image
from trajectories.records import ScreenRecord, StepRecord, TaskRecord, TrajectoryRecord
from trajectories.uixml import UIElement, UITree, UIXmlError, parse_ui_xml, views_to_uiautomator_xml
from trajectories.validation import InvalidData

from .archive import check_file_size, read_file

STATES = "states"
EVENTS = "events"
UTG = "utg.js"
SCREEN_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
SCROLL_DURATION_MS = 500  # DroidBot's ScrollEvent
LONG_TOUCH_MS = 2000  # DroidBot's LongTouchEvent default
SWIPE_DURATION_MS = 1000  # DroidBot's SwipeEvent default
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "waypoint:formats:droidbot")
NAMED_KEYS = {"BACK": "back", "HOME": "home", "ENTER": "enter"}
GESTURES = ("touch", "long_touch", "scroll", "swipe", "set_text")
# Android releases by API level, for the device's android_version.
ANDROID_VERSIONS = {
    16: "4.1",
    17: "4.2",
    18: "4.3",
    19: "4.4",
    21: "5.0",
    22: "5.1",
    23: "6.0",
    24: "7.0",
    25: "7.1",
    26: "8.0",
    27: "8.1",
    28: "9",
    29: "10",
    30: "11",
    31: "12",
    32: "12L",
    33: "13",
    34: "14",
    35: "15",
    36: "16",
}
_TAG_RE = re.compile(r"^(?:state|screen|event)_(.+)\.[A-Za-z0-9]+$")


@dataclass
class _State:
    state_str: str
    tag: str
    json_name: str
    screen_name: str
    foreground_activity: str
    views: list[Any]
    size: tuple[int, int] | None = None

    @property
    def package(self) -> str:
        return self.foreground_activity.partition("/")[0]

    @property
    def activity(self) -> str:
        return self.foreground_activity.partition("/")[2]


@dataclass
class _Event:
    tag: str
    name: str
    start: str
    stop: str
    event: dict[str, Any]
    event_str: str

    @property
    def event_type(self) -> str:
        return self.event["event_type"]


@dataclass
class _Step:
    event: _Event
    action: dict[str, Any]


@dataclass
class _Chain:
    states: list[_State]
    steps: list[_Step] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)


@dataclass
class _Run:
    states: dict[str, list[_State]]  # state_str -> captures in tag order
    chains: list[_Chain]
    utg: dict[str, Any]
    package: str


# ---------------------------------------------------------------- reading files


def _tag(name: str) -> str:
    match = _TAG_RE.match(name)
    return match.group(1) if match else name


def _load_json(folder: Path, name: str) -> Any:
    raw = read_file(folder, name, name)
    try:
        return load_json(raw, name)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidData(f"{name}: invalid JSON ({exc})") from None


def _field(obj: Mapping[str, Any], key: str, kind: type, name: str, default: Any = ...) -> Any:
    value = obj.get(key)
    if value is None:
        if default is ...:
            raise InvalidData(f"{name}: field {key!r} is required")
        return default
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InvalidData(
            f"{name}: field {key!r} must be a {kind.__name__}, got {type(value).__name__}"
        )
    return value


def _folder(folder: Path, name: str) -> Path:
    path = folder / name
    if not path.is_dir():
        raise InvalidData(
            f"{name}/: folder is missing (a DroidBot output folder has states/ and events/)"
        )
    return path


def _read_states(folder: Path) -> dict[str, list[_State]]:
    states_dir = _folder(folder, STATES)
    states: dict[str, list[_State]] = {}
    for path in sorted(states_dir.glob("state_*.json")):
        name = f"{STATES}/{path.name}"
        obj = _load_json(folder, name)
        if not isinstance(obj, dict):
            raise InvalidData(f"{name}: must be a JSON object, got {type(obj).__name__}")
        tag = _tag(path.name)
        screen = next(
            (
                f"{STATES}/screen_{tag}{suffix}"
                for suffix in SCREEN_SUFFIXES
                if (states_dir / f"screen_{tag}{suffix}").is_file()
            ),
            None,
        )
        if screen is None:
            raise InvalidData(f"{name}: its screenshot {STATES}/screen_{tag}.png is missing")
        state = _State(
            state_str=_field(obj, "state_str", str, name),
            tag=tag,
            json_name=name,
            screen_name=screen,
            foreground_activity=_field(obj, "foreground_activity", str, name, ""),
            views=_field(obj, "views", list, name),
        )
        states.setdefault(state.state_str, []).append(state)
    return states


def _read_events(folder: Path) -> list[_Event]:
    events_dir = _folder(folder, EVENTS)
    events = []
    for path in sorted(events_dir.glob("event_*.json")):
        name = f"{EVENTS}/{path.name}"
        obj = _load_json(folder, name)
        if not isinstance(obj, dict):
            raise InvalidData(f"{name}: must be a JSON object, got {type(obj).__name__}")
        event = _field(obj, "event", dict, name)
        _field(event, "event_type", str, f"{name}: event")
        events.append(
            _Event(
                tag=_tag(path.name),
                name=name,
                start=_field(obj, "start_state", str, name),
                stop=_field(obj, "stop_state", str, name),
                event=event,
                event_str=_field(obj, "event_str", str, name, ""),
            )
        )
    return events


def _read_utg(folder: Path) -> dict[str, Any]:
    """utg.js is optional; when present it must hold ``var utg = {...}``."""
    if not (folder / UTG).is_file():
        return {}
    text = read_file(folder, UTG, UTG).decode("utf-8", errors="replace")
    _, eq, body = text.partition("=")
    try:
        utg = load_json(body.strip().rstrip(";"), UTG) if eq else None
    except json.JSONDecodeError as exc:
        raise InvalidData(f"{UTG}: invalid JSON after 'var utg =' ({exc})") from None
    if not isinstance(utg, dict):
        raise InvalidData(f"{UTG}: expected 'var utg = {{...}}'")
    return utg


def _screen_size(folder: Path, state: _State) -> tuple[int, int]:
    """The screenshot's size from its header; a file PIL cannot open is checked in full."""
    if state.size is None:
        path = folder / state.screen_name
        check_file_size(path.stat().st_size, state.screen_name)
        try:
            with Image.open(path) as image:
                state.size = image.size
        except Exception:  # the full check below says what is wrong, naming the file
            data = read_file(folder, state.screen_name, state.screen_name)
            info = check_image(data, state.screen_name)
            state.size = (info.width, info.height)
    return state.size


# ---------------------------------------------------------------- actions


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(round(value))


def _view_bounds(view: Any) -> tuple[int, int, int, int] | None:
    try:
        (x1, y1), (x2, y2) = view["bounds"]
    except (TypeError, KeyError, ValueError):
        return None
    numbers = (x1, y1, x2, y2)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        return None
    return numbers


def _point(
    event: Mapping[str, Any], view: Any, xk: str = "x", yk: str = "y"
) -> tuple[int, int] | None:
    """DroidBot's ``UIEvent.get_xy``: the given point when both are set, else the view centre."""
    x, y = _int(event.get(xk)), _int(event.get(yk))
    if x and y:
        return x, y
    bounds = _view_bounds(view)
    if bounds is None:
        return None
    x1, y1, x2, y2 = bounds
    return (x1 + x2) // 2, (y1 + y2) // 2


def _intent_package(command: Any) -> str | None:
    """The package an intent command launches, or None when it launches no app."""
    if not isinstance(command, str):
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = command.split()
    if argv[:1] == ["monkey"] and "-p" in argv:
        index = argv.index("-p") + 1
        return argv[index] if index < len(argv) else None
    if argv[:2] not in (["am", "start"], ["am", "start-activity"]):
        return None
    args = argv[2:]
    component = None
    if "-n" in args and args.index("-n") + 1 < len(args):
        component = args[args.index("-n") + 1]
    else:
        # DroidBot's Intent.get_cmd puts the component last: "am start [...] pkg/activity".
        skip = False
        for arg in args:
            if skip:
                skip = False
                continue
            if arg.startswith("-"):
                skip = arg not in ("-W", "-S", "-R")  # flags without a value
                continue
            if "/" in arg and "://" not in arg:
                component = arg
    if not component:
        return None
    package = component.partition("/")[0]
    return package or None


def _map_action(ev: _Event, size: tuple[int, int]) -> tuple[dict[str, Any] | None, str]:
    """The canonical action of a DroidBot event, or (None, why it cannot be expressed)."""
    event = ev.event
    kind = ev.event_type
    view = event.get("view")
    width, height = size

    def on_screen(*points: tuple[int, int]) -> bool:
        return all(0 <= x < width and 0 <= y < height for x, y in points)

    if kind in ("touch", "long_touch"):
        point = _point(event, view)
        if point is None:
            return None, "no point and no view bounds"
        if not on_screen(point):
            return None, f"point {point} lies outside the {width}x{height} screen"
        if kind == "touch":
            return {"type": "click", "x": point[0], "y": point[1]}, ""
        duration = _int(event.get("duration")) or LONG_TOUCH_MS
        return {"type": "long_press", "x": point[0], "y": point[1], "duration_ms": duration}, ""
    if kind == "scroll":
        bounds = _view_bounds(view)
        if bounds is not None:
            w, h = bounds[2] - bounds[0], bounds[3] - bounds[1]
        else:
            w, h = width, height
        point = _point(event, view) or (w // 2, h // 2)
        x, y = point
        dx, dy = w * 2 // 5, h * 2 // 5
        direction = str(event.get("direction") or "DOWN").upper()
        vectors = {
            "UP": (x, y - dy, x, y + dy),
            "DOWN": (x, y + dy, x, y - dy),
            "LEFT": (x - dx, y, x + dx, y),
            "RIGHT": (x + dx, y, x - dx, y),
        }
        if direction not in vectors:
            return None, f"unknown scroll direction {direction!r}"
        x1, y1, x2, y2 = vectors[direction]
        if not on_screen((x1, y1), (x2, y2)):
            return None, f"swipe ({x1}, {y1}) -> ({x2}, {y2}) leaves the {width}x{height} screen"
        action = {"type": "swipe", "x": x1, "y": y1, "x2": x2, "y2": y2}
        return {**action, "duration_ms": SCROLL_DURATION_MS}, ""
    if kind == "swipe":
        start = _point(event, event.get("start_view"), "start_x", "start_y")
        end = _point(event, event.get("end_view"), "end_x", "end_y")
        if start is None or end is None:
            return None, "swipe without start or end"
        if not on_screen(start, end):
            return None, f"swipe {start} -> {end} leaves the {width}x{height} screen"
        duration = _int(event.get("duration")) or SWIPE_DURATION_MS
        return {
            "type": "swipe",
            "x": start[0],
            "y": start[1],
            "x2": end[0],
            "y2": end[1],
            "duration_ms": duration,
        }, ""
    if kind == "set_text":
        text = event.get("text")
        if not isinstance(text, str) or not text:
            return None, "set_text without text"
        return {"type": "type", "text": text}, ""
    if kind == "key":
        name = event.get("name")
        if not isinstance(name, str) or not name.strip():
            return None, "key event without a key name"
        name = name.strip().upper()
        if name.startswith("KEYCODE_"):
            name = name[len("KEYCODE_") :]
        if name in NAMED_KEYS:
            return {"type": NAMED_KEYS[name]}, ""
        return {"type": "key", "keycode": f"KEYCODE_{name}"}, ""
    if kind == "intent":
        package = _intent_package(event.get("intent"))
        if package is None:
            return None, f"intent {event.get('intent')!r} launches no app"
        return {"type": "open_app", "package": package}, ""
    return None, f"event type {kind!r} has no canonical action"


# ---------------------------------------------------------------- chaining


def _capture(
    states: dict[str, list[_State]], state_str: str, tag: str, before: bool
) -> _State | None:
    captures = states.get(state_str)
    if not captures:
        return None
    if before:
        earlier = [s for s in captures if s.tag <= tag]
        return earlier[-1] if earlier else captures[0]
    later = [s for s in captures if s.tag >= tag]
    return later[0] if later else captures[-1]


def _app_package(utg: Mapping[str, Any], states: dict[str, list[_State]]) -> str:
    package = utg.get("app_package")
    if isinstance(package, str) and package:
        return package
    counts = Counter(s.package for captures in states.values() for s in captures if s.package)
    return counts.most_common(1)[0][0] if counts else "unknown"


def _plan(folder: Path) -> _Run:
    folder = Path(folder)
    states = _read_states(folder)
    events = sorted(_read_events(folder), key=lambda e: (e.tag, e.name))
    utg = _read_utg(folder)
    chains: list[_Chain] = []
    current: _Chain | None = None

    def close() -> None:
        nonlocal current
        if current is not None and current.steps:
            chains.append(current)
        current = None

    for ev in events:
        start = _capture(states, ev.start, ev.tag, before=True)
        stop = _capture(states, ev.stop, ev.tag, before=False)
        if start is None or stop is None:
            close()
            continue
        continuing = current is not None and current.states[-1].state_str == ev.start
        action, reason = _map_action(ev, _screen_size(folder, start))
        if action is None:
            if continuing and ev.event_type in GESTURES and ev.start == ev.stop:
                current.skipped.append({"event": ev.name, "reason": reason})
            else:
                close()
            continue
        if not continuing:
            close()
            current = _Chain(states=[start])
        current.steps.append(_Step(ev, action))
        current.states.append(stop)
    close()
    return _Run(states=states, chains=chains, utg=utg, package=_app_package(utg, states))


# ---------------------------------------------------------------- records


def _label(view: Mapping[str, Any]) -> str:
    for key in ("text", "content_description"):
        value = view.get(key)
        if isinstance(value, str) and value.strip():
            return repr(value.strip())
    resource_id = view.get("resource_id")
    if isinstance(resource_id, str) and resource_id and resource_id != "NONE":
        return resource_id.rpartition(":id/")[2] or resource_id
    class_name = view.get("class")
    return class_name.rpartition(".")[2] if isinstance(class_name, str) and class_name else "view"


def _summary(ev: _Event, action: Mapping[str, Any]) -> str:
    view = ev.event.get("view") if isinstance(ev.event.get("view"), dict) else None
    on = f" {_label(view)}" if view else f" at ({action.get('x')}, {action.get('y')})"
    kind = ev.event_type
    if kind == "touch":
        return f"Tap{on}"
    if kind == "long_touch":
        return f"Long-press{on}"
    if kind == "scroll":
        direction = str(ev.event.get("direction") or "DOWN").lower()
        return f"Scroll {direction}" + (f" on{on}" if view else "")
    if kind == "swipe":
        return f"Swipe from ({action['x']}, {action['y']}) to ({action['x2']}, {action['y2']})"
    if kind == "set_text":
        return f"Type {action['text']!r}" + (f" into{on}" if view else "")
    if kind == "key":
        return f"Press {str(ev.event.get('name')).upper()}"
    if kind == "intent":
        return f"Open {action['package']}"
    return kind


def _same_view(el: UIElement, view: Mapping[str, Any], bounds: tuple[int, int, int, int]) -> bool:
    return (
        el.bounds == bounds
        and el.class_name == (view.get("class") or "")
        and el.resource_id == (view.get("resource_id") or "")
        and el.text == (view.get("text") or "")
    )


def _target(ev: _Event, action: Mapping[str, Any], tree: UITree) -> dict[str, Any] | None:
    view = ev.event.get("view")
    view = view if isinstance(view, dict) else None
    bounds = _view_bounds(view) if view else None
    if view and bounds:
        for el in tree.elements:
            if _same_view(el, view, bounds):
                return el.to_target()
    if "x" in action and "y" in action:
        el = tree.element_at(action["x"], action["y"])
        if el is not None:
            return el.to_target()
    if view is None:
        return None
    target: dict[str, Any] = {
        "resource_id": view.get("resource_id") or "",
        "class": view.get("class") or "",
        "text": view.get("text") or "",
        "content_desc": view.get("content_description") or "",
    }
    if bounds and bounds[2] >= bounds[0] and bounds[3] >= bounds[1]:
        target["bounds"] = list(bounds)
    return target


class _Screens:
    """Screens of one folder, each read, checked and converted once per trajectory."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.records: dict[str, ScreenRecord] = {}
        self.trees: dict[str, UITree] = {}

    def record(self, state: _State) -> ScreenRecord:
        if state.json_name not in self.records:
            shot = read_file(self.folder, state.screen_name, state.screen_name)
            info = check_image(shot, state.screen_name)
            try:
                xml = views_to_uiautomator_xml(state.views, package=state.package)
                tree = parse_ui_xml(xml)
            except UIXmlError as exc:
                raise InvalidData(f"{state.json_name}: views: {exc}") from None
            self.trees[state.json_name] = tree
            self.records[state.json_name] = ScreenRecord(
                screenshot=shot,
                screenshot_type=info.content_type,
                ui_xml=xml,
                width=info.width,
                height=info.height,
                package=state.package,
                activity=state.activity,
            )
        return self.records[state.json_name]

    def tree(self, state: _State) -> UITree:
        self.record(state)
        return self.trees[state.json_name]


def _device(utg: Mapping[str, Any], first: ScreenRecord) -> dict[str, Any]:
    device: dict[str, Any] = {"width": first.width, "height": first.height}
    if isinstance(utg.get("device_serial"), str):
        device["serial"] = utg["device_serial"]
    if isinstance(utg.get("device_model_number"), str):
        device["model"] = utg["device_model_number"]
    sdk = utg.get("device_sdk_version")
    if isinstance(sdk, int) and sdk in ANDROID_VERSIONS:
        device["android_version"] = ANDROID_VERSIONS[sdk]
    return device


def _record(folder: Path, run: _Run, chain: _Chain) -> TrajectoryRecord:
    screens = _Screens(folder)
    # One screen per position: a state seen again later is a new observation (same blobs).
    screen_records = [screens.record(state) for state in chain.states]
    steps = []
    for index, step in enumerate(chain.steps):
        before = chain.states[index]
        steps.append(
            StepRecord(
                index=index,
                screen=index,
                action=step.action,
                target=_target(step.event, step.action, screens.tree(before)),
                summary=_summary(step.event, step.action),
            )
        )
    identity = "|".join(
        [run.package] + [f"{s.event.tag}:{s.event.start}>{s.event.stop}" for s in chain.steps]
    )
    package = run.package
    return TrajectoryRecord(
        uid=str(uuid.uuid5(NAMESPACE, identity)),
        task=TaskRecord(
            uid=f"droidbot:{package}",
            goal=f"Explore {package} (DroidBot)",
            apps=[package],
        ),
        screens=screen_records,
        steps=steps,
        final_screen=len(screen_records) - 1,
        device=_device(run.utg, screen_records[0]),
        source="imported",
        metadata={
            "droidbot": {
                "events": [s.event.name for s in chain.steps],
                "event_strs": [s.event.event_str for s in chain.steps],
                "states": [s.json_name for s in chain.states],
                "skipped": chain.skipped,
            }
        },
    )


def count_trajectories(folder: Path) -> int:
    """How many trajectories :func:`read_droidbot` yields (reads JSON and image headers only)."""
    return len(_plan(Path(folder)).chains)


def read_droidbot(
    folder: Path, checked: dict[str, Any] | None = None
) -> Iterator[tuple[str, TrajectoryRecord]]:
    """Yield (where, record) for every chained trajectory of a DroidBot output folder."""
    folder = Path(folder)
    run = _plan(folder)
    for number, chain in enumerate(run.chains, start=1):
        first, last = chain.steps[0].event.name, chain.steps[-1].event.name
        where = f"DroidBot trajectory {number} ({first} .. {last}):"
        yield where, _record(folder, run, chain)
