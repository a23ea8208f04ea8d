"""The heuristic proposer on generated trajectories, whose phases the generator knows."""

from __future__ import annotations

from annotate.proposers import HeuristicProposer, episode_of_record
from annotate.proposers.evaluation import score_on_generated
from annotate.proposers.scoring import boundary_f1
from fixtures.generate import generate_record


def test_its_boundaries_match_the_generated_phases():
    score = score_on_generated(HeuristicProposer(), range(30))
    print(
        f"boundary F1 {score.boundaries.f1:.3f} (P {score.boundaries.precision:.3f}, "
        f"R {score.boundaries.recall:.3f}); memory values P {score.memory.precision:.3f} "
        f"R {score.memory.recall:.3f}"
    )
    assert score.boundaries.f1 >= 0.8
    assert score.memory.recall >= 0.9


def test_it_proposes_opening_the_app_a_lookup_and_the_answer():
    record = generate_record(0, steps=20)
    payload = HeuristicProposer().propose(episode_of_record(record)).payload
    texts = [g["text"] for g in payload["subgoals"]]
    assert texts[0] == "Open ShopMate"  # the name the open-app action gives
    assert texts[-1].startswith("Answer “The Harbor Water Bottle is cheapest")
    price = next(m for m in payload["memory_targets"] if m["value"] == "$90.63")
    assert (price["key"], price["encode_step"], price["retrieve_steps"]) == ("price_1", 5, [16])
    assert price["evidence"]["text"] == "$90.63"
    kinds = {(a["type"], a["step"]) for a in payload["anchors"]}
    assert ("state_change", 0) in kinds and ("finish", 19) in kinds
    assert ("context_info", 5) in kinds


def test_a_boundary_within_one_step_counts_once():
    score = boundary_f1([0, 3, 4, 9], [0, 4, 7])
    assert (score.tp, score.fp, score.fn) == (1, 2, 1)


def test_screens_without_or_with_broken_xml_still_give_valid_labels():
    from annotate.proposers import Episode, ScreenView, check_payload

    screens = [
        ScreenView("com.a", ".Main", None),
        ScreenView("com.a", ".Main", b"<hierarchy><node text='unclosed"),
        ScreenView("com.b", "", b"not xml at all"),
        ScreenView("com.b", "", b""),
        ScreenView("", "", None),
    ]
    actions = [
        {"type": "click"},  # no coordinates
        {"type": "open_app"},  # no package
        {"type": "type", "text": "\u202e🙂 1234"},
        {"type": "terminate", "status": "failure"},
    ]
    payload = HeuristicProposer().propose(Episode("goal", actions, screens)).payload
    assert check_payload(payload, 4) == payload
    assert [(g["start"], g["end"]) for g in payload["subgoals"]] == [(0, 0), (1, 2), (3, 3)]
    assert payload["memory_targets"] == []
    assert payload["anchors"][-1] == {
        "step": 3,
        "type": "finish",
        "content": "failure",
        "description": "The last step",
    }
