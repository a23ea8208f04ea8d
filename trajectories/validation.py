"""Every rule about a trajectory's content, in one place.

Each ``check_*`` function raises :class:`InvalidData` naming the offending place (``where``
is a prefix such as ``"line 3: steps[4].action"``) and returns the normalised value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import orjson

from .invalid import (  # noqa: F401 (re-exported: the rules' errors and how they word things)
    SHOWN,
    InvalidData,
    InvalidRequest,
    check_grading_rule,
    cut,
    fail,
    field_at,
    shown,
)
from .models import ActionType, AnchorType, Relation, SubgoalSuccess

MAX_INT = 2**31 - 1  # the largest value of an integer column on every database


def _int(value: Any, where: str, *, minimum: int | None = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(where, f"must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise fail(where, f"must be at least {minimum}, got {value}")
    if value > MAX_INT:
        raise fail(where, f"must be at most {MAX_INT}, got {value}")
    return value


def _str(value: Any, where: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise fail(where, f"must be a string, got {type(value).__name__}")
    if not allow_empty and not value:
        raise fail(where, "must not be empty")
    return value


# Required fields of each action type, and the optional ones, with their kinds.
ACTION_FIELDS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    ActionType.CLICK: ({"x": "int", "y": "int"}, {}),
    ActionType.LONG_PRESS: ({"x": "int", "y": "int"}, {"duration_ms": "int"}),
    ActionType.SWIPE: (
        {"x": "int", "y": "int", "x2": "int", "y2": "int"},
        {"duration_ms": "int"},
    ),
    ActionType.TYPE: ({"text": "str"}, {}),
    ActionType.KEY: ({"keycode": "str"}, {}),
    ActionType.BACK: ({}, {}),
    ActionType.HOME: ({}, {}),
    ActionType.ENTER: ({}, {}),
    ActionType.OPEN_APP: ({"package": "str"}, {"app_label": "str"}),
    ActionType.WAIT: ({"duration_ms": "int"}, {}),
    ActionType.ANSWER: ({"text": "str"}, {}),
    ActionType.TERMINATE: ({"status": "str"}, {}),
}
TERMINATE_STATUSES = ("success", "failure")


def check_action(action: Any, where: str = "action") -> tuple[str, dict[str, Any]]:
    """Validate a canonical action ``{"type": ..., fields...}``; return (type, fields)."""
    if not isinstance(action, Mapping):
        raise fail(where, f"must be an object, got {type(action).__name__}")
    action_type = action.get("type")
    if action_type not in ACTION_FIELDS:
        known = ", ".join(ACTION_FIELDS)
        raise fail(field_at(where, "type"), f"unknown action type {action_type!r} (known: {known})")
    required, optional = ACTION_FIELDS[action_type]
    fields: dict[str, Any] = {}
    for name, value in action.items():
        if name == "type":
            continue
        kind = required.get(name) or optional.get(name)
        if kind is None:
            raise fail(field_at(where, name), f"is not a field of a {action_type} action")
        if kind == "int":
            fields[name] = _int(value, field_at(where, name))
        else:
            # Typed text may legitimately be empty only for nothing: an empty type is no action.
            fields[name] = _str(value, field_at(where, name))
    for name in required:
        if name not in fields:
            raise fail(field_at(where, name), f"is required for a {action_type} action")
    if action_type == ActionType.TERMINATE and fields["status"] not in TERMINATE_STATUSES:
        raise fail(
            field_at(where, "status"), f"must be one of success, failure, got {fields['status']!r}"
        )
    return action_type, fields


def check_point_on_screen(
    fields: Mapping[str, Any], width: int, height: int, where: str = "action"
) -> None:
    """Coordinates are pixels of the step's screenshot: they must lie on it."""
    for xk, yk in (("x", "y"), ("x2", "y2")):
        if xk in fields and not (0 <= fields[xk] < width and 0 <= fields[yk] < height):
            raise fail(
                where,
                f"point ({fields[xk]}, {fields[yk]}) lies outside the {width}x{height} screenshot",
            )


def check_bounds(value: Any, where: str) -> list[int]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 4
        or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
    ):
        raise fail(where, f"must be four integers [x1, y1, x2, y2], got {value!r}")
    x1, y1, x2, y2 = value
    if x2 < x1 or y2 < y1:
        raise fail(where, f"must have x2 >= x1 and y2 >= y1, got {list(value)}")
    return list(value)


