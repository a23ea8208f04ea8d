"""Waypoint's own reasoning for a step, written from the step alone when no model wrote one
(STAMP §3.3 synthesizes "memory-aware reasoning targets for each step": with a model, the
environments pipeline does, ``environments/training.py``). The text says what the step does
and, at a step that writes memory, why the value is kept; it names nothing the step's screen,
action and memory do not.

A sample says where its reasoning came from (``REASONING_SOURCES``): ``model:NAME`` (written by a
model for the step), ``recorded`` (the step's own thought: a person's, or an agent's output),
``template`` (this module's text, for a step that had none).
"""

from __future__ import annotations

import json
from typing import Any

TEMPLATE = "template"
RECORDED = "recorded"
MODEL = "model"


def _target(step: dict[str, Any]) -> str:
    target = step.get("target") or {}
    for key in ("text", "content_desc"):
        value = str(target.get(key) or "").strip()
        if value:
            return value[:60]
    rid = str(target.get("resource_id") or "")
    return rid.rpartition("/")[2].replace("_", " ") if rid else ""


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def template_reasoning(step: dict[str, Any]) -> str:
    """One or two sentences of first-person reasoning for a step of a native record."""
    action = step["action"]
    kind = action["type"]
    memory = str(step.get("memory") or "").strip()
    if kind == "open_app":
        does = f"The task happens in {action.get('app_label') or action.get('package')}: I open it."
    elif kind in ("click", "long_press"):
        target = _target(step)
        does = (
            f"The next thing the task needs is {_quoted(target)}: I tap it."
            if target
            else "I tap the element the task needs next."
        )
    elif kind == "type":
        does = f"I type {_quoted(action['text'])} into the field."
    elif kind == "swipe":
        does = "What I look for is not on the screen yet: I scroll to it."
    elif kind in ("back", "home"):
        does = f"This page is done with: I go {'back' if kind == 'back' else 'home'}."
    elif kind == "answer":
        does = f"Everything the task asks for is gathered: I answer {_quoted(action['text'])}."
    elif kind == "terminate":
        does = "The task is finished." if action.get("status") == "success" else "I stop here."
    elif kind == "wait":
        does = "The screen is still changing: I wait."
    else:
        does = f"I press {action.get('keycode') or kind}."
    if memory:
        return (
            f"This screen shows what the task needs later ({memory}); it will be gone from the "
            f"screen before I use it, so I keep it in memory. {does}"
        )
    return does


def step_source(record: dict[str, Any], step: dict[str, Any]) -> str:
    """Where the step's reasoning comes from: ``model:NAME``, ``recorded`` or ``template``."""
    synthesized = (record.get("metadata") or {}).get("reasoning") or {}
    if str(step["index"]) in (synthesized.get("steps") or {}) and step.get("thought", "").strip():
        return f"{MODEL}:{synthesized.get('model', '')}"
    return RECORDED if str(step.get("thought") or "").strip() else TEMPLATE
