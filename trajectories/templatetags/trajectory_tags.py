"""Drawing a step's action over its screenshot, as SVG in the screenshot's pixel coordinates."""

from __future__ import annotations

import json
import math
from typing import Any

from django import template

from ..models import ActionType, Step

register = template.Library()

BADGE_LABELS = {
    ActionType.BACK: "BACK",
    ActionType.HOME: "HOME",
    ActionType.ENTER: "ENTER",
}
LABEL_MAX = 40


def _short(text: str, limit: int = LABEL_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def badge_text(step: Step) -> str | None:
    """The label of a badge for actions without a point on the screen."""
    fields = step.action or {}
    kind = step.action_type
    if kind in BADGE_LABELS:
        return BADGE_LABELS[kind]
    if kind == ActionType.KEY:
        return str(fields.get("keycode", "KEY")).removeprefix("KEYCODE_")
    if kind == ActionType.OPEN_APP:
        return "OPEN " + _short(str(fields.get("app_label") or fields.get("package", "")))
    if kind == ActionType.WAIT:
        return f"WAIT {fields.get('duration_ms', '?')} ms"
    if kind == ActionType.ANSWER:
        return "ANSWER " + _short(str(fields.get("text", "")))
    if kind == ActionType.TERMINATE:
        return f"END {fields.get('status', '')}".strip()
    return None


def _num(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _arrow(x: Any, y: Any, x2: Any, y2: Any, stroke: float) -> dict[str, str]:
    angle = math.atan2(y2 - y, x2 - x)
    head = stroke * 4
    left = (x2 - head * math.cos(angle - 0.45), y2 - head * math.sin(angle - 0.45))
    right = (x2 - head * math.cos(angle + 0.45), y2 - head * math.sin(angle + 0.45))
    points = " ".join(f"{_num(px)},{_num(py)}" for px, py in ((x2, y2), left, right))
    return {
        "x": str(x),
        "y": str(y),
        "x2": str(x2),
        "y2": str(y2),
        "r": _num(stroke * 1.5),
        "points": points,
    }


def _label(
    text: str, x: float, y: float, font: float, css: str, screen_width: float
) -> dict[str, str]:
    """A text label on a box, anchored at its top-left corner, kept inside the screen."""
    pad = font * 0.35
    # Bold sans-serif runs about 0.66 em per character; err on the wide side.
    fits = max(4, int((screen_width - 2 * pad) / (font * 0.66)))
    if len(text) > fits:
        text = text[: fits - 1] + "…"
    width = len(text) * font * 0.66 + 2 * pad
    x = max(0.0, min(x, screen_width - width))
    return {
        "css": css,
        "x": _num(x),
        "y": _num(y),
        "width": _num(width),
        "height": _num(font + 2 * pad),
        "rx": _num(pad),
        "text_x": _num(x + pad),
        "text_y": _num(y + pad + font * 0.85),
        "font": _num(font),
        "text": text,
    }


def target_bounds(step: Step) -> list[int] | None:
    bounds = (step.target or {}).get("bounds")
    if isinstance(bounds, list) and len(bounds) == 4 and all(isinstance(v, int) for v in bounds):
        return bounds
    return None


def overlay_shapes(step: Step, css_class: str = "overlay") -> dict[str, Any]:
    """What the overlay of a step draws, in its screenshot's pixels: the target's box, the
    tap (with a ring for a long press), the swipe's arrow, or a label (typed text, a badge).
    Every value is text for the template (``trajectories/_action_overlay.html``)."""
    screen = step.screen
    width, height = screen.width or 1, screen.height or 1
    unit = max(width, height) / 100  # one per cent of the longer side
    stroke = unit * 0.6
    fields: dict[str, Any] = step.action or {}
    shapes: dict[str, Any] = {
        "css_class": css_class,
        "width": str(width),
        "height": str(height),
        "stroke": _num(stroke),
    }

    bounds = target_bounds(step)
    if bounds:
        x1, y1, x2, y2 = bounds
        shapes["target"] = {
            "x": str(x1),
            "y": str(y1),
            "width": str(x2 - x1),
            "height": str(y2 - y1),
        }

    kind = step.action_type
    if kind in (ActionType.CLICK, ActionType.LONG_PRESS) and "x" in fields:
        shapes["tap"] = {
            "x": str(fields["x"]),
            "y": str(fields["y"]),
            "r": _num(unit * 2.5),
            "ring": _num(unit * 4) if kind == ActionType.LONG_PRESS else "",
        }
    elif kind == ActionType.SWIPE and "x2" in fields:
        shapes["swipe"] = _arrow(fields["x"], fields["y"], fields["x2"], fields["y2"], stroke)
    elif kind == ActionType.TYPE:
        text = "⌨ " + _short(str(fields.get("text", "")))
        if bounds:
            x, y = bounds[0], bounds[3] + unit
        else:
            x, y = unit * 2, height * 0.45
        shapes["label"] = _label(text, x, min(y, height - unit * 6), unit * 3, "typed", width)
    else:
        badge = badge_text(step)
        if badge:
            shapes["label"] = _label(badge, unit * 2, unit * 2, unit * 3.5, "badge", width)
    return shapes


@register.inclusion_tag("trajectories/_action_overlay.html")
def action_overlay(step: Step, css_class: str = "overlay") -> dict[str, Any]:
    """An ``<svg>`` the size of the step's screenshot, showing its action and target."""
    return overlay_shapes(step, css_class)


@register.filter
def action_json(step: Step) -> str:
    return json.dumps({"type": step.action_type, **(step.action or {})}, ensure_ascii=False)


@register.filter
def pretty_json(value: Any) -> str:
    """An object as one ``key: value`` line per field (bounds stay on one line)."""
    if value in (None, "", {}, []):
        return ""
    if isinstance(value, dict):
        return "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in value.items())
    return json.dumps(value, ensure_ascii=False)


@register.filter
def action_summary(step: Step) -> str:
    """A one-line description of the action for captions."""
    fields = step.action or {}
    kind = step.action_type
    if kind in (ActionType.CLICK, ActionType.LONG_PRESS):
        return f"{kind} ({fields.get('x')}, {fields.get('y')})"
    if kind == ActionType.SWIPE:
        start, end = (fields.get("x"), fields.get("y")), (fields.get("x2"), fields.get("y2"))
        return f"swipe {start} → {end}".replace("None", "?")
    if kind == ActionType.TYPE:
        return f"type “{_short(str(fields.get('text', '')), 30)}”"
    # What the annotator typed or the app is called stays as stored; only our words are lower.
    if kind == ActionType.ANSWER:
        return f"answer “{_short(str(fields.get('text', '')))}”"
    if kind == ActionType.OPEN_APP:
        return "open " + _short(str(fields.get("app_label") or fields.get("package", "")))
    return (badge_text(step) or kind).lower()


@register.filter
def count_text(value: Any) -> str:
    """A job count for people: ``{"train": 2, "test": 1}`` -> ``train 2, test 1``."""
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
    return str(value)