def check_subgoals(
    ranges: Iterable[tuple[int, int]], step_count: int, where: str = "subgoals"
) -> None:
    """Subgoal ranges ``[start, end]`` stay inside the trajectory and never overlap."""
    ordered = sorted(enumerate(ranges), key=lambda item: item[1])
    previous: tuple[int, tuple[int, int]] | None = None
    for position, (start, end) in ordered:
        place = f"{where}[{position}]"
        if start > end:
            raise fail(place, f"start {start} is after end {end}")
        if end >= step_count:
            raise fail(
                place,
                f"range [{start}, {end}] ends past the last step ({step_count - 1})"
                if step_count
                else f"range [{start}, {end}] but the trajectory has no steps",
            )
        if previous is not None and start <= previous[1][1]:
            other, (ostart, oend) = previous
            raise fail(
                place,
                f"range [{start}, {end}] overlaps subgoals[{other}] [{ostart}, {oend}]",
            )
        previous = (position, (start, end))


@cache
def choice_values(choices: type) -> tuple[str, ...]:
    """A choices class's values, listed once per process (Django's ``.values`` builds the
    list again on every use, which an import of 35,000 steps asks for tens of thousands of
    times)."""
    return tuple(choices.values)


def check_success(value: Any, where: str) -> str:
    if value in ("", None):
        return ""
    if value not in choice_values(SubgoalSuccess):
        raise fail(where, f"must be one of yes, no, uncertain, got {value!r}")
    return value


def check_step_index(value: Any, step_count: int, where: str) -> int:
    index = _int(value, where)
    if index >= step_count:
        raise fail(where, f"step {index} does not exist (the trajectory has {step_count} steps)")
    return index


def check_memory_target(
    encode_step: int, retrieve_steps: Iterable[int], step_count: int, where: str
) -> list[int]:
    check_step_index(encode_step, step_count, field_at(where, "encode_step"))
    checked = []
    for i, step in enumerate(retrieve_steps):
        place = f"{field_at(where, 'retrieve_steps')}[{i}]"
        check_step_index(step, step_count, place)
        if step <= encode_step:
            raise fail(place, f"step {step} is not after the encode step {encode_step}")
        checked.append(step)
    return sorted(set(checked))


def check_anchor_type(value: Any, where: str) -> str:
    if value not in (known := choice_values(AnchorType)):
        raise fail(where, f"unknown anchor type {value!r} (known: {', '.join(known)})")
    return value


def check_relation(value: Any, where: str) -> str:
    if value not in (known := choice_values(Relation)):
        raise fail(where, f"unknown relation {value!r} (known: {', '.join(known)})")
    return value


def check_anchor_link(
    source: str, target: str, anchor_keys: set[str] | Mapping[str, Any], where: str
) -> None:
    """Links join anchors of the same trajectory, and an anchor never links to itself."""
    for field, key in (("source", source), ("target", target)):
        if key not in anchor_keys:
            raise fail(
                field_at(where, field),
                f"anchor {key!r} is not an anchor of this trajectory",
            )
    if source == target:
        raise fail(where, f"anchor {source!r} links to itself")


def check_choice(value: Any, choices: Iterable[str], where: str) -> str:
    allowed = tuple(choices)
    if value not in allowed:
        raise fail(where, f"must be one of {', '.join(allowed)}, got {value!r}")
    return value


KIND_NAMES = {
    str: "a string",
    int: "an integer",
    bool: "true or false",
    dict: "an object",
    list: "a list",
}


def check_kind(value: Any, kind: type, where: str) -> Any:
    """A JSON value of one kind (``True`` is not an integer here)."""
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise fail(where, f"must be {KIND_NAMES[kind]}, got {type(value).__name__}")
    return value


def check_field(obj: Any, name: str, kind: type, where: str) -> Any:
    """A required field of a JSON object, of one kind."""
    if not isinstance(obj, dict):
        raise fail(where, f"must be an object, got {type(obj).__name__}")
    if name not in obj:
        raise fail(where, f"missing field {name!r}")
    return check_kind(obj[name], kind, field_at(where, name))


def _fields_of(obj: Any, kinds: Mapping[str, type], where: str) -> None:
    """Optional fields of a JSON object, each of one kind when present."""
    for name, kind in kinds.items():
        value = obj.get(name)
        if value is None:
            continue
        check_kind(value, kind, field_at(where, name))
        if kind is int:
            _int(value, field_at(where, name))


def check_length(value: str, limit: int, where: str) -> str:
    """A string that fits a column of ``limit`` characters (PostgreSQL refuses a longer one)."""
    if len(value) > limit:
        raise fail(where, f"must be at most {limit} characters, got {len(value)}")
    return value


NUL_MESSAGE = "must not contain NUL characters"


def _child_place(place: str, key: Any) -> str:
    return f"{place}[{key}]" if isinstance(key, int) else field_at(place, str(key))


