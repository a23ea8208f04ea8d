"""The heuristic proposer on recordings of the virtual device labelled by hand
(tests/annotate/reference_recordings/README.md: how they were made, labelled and scored)."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from annotate.proposers import Episode, HeuristicProposer, ScreenView, check_payload
from annotate.proposers.scoring import Score, boundary_f1
from trajectories.uixml import parse_ui_xml

FOLDER = Path(__file__).resolve().parent / "reference_recordings"
NAMES = sorted(path.stem for path in FOLDER.glob("*.json"))


@cache
def reference(name: str) -> dict[str, Any]:
    return json.loads((FOLDER / f"{name}.json").read_text(encoding="utf-8"))


def xml_of(screen: dict[str, Any]) -> bytes | None:
    return gzip.decompress((FOLDER / screen["ui_xml"]).read_bytes()) if screen["ui_xml"] else None


def episode_of(record: dict[str, Any]) -> Episode:
    """The recording as a proposer sees a stored trajectory (the screen before each step, then
    the final one)."""
    screens = [record["screens"][s["screen"]] for s in record["steps"]]
    screens.append(record["screens"][record["final_screen"]])
    return Episode(
        goal=record["task"]["goal"],
        actions=[dict(s["action"]) for s in record["steps"]],
        screens=[
            ScreenView(s["package"], s["activity"], xml_of(s), s["visible_memory"]) for s in screens
        ],
    )


def proposed(name: str) -> dict[str, Any]:
    return HeuristicProposer().propose(episode_of(reference(name))).payload


def memory_score(found: list[dict[str, Any]], kept: list[dict[str, Any]]) -> Score:
    """Right: a kept target of the same value, encoded at or after the kept encode step and
    before the value is first needed."""
    right = 0
    left = list(kept)
    for m in found:
        match = next(
            (
                k
                for k in left
                if k["value"] == m["value"]
                and k["encode_step"] <= m["encode_step"] < min(k["retrieve_steps"])
            ),
            None,
        )
        if match is not None:
            left.remove(match)
            right += 1
    return Score(right, len(found) - right, len(left))


def test_there_are_at_least_ten_varied_recordings_labelled_by_hand():
    assert len(NAMES) >= 10
    apps = {s["package"] for name in NAMES for s in reference(name)["screens"]}
    assert {
        "com.android.launcher3",
        "com.waypoint.freshcart",
        "com.waypoint.megamart",
        "com.waypoint.notes",
        "com.waypoint.chatter",
        "com.waypoint.shopmate",
        "com.waypoint.answers",
    } <= apps
    size = sum(path.stat().st_size for path in FOLDER.rglob("*") if path.is_file())
    assert size < 2_000_000
    for name in NAMES:
        record = reference(name)
        labels = {"subgoals": record["subgoals"], "memory_targets": record["memory_targets"]}
        check_payload(labels, len(record["steps"]))  # well formed, or it raises
        starts = [g["start"] for g in record["subgoals"]]
        ends = [g["end"] for g in record["subgoals"]]
        assert starts[0] == 0 and ends[-1] == len(record["steps"]) - 1, name
        assert starts[1:] == [end + 1 for end in ends[:-1]], f"{name}: a gap between subgoals"


def test_the_memory_labels_agree_with_the_device():
    """Checked against the variables the device says each screen shows: a labelled value shows
    on its encode screen, no later than the device first reports it (a list's preview of a
    message shows it before the message, which the device marks, is opened), and every
    declared variable that a later step types or answers is labelled."""
    for name in NAMES:
        record = reference(name)
        steps, screens = record["steps"], record["screens"]
        shown_at: dict[str, int] = {}
        for i, step in enumerate(steps):
            for v in screens[step["screen"]]["visible_memory"]:
                shown_at.setdefault(v["value"], i)
        labelled = {m["value"] for m in record["memory_targets"]}
        for m in record["memory_targets"]:
            assert m["encode_step"] <= shown_at.get(m["value"], m["encode_step"]), (name, m)
            tree = parse_ui_xml(xml_of(screens[steps[m["encode_step"]]["screen"]]))
            texts = " ".join(el.text + " " + el.content_desc for el in tree.elements)
            assert m["value"] in texts, (name, m)
        for i, step in enumerate(steps):
            used = step["action"].get("text", "")
            for value, first in shown_at.items():
                if value in used and first < i:
                    assert value in labelled, f"{name}: {value} is used at step {i}"


def test_the_proposer_finds_the_subgoals_and_memory_targets_people_labelled():
    boundaries, memory = Score(0, 0, 0), Score(0, 0, 0)
    for name in NAMES:
        record, payload = reference(name), proposed(name)
        b = boundary_f1(
            [g["start"] for g in payload["subgoals"]], [g["start"] for g in record["subgoals"]]
        )
        m = memory_score(payload["memory_targets"], record["memory_targets"])
        print(
            f"{name}: boundary F1 {b.f1:.2f} (tp {b.tp} fp {b.fp} fn {b.fn}); memory tp {m.tp} "
            f"fp {m.fp} fn {m.fn}; proposed {[g['start'] for g in payload['subgoals']]} "
            f"{[(t['value'], t['encode_step']) for t in payload['memory_targets']]}"
        )
        boundaries += b
        memory += m
    print(
        f"reference recordings: boundary F1 {boundaries.f1:.3f} (P {boundaries.precision:.3f}, "
        f"R {boundaries.recall:.3f}); memory targets P {memory.precision:.3f} "
        f"R {memory.recall:.3f}"
    )
    assert boundaries.f1 >= 0.8
    assert memory.precision >= 0.9


@pytest.mark.parametrize("name", NAMES)
def test_no_subgoal_is_about_the_launcher_and_no_app_name_is_a_memory_target(name):
    record, payload = reference(name), proposed(name)
    apps = {a["label"] for a in record["metadata"]["virtual_device"]["apps"]}
    for g in payload["subgoals"]:
        assert "launcher" not in g["text"].casefold(), g
        assert not g["text"].startswith("Find ") or not any(
            g["text"].endswith(app) for app in apps
        ), g
    for m in payload["memory_targets"]:
        assert m["value"] not in apps, m


def test_an_app_opened_from_the_drawer_is_one_subgoal_named_for_it():
    payload = proposed("shopmate-cheapest-keyboard")
    assert (payload["subgoals"][0]["start"], payload["subgoals"][0]["end"]) == (0, 2)
    assert payload["subgoals"][0]["text"] == "Open ShopMate"
    opened = [g["text"] for g in proposed("cheaper-aerosound-note-to-mia")["subgoals"]]
    assert [t for t in opened if t.startswith("Open ")] == [
        "Open FreshCart",
        "Open MegaMart",
        "Open Notes",
        "Open Chatter",
        "Open Answers",
    ]
