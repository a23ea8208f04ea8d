"""A trainer's output for one step, read as an action of the recording's canonical schema.

The output is a canonical ``action`` (with the memory it writes), or a model's ``text`` in one of
the formats the agents read (``agents.chat``: GUI-Owl's ``mobile_use``, AndroTMem's v1-v3) or as
the canonical action in JSON (``waypoint``). Whatever cannot be read as an action this device
can take is an invalid output, with the reason (STAMP's format reward); nothing reaches the
device then.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agents.base import Observation
from agents.chat import REGIMES, InvalidOutput
from trajectories.validation import InvalidData, check_action, check_point_on_screen

from .protocol import FORMATS, WaypointAction

MODEL_FORMATS = {name: name for name in FORMATS if name != "waypoint"}  # read by agents.chat


@dataclass
class Output:
    """The output as read: the canonical action (None: invalid, ``invalid`` says why), the
    memory written with it, and the step's thought and summary where the format has them."""

    action: dict[str, Any] | None
    memory: str = ""
    invalid: str = ""
    text: dict[str, str] = field(default_factory=dict)


def resolve_app(action: dict[str, Any], apps: list[dict[str, Any]]) -> dict[str, Any]:
    """An ``open_app`` naming the app as people do (its label or slug) opens its package."""
    if action.get("type") != "open_app" or not isinstance(action.get("package"), str):
        return action
    named = action["package"].strip().lower()
    for app in apps:
        if named in (app["package"].lower(), app["slug"].lower(), app.get("label", "").lower()):
            return {**action, "package": app["package"]}
    return action


def _canonical(value: Any) -> tuple[dict[str, Any], str]:
    """A ``waypoint`` text: ``{"type": ...}`` or ``{"action": {...}, "memory": "..."}``."""
    try:
        found = json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidOutput(f"the output is not JSON ({exc.msg})") from None
    if isinstance(found, dict) and isinstance(found.get("action"), dict):
        memory = found.get("memory")
        return found["action"], memory if isinstance(memory, str) else ""
    if isinstance(found, dict):
        return found, ""
    raise InvalidOutput(f"the output is JSON but not an object ({type(found).__name__})")


def read_output(
    given: WaypointAction, width: int, height: int, apps: list[dict[str, Any]]
) -> Output:
    """The trainer's output as a checked canonical action (the screen is ``width`` x
    ``height``), or an invalid output saying why."""
    text: dict[str, str] = {"thought": given.thought} if given.thought else {}
    memory = given.memory
    try:
        if given.text is None:
            action = given.action or {}
        elif given.format == "waypoint":
            action, memory = _canonical(given.text)
        else:
            regime = REGIMES[MODEL_FORMATS[given.format]](5)
            screen = Observation("", b"", None, width, height, 0, "")
            step = regime.read(given.text, screen)
            action, memory = step.action, step.memory
            text = {
                name: str(step.extra.get(name) or "")
                for name in ("thought", "summary")
                if step.extra.get(name)
            }
        action = resolve_app(action, apps)
        kind, fields = check_action(action)
        check_point_on_screen(fields, width, height)
    except (InvalidOutput, InvalidData) as exc:
        return Output(action=None, memory=memory, invalid=str(exc), text=text)
    return Output(action={"type": kind, **fields}, memory=memory, text=text)