def check_no_nul(value: Any, where: str) -> None:
    """Refuse a NUL character anywhere in ``value``, nested objects and lists included.

    PostgreSQL stores none in a text or JSON column (SQLite does, so such data would not move
    between the two). The walk keeps its own stack: JSON nested as deep as the parser allows
    cannot exhaust Python's.
    """
    if isinstance(value, str):
        if "\x00" in value:
            raise fail(where, NUL_MESSAGE)
        return
    if not value:
        return
    if _nul_free(value):
        return
    pending = [(value, where)]
    while pending:
        item, place = pending.pop()
        if isinstance(item, Mapping):
            children: Iterable[tuple[Any, Any]] = item.items()
        elif isinstance(item, list | tuple):
            children = enumerate(item)
        else:
            continue
        for key, child in children:
            if isinstance(key, str) and "\x00" in key:
                raise fail(place, f"{NUL_MESSAGE} (in the name {key!r})")
            if isinstance(child, str):
                if "\x00" in child:
                    raise fail(_child_place(place, key), NUL_MESSAGE)
            elif isinstance(child, Mapping | list | tuple):
                pending.append((child, _child_place(place, key)))


def _nul_free(value: Any) -> bool:
    """Whether no NUL character is anywhere in ``value`` (False: maybe one is), at the cost of
    one orjson call: orjson writes a NUL, in a name or a value, as \\u0000."""
    try:
        return b"\\u0000" not in orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return False  # not JSON all through (an integer beyond 64 bits): walk it


def _column(model: Any, name: str) -> int:
    return model._meta.get_field(name).max_length


def _check_storable(record: Any, where: str) -> None:
    """What every database can store: strings within their columns, and no NUL character."""
    from .models import Anchor, MemoryTarget, Screen, Subgoal, Task, Trajectory

    check_length(record.task.uid, _column(Task, "uid"), field_at(where, "task.uid"))
    for key, column in (("serial", "device_serial"), ("model", "device_model"),
                        ("android_version", "android_version")):  # fmt: skip
        value = record.device.get(key)
        if isinstance(value, str):
            check_length(value, _column(Trajectory, column), field_at(where, f"device.{key}"))
    if record.recorded_by:
        check_length(
            record.recorded_by, _column(Trajectory, "recorder_name"), field_at(where, "recorded_by")
        )
    limits = {name: _column(Screen, name) for name in ("package", "activity")}
    for i, screen in enumerate(record.screens):
        for name, limit in limits.items():
            if len(getattr(screen, name)) > limit:
                place = f"{field_at(where, 'screens')}[{i}]"
                check_length(getattr(screen, name), limit, f"{place}.{name}")
    for label, key, model, column in (("subgoals", "origin", Subgoal, "origin"),
                                      ("memory_targets", "key", MemoryTarget, "key"),
                                      ("anchors", "id", Anchor, "key")):  # fmt: skip
        for i, item in enumerate(getattr(record, label)):
            value = item.get(key)
            if isinstance(value, str):
                place = f"{field_at(where, label)}[{i}].{key}"
                check_length(value, _column(model, column), place)

    task = record.task
    for name in ("uid", "goal", "apps", "gold_answer", "memory_items"):
        check_no_nul(getattr(task, name), field_at(where, f"task.{name}"))
    for name in ("uid", "device", "recorded_by", "metadata"):
        check_no_nul(getattr(record, name), field_at(where, name))
    screen_fields = ("package", "activity", "features", "visible_memory")
    step_fields = ("action", "target", "thought", "summary", "memory")
    values = [getattr(screen, name) for screen in record.screens for name in screen_fields]
    values += [getattr(step, name) for step in record.steps for name in step_fields]
    if not _nul_free(values):  # then find it, field by field, to name its place
        for i, screen in enumerate(record.screens):
            place = f"{field_at(where, 'screens')}[{i}]"
            for name in screen_fields:
                check_no_nul(getattr(screen, name), f"{place}.{name}")
        for i, step in enumerate(record.steps):
            place = f"{field_at(where, 'steps')}[{i}]"
            for name in step_fields:
                check_no_nul(getattr(step, name), f"{place}.{name}")
    for name in ("subgoals", "memory_targets", "anchors", "anchor_links"):
        check_no_nul(getattr(record, name), field_at(where, name))


