"""Drawing a step's action over its screenshot, as SVG in the screenshot's pixel coordinates."""

from __future__ import annotations

import json
import math
from html import escape
from typing import Any

from django import template
from django.utils.safestring import SafeString

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


def _e(value: Any) -> str:
    """A value as ``format_html`` writes it: its text, HTML-escaped (numbers from the action's
    JSON too: it is the recorder's data)."""
    return escape(str(value))


def _arrow(x: int, y: int, x2: int, y2: int, stroke: float) -> str:
    angle = math.atan2(y2 - y, x2 - x)
    head = stroke * 4
    left = (x2 - head * math.cos(angle - 0.45), y2 - head * math.sin(angle - 0.45))
    right = (x2 - head * math.cos(angle + 0.45), y2 - head * math.sin(angle + 0.45))
    points = " ".join(f"{_num(px)},{_num(py)}" for px, py in ((x2, y2), left, right))
    x, y = _e(x), _e(y)
    return (
        f'<line class="swipe" x1="{x}" y1="{y}" x2="{_e(x2)}" y2="{_e(y2)}"'
        f' stroke-width="{_num(stroke)}"/>'
        f'<circle class="swipe-start" cx="{x}" cy="{y}" r="{_num(stroke * 1.5)}"/>'
        f'<polygon class="swipe-head" points="{points}"/>'
    )


def _label(text: str, x: float, y: float, font: float, css: str, screen_width: float) -> str:
    """A text label on a box, anchored at its top-left corner, kept inside the screen."""
    pad = font * 0.35
    # Bold sans-serif runs about 0.66 em per character; err on the wide side.
    fits = max(4, int((screen_width - 2 * pad) / (font * 0.66)))
    if len(text) > fits:
        text = text[: fits - 1] + "…"
    width = len(text) * font * 0.66 + 2 * pad
    x = max(0.0, min(x, screen_width - width))
    return (
        f'<g class="{_e(css)}"><rect x="{_num(x)}" y="{_num(y)}" width="{_num(width)}"'
        f' height="{_num(font + 2 * pad)}" rx="{_num(pad)}"/>'
        f'<text x="{_num(x + pad)}" y="{_num(y + pad + font * 0.85)}" font-size="{_num(font)}">'
        f"{_e(text)}</text></g>"
    )


def target_bounds(step: Step) -> list[int] | None:
    bounds = (step.target or {}).get("bounds")
    if isinstance(bounds, list) and len(bounds) == 4 and all(isinstance(v, int) for v in bounds):
        return bounds
    return None


@register.simple_tag
def action_overlay(step: Step, css_class: str = "overlay") -> SafeString:
    """An ``<svg>`` the size of the step's screenshot, showing its action and target."""
    screen = step.screen
    width, height = screen.width or 1, screen.height or 1
    unit = max(width, height) / 100  # one per cent of the longer side
    stroke = unit * 0.6
    fields: dict[str, Any] = step.action or {}
    parts: list[str] = []  # markup, every value in it escaped

    bounds = target_bounds(step)
    if bounds:
        x1, y1, x2, y2 = bounds
        parts.append(
            f'<rect class="target" x="{x1}" y="{y1}" width="{x2 - x1}" height="{y2 - y1}"'
            f' stroke-width="{_num(stroke)}"/>'
        )

    kind = step.action_type
    if kind in (ActionType.CLICK, ActionType.LONG_PRESS) and "x" in fields:
        x, y = _e(fields["x"]), _e(fields["y"])
        parts.append(
            f'<circle class="tap" cx="{x}" cy="{y}" r="{_num(unit * 2.5)}"'
            f' stroke-width="{_num(stroke)}"/>'
        )
        if kind == ActionType.LONG_PRESS:
            parts.append(
                f'<circle class="tap-ring" cx="{x}" cy="{y}" r="{_num(unit * 4)}"'
                f' stroke-width="{_num(stroke)}"/>'
            )
    elif kind == ActionType.SWIPE and "x2" in fields:
        parts.append(_arrow(fields["x"], fields["y"], fields["x2"], fields["y2"], stroke))
    elif kind == ActionType.TYPE:
        text = "⌨ " + _short(str(fields.get("text", "")))
        if bounds:
            x, y = bounds[0], bounds[3] + unit
        else:
            x, y = unit * 2, height * 0.45
        parts.append(_label(text, x, min(y, height - unit * 6), unit * 3, "typed", width))
    else:
        badge = badge_text(step)
        if badge:
            parts.append(_label(badge, unit * 2, unit * 2, unit * 3.5, "badge", width))

    return SafeString(  # every value in it is escaped
        f'<svg class="{_e(css_class)}" viewBox="0 0 {_e(width)} {_e(height)}"'
        ' preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg" aria-hidden="true">'
        f"{''.join(parts)}</svg>"
    )


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
