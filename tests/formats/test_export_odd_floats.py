"""NaN and the infinities in a native export's line: written as ``json`` writes them, wherever
they are in the record (orjson would write ``null``). The databases refuse them in JSON
columns (SQLite's JSON_VALID check, PostgreSQL's jsonb), so the lines are built here."""

from __future__ import annotations

import json
import math

import pytest

from formats.waypoint import _dump


def record() -> dict:
    screen = {
        "screenshot": "screens/a.png",
        "ui_xml": None,
        "width": 540,
        "height": 1200,
        "package": "p",
        "activity": "a",
        "captured_at": None,
        "features": {"v": [1.0, 2.5]},
        "visible_memory": [],
    }
    step = {
        "index": 0,
        "screen": 0,
        "action": {"type": "click", "x": 1.5},
        "target": {"bounds": [0.5, 2.0]},
        "thought": "",
        "summary": "",
        "memory": "",
        "trainable": True,
        "action_sent_at": None,
        "settled_at": None,
    }
    return {
        "schema": "waypoint/1",
        "task": {"memory_items": [{"score": 0.5}]},
        "metadata": {"score": 0.25},
        "screens": [screen, dict(screen)],
        "steps": [step, dict(step)],
        "subgoals": [],
        "anchors": [{"evidence": {"w": 1.0}}],
    }


PLACES = {
    "step action": lambda r, odd: r["steps"][1].update(action={"type": "click", "x": odd}),
    "step target": lambda r, odd: r["steps"][1].update(target=[odd]),
    "step target bare": lambda r, odd: r["steps"][1].update(target=odd),
    "screen features": lambda r, odd: r["screens"][1].update(features={"v": [[odd]]}),
    "screen memory": lambda r, odd: r["screens"][1].update(visible_memory=[{"p": odd}]),
    "metadata": lambda r, odd: r["metadata"].update(score=odd),
    "task": lambda r, odd: r["task"]["memory_items"].append(odd),
    "anchor": lambda r, odd: r["anchors"][0]["evidence"].update(w=odd),
}


@pytest.mark.parametrize("odd", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("where", sorted(PLACES))
def test_an_odd_float_is_written_as_json_writes_it(where, odd):
    r = record()
    PLACES[where](r, odd)
    line = _dump(r)
    assert line == json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()
    assert b"NaN" in line or b"Infinity" in line


def test_finite_floats_and_long_integers_as_json_writes_them():
    r = record()
    r["metadata"]["big"] = 2**70
    assert _dump(r) == json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode()
    assert _dump(record()) == json.dumps(record(), separators=(",", ":")).encode()