def check_trajectory_record(record: Any, where: str = "") -> None:
    """Every rule a whole trajectory must satisfy before anything of it is written.

    ``record`` is a :class:`trajectories.records.TrajectoryRecord`.
    """
    from .models import Difficulty, Intent, Outcome, Source, Status

    task = record.task
    _str(task.uid, field_at(where, "task.uid"))
    _str(task.goal, field_at(where, "task.goal"))
    if task.intent:
        check_choice(task.intent, choice_values(Intent), field_at(where, "task.intent"))
    if task.difficulty:
        check_choice(task.difficulty, choice_values(Difficulty), field_at(where, "task.difficulty"))
    check_grading_rule(task.grading_rule, field_at(where, "task.grading_rule"))
    check_choice(record.source, choice_values(Source), field_at(where, "source"))
    check_choice(record.status, choice_values(Status), field_at(where, "status"))
    check_choice(record.outcome, choice_values(Outcome), field_at(where, "outcome"))
    if not all(isinstance(app, str) for app in task.apps):
        raise fail(field_at(where, "task.apps"), "must be a list of package names")
    if not all(isinstance(item, Mapping) for item in task.memory_items):
        raise fail(field_at(where, "task.memory_items"), "must be a list of objects")
    _fields_of(
        record.device,
        {"serial": str, "model": str, "android_version": str, "width": int, "height": int,
         "density": int},
        field_at(where, "device"),
    )  # fmt: skip

    screen_count = len(record.screens)
    for i, screen in enumerate(record.screens):
        place = f"{field_at(where, 'screens')}[{i}]"
        _int(screen.width, f"{place}.width", minimum=1)
        _int(screen.height, f"{place}.height", minimum=1)
    if record.final_screen is not None and not 0 <= record.final_screen < screen_count:
        raise fail(field_at(where, "final_screen"), f"screen {record.final_screen} does not exist")

    for position, step in enumerate(record.steps):
        place = f"{field_at(where, 'steps')}[{position}]"
        if step.index != position:
            raise fail(
                f"{place}.index",
                f"steps out of order: expected index {position}, got {step.index}",
            )
        if not (isinstance(step.screen, int) and 0 <= step.screen < screen_count):
            raise fail(f"{place}.screen", f"screen {step.screen!r} does not exist")
        action_type, fields = check_action(step.action, f"{place}.action")
        screen = record.screens[step.screen]
        check_point_on_screen(fields, screen.width, screen.height, f"{place}.action")
        if step.target is not None:
            if not isinstance(step.target, Mapping):
                raise fail(f"{place}.target", "must be an object")
            if "bounds" in step.target:
                check_bounds(step.target["bounds"], f"{place}.target.bounds")

    step_count = len(record.steps)
    ranges = []
    for i, subgoal in enumerate(record.subgoals):
        place = f"{field_at(where, 'subgoals')}[{i}]"
        ranges.append(
            (
                _int(subgoal.get("start"), f"{place}.start"),
                _int(subgoal.get("end"), f"{place}.end"),
            )
        )
        check_success(subgoal.get("success", ""), f"{place}.success")
        _fields_of(subgoal, {"text": str, "effect": str, "behaviour": str, "origin": str}, place)
    check_subgoals(ranges, step_count, field_at(where, "subgoals"))

    for i, target in enumerate(record.memory_targets):
        place = f"{field_at(where, 'memory_targets')}[{i}]"
        _str(target.get("key"), f"{place}.key")
        _str(target.get("value"), f"{place}.value", allow_empty=True)
        retrieve = target.get("retrieve_steps", [])
        if not isinstance(retrieve, list):
            raise fail(f"{place}.retrieve_steps", "must be a list of step indices")
        check_memory_target(target.get("encode_step"), retrieve, step_count, place)
        _fields_of(target, {"evidence": dict}, place)

    keys: set[str] = set()
    for i, anchor in enumerate(record.anchors):
        place = f"{field_at(where, 'anchors')}[{i}]"
        key = _str(anchor.get("id"), f"{place}.id")
        if key in keys:
            raise fail(f"{place}.id", f"duplicate anchor id {key!r}")
        keys.add(key)
        check_step_index(anchor.get("step"), step_count, f"{place}.step")
        check_anchor_type(anchor.get("type"), f"{place}.type")
        _str(anchor.get("content"), f"{place}.content")
        _fields_of(anchor, {"description": str, "evidence": dict}, place)
    seen_links = set()
    for i, link in enumerate(record.anchor_links):
        place = f"{field_at(where, 'anchor_links')}[{i}]"
        check_anchor_link(link.get("source"), link.get("target"), keys, place)
        check_relation(link.get("relation"), f"{place}.relation")
        if not isinstance(link.get("critical", False), bool):
            raise fail(f"{place}.critical", "must be true or false")
        triple = (link["source"], link["target"], link["relation"])
        if triple in seen_links:
            raise fail(place, f"duplicate link {triple[0]} -{triple[2]}-> {triple[1]}")
        seen_links.add(triple)

    _check_storable(record, where)
