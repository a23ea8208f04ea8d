"""What ``{% action_overlay %}`` draws over a screenshot (overlays_expected.txt: the SVG it
draws), for every kind of action, escaping what the recorder sent (texts, and
coordinates that are not numbers)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.template import Context, Template, engines

from trajectories.models import Screen, Step

OVERLAY = Template('{% load trajectory_tags %}{% action_overlay step "overlay" %}')

ODD = "<b>\"odd\"</b> & 'quoted'"
TARGET = {"bounds": [10, 100, 110, 140]}
ACTIONS = {
    "click": ({"type": "click", "x": 60, "y": 120}, TARGET),
    "long_press": ({"type": "long_press", "x": 5, "y": 7}, None),
    "click_text_point": ({"type": "click", "x": "<1>", "y": '"2"'}, None),
    "swipe_no_end": ({"type": "swipe", "x": 1, "y": 2}, None),
    "answer": ({"type": "answer", "text": ODD}, None),
    "swipe": ({"type": "swipe", "x": 10, "y": 200, "x2": 10, "y2": 100}, None),
    "type_on_target": ({"type": "type", "text": ODD}, TARGET),
    "type_long": ({"type": "type", "text": "x" * 80}, None),
    "open_app": ({"type": "open_app", "package": "p", "app_label": ODD}, None),
    "key": ({"type": "key", "keycode": "KEYCODE_MENU"}, None),
    "back": ({"type": "back"}, None),
    "wait": ({"type": "wait", "duration_ms": 500}, None),
    "terminate": ({"type": "terminate", "status": "success"}, None),
}


def overlays_expected() -> dict[str, str]:
    text = (Path(__file__).parent / "overlays_expected.txt").read_text(encoding="utf-8")
    return dict(re.findall(r"^\{# overlay (\w+) #\}\n(.*)$", text, re.M))


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_the_overlay_draws_the_action_and_escapes_what_the_recorder_sent(name):
    fields, target = ACTIONS[name]
    kind, action = fields["type"], {k: v for k, v in fields.items() if k != "type"}
    step = Step(
        index=0,
        action_type=kind,
        action=action,
        target=target,
        screen=Screen(width=1080, height=2400),
    )
    assert OVERLAY.render(Context({"step": step})) == overlays_expected()[name]


# The workspace (drawn by Jinja2) has the overlay as a macro over the same shapes.
JINJA_OVERLAY = engines["jinja2"].from_string(
    '{% from "trajectories/_action_overlay.html" import action_overlay %}'
    '{{ action_overlay(overlay_shapes(step, "overlay")) }}'
)


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_the_workspace_draws_the_same_overlay(name):
    fields, target = ACTIONS[name]
    kind, action = fields["type"], {k: v for k, v in fields.items() if k != "type"}
    step = Step(
        index=0,
        action_type=kind,
        action=action,
        target=target,
        screen=Screen(width=1080, height=2400),
    )
    drawn = JINJA_OVERLAY.render({"step": step})
    # The same markup; Jinja2 writes quotes escaped as &#34; and &#39;.
    expected = overlays_expected()[name].replace("&quot;", "&#34;").replace("&#x27;", "&#39;")
    assert drawn == expected


def test_every_drawn_action_is_checked():
    assert overlays_expected().keys() == ACTIONS.keys()
