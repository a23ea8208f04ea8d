"""Asking for proposals: one per trajectory, proposer and prompt version; failures kept."""

from __future__ import annotations

import importlib
import json

import pytest
from django.apps import apps as django_apps

from annotate.models import Proposal, ProposalStatus
from annotate.services.proposals import (
    do_accept,
    do_reject,
    do_request_proposal,
    pending_items,
    run_proposal,
)
from formats.catalogue import export_trajectories
from trajectories.labels import edits
from trajectories.labels.parts import all_labels
from trajectories.labels.protocol import StaleVersion, do_redo, do_revert, do_undo
from trajectories.models import AuditEvent, Trajectory
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db


def test_asking_twice_for_the_same_prompt_does_not_duplicate(blank, alice, bob):
    first, to_run = do_request_proposal(blank, alice)
    again, to_run_again = do_request_proposal(blank, bob)
    assert first.pk == again.pk and to_run and not to_run_again
    assert Proposal.objects.filter(trajectory=blank).count() == 1
    assert (first.proposer, first.prompt_version, first.status) == ("heuristic", "h2", "pending")
    kinds = AuditEvent.objects.filter(trajectory=blank).values_list("kind", flat=True)
    assert list(kinds).count("proposal.requested") == 1


def test_it_refuses_an_unknown_proposer(blank, alice):
    with pytest.raises(InvalidData, match=r"proposer: unknown proposer 'oracle' \(known: "):
        do_request_proposal(blank, alice, "oracle")


def test_the_heuristic_proposal_is_stored_with_its_timing(blank, alice):
    proposal, _ = do_request_proposal(blank, alice)
    run_proposal(proposal)
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING and proposal.error == ""
    subgoals = proposal.payload["subgoals"]
    assert subgoals[0]["start"] == 0 and subgoals[-1]["end"] == blank.step_count - 1
    assert proposal.payload["anchors"][-1]["type"] == "finish"
    assert proposal.duration_ms >= 0


def test_a_failed_proposal_keeps_its_error_and_runs_again_when_asked(blank, alice, monkeypatch):
    from annotate.proposers import Proposed
    from annotate.proposers.heuristic import HeuristicProposer

    monkeypatch.setattr(
        HeuristicProposer,
        "propose",
        lambda self, ep: Proposed(payload={"subgoals": [{"start": 3, "end": 99}]}),
    )
    proposal, _ = do_request_proposal(blank, alice)
    run_proposal(proposal)
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.FAILED and proposal.payload == {}
    assert proposal.error == "subgoals[0]: steps 3–99 are not inside 0–5"
    again, to_run = do_request_proposal(blank, alice)
    assert again.pk == proposal.pk and to_run and again.status == ProposalStatus.PENDING


PAYLOAD = {
    "subgoals": [
        {"start": 0, "end": 2, "text": "Open the shop", "success": "yes"},
        {"start": 3, "end": 5, "text": "Buy", "effect": "", "behaviour": "click", "success": ""},
    ],
    "memory_targets": [
        {
            "key": "price",
            "value": "$4.20",
            "encode_step": 1,
            "retrieve_steps": [4],
            "evidence": {"bounds": [10, 100, 110, 140], "text": "$4.20"},
        }
    ],
    "anchors": [
        {"step": 1, "type": "context_info", "content": "price: $4.20"},
        {"step": 5, "type": "finish", "content": "Finished"},
    ],
}


@pytest.fixture
def proposal(blank):
    return Proposal.objects.create(
        trajectory=blank, proposer="heuristic", prompt_version="h1", payload=PAYLOAD
    )


def test_accepting_all_makes_labels_that_say_where_they_came_from(proposal, blank, bob):
    before = blank.version
    do_accept(proposal, bob, blank.version)
    labels = all_labels(blank)
    origin = "proposal:heuristic:h1"
    assert [(g["start"], g["end"], g["text"], g["origin"]) for g in labels["subgoals"]] == [
        (0, 2, "Open the shop", origin),
        (3, 5, "Buy", origin),
    ]
    (price,) = labels["memory_targets"]
    assert (price["key"], price["encode_step"], price["retrieve_steps"]) == ("price", 1, [4])
    assert price["evidence"]["source"] == origin
    assert [(a["key"], a["type"]) for a in labels["anchors"]] == [
        ("a1", "context_info"),
        ("a2", "finish"),
    ]
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ACCEPTED and proposal.decided_by == bob
    accepted = AuditEvent.objects.filter(trajectory=blank, kind="proposal.accepted")
    assert [(e.object_type, e.object_id) for e in accepted] == [("Proposal", str(proposal.pk))] * 3
    blank.refresh_from_db()
    assert blank.version == before + 3  # one edit per part


def test_an_accepted_proposal_is_undone_like_any_edit(proposal, blank, bob):
    do_accept(proposal, bob, blank.version, ["subgoals:0"])
    assert len(all_labels(blank)["subgoals"]) == 1
    assert do_undo(blank, bob, blank.version)
    assert all_labels(blank)["subgoals"] == []


def decisions(proposal):
    proposal.refresh_from_db()
    return proposal.status, proposal.decisions


def test_undoing_an_acceptance_puts_its_items_back_up_for_decision(proposal, blank, bob):
    do_reject(proposal, bob, ["anchors:0", "anchors:1", "memory_targets:0"])
    do_accept(proposal, bob, blank.version, "subgoals:1", {"text": "Pay"})
    do_accept(proposal, bob, blank.version, "subgoals:0")
    assert decisions(proposal)[0] == ProposalStatus.EDITED
    assert do_undo(blank, bob, blank.version)  # the acceptance of subgoal 0 only
    status, decided = decisions(proposal)
    assert status == ProposalStatus.PENDING and proposal.decided_at is None
    assert decided["subgoals"] == {"1": "edited"}
    assert pending_items(proposal)["subgoals"] == [0]
    assert do_redo(blank, bob, blank.version)
    assert decisions(proposal) == (
        ProposalStatus.EDITED,
        {
            "anchors": {"0": "rejected", "1": "rejected"},
            "memory_targets": {"0": "rejected"},
            "subgoals": {"1": "edited", "0": "accepted"},
        },
    )
    # Undone again, the item can be decided anew, and a second undo takes back the edited one.
    assert do_undo(blank, bob, blank.version) and do_undo(blank, bob, blank.version)
    assert decisions(proposal)[0] == ProposalStatus.PENDING
    assert pending_items(proposal)["subgoals"] == [0, 1] and all_labels(blank)["subgoals"] == []
    do_reject(proposal, bob, "subgoals:0")
    assert decisions(proposal)[1]["subgoals"] == {"0": "rejected"}


def test_reverting_an_acceptance_reopens_its_items_and_undoing_the_revert_closes_them(
    proposal, blank, bob
):
    do_accept(proposal, bob, blank.version, "anchors:1")
    accepted = AuditEvent.objects.get(trajectory=blank, kind="proposal.accepted")
    do_accept(proposal, bob, blank.version, "subgoals:0")
    do_revert(blank, bob, blank.version, accepted.pk)
    assert [a["type"] for a in all_labels(blank)["anchors"]] == []
    assert decisions(proposal)[1] == {"subgoals": {"0": "accepted"}, "anchors": {}}
    assert do_undo(blank, bob, blank.version)  # the revert
    assert decisions(proposal)[1]["anchors"] == {"1": "accepted"}
    assert [a["type"] for a in all_labels(blank)["anchors"]] == ["finish"]


def test_accept_and_edit_changes_the_item_and_says_so(proposal, blank, bob):
    do_accept(proposal, bob, blank.version, "subgoals:1", {"text": "Pay for the order"})
    (g,) = all_labels(blank)["subgoals"]
    assert (g["start"], g["text"]) == (3, "Pay for the order")
    do_reject(proposal, bob, "all")
    proposal.refresh_from_db()
    assert proposal.decisions["subgoals"] == {"1": "edited", "0": "rejected"}
    assert proposal.status == ProposalStatus.EDITED
    with pytest.raises(InvalidData, match="items: nothing left to decide in this proposal"):
        do_accept(proposal, bob, blank.version)


def test_it_refuses_an_overlap_a_decided_item_and_a_bad_field(proposal, blank, bob):
    edits.do_split_subgoal(blank, bob, blank.version, 2)  # subgoals 0–1 and 2–5
    with pytest.raises(InvalidData) as overlap:
        do_accept(proposal, bob, blank.version, "subgoals:0")
    assert str(overlap.value) == (
        "the proposed subgoal 0–2 overlaps the accepted subgoal 0–1: move or delete that one first"
    )
    with pytest.raises(InvalidData, match="effect: is not one of key, value"):
        do_accept(proposal, bob, blank.version, "memory_targets:0", {"effect": "x"})
    with pytest.raises(InvalidData, match=r"items: 'steps:1' is not a proposed item"):
        do_reject(proposal, bob, ["steps:1"])
    do_reject(proposal, bob, ["anchors:1"])
    with pytest.raises(InvalidData, match="items: anchors:1 was already decided"):
        do_reject(proposal, bob, ["anchors:1"])
    assert AuditEvent.objects.filter(kind="proposal.rejected").count() == 1


def test_a_stale_version_is_refused_and_nothing_is_decided(proposal, blank, bob):
    with pytest.raises(StaleVersion):
        do_accept(proposal, bob, blank.version - 1 if blank.version else 99)
    proposal.refresh_from_db()
    assert proposal.decisions == {} and proposal.status == ProposalStatus.PENDING


def test_accepted_labels_are_exported_naming_their_proposal_without_a_row_id(
    proposal, blank, bob, tmp_path
):
    do_accept(proposal, bob, blank.version)
    export_trajectories(Trajectory.objects.filter(pk=blank.pk), tmp_path / "out")
    (record,) = [json.loads(line) for line in (tmp_path / "out" / "trajectories.jsonl").open()]
    origin = "proposal:heuristic:h1"
    assert {g["origin"] for g in record["subgoals"]} == {origin}
    sources = [x["evidence"]["source"] for x in record["memory_targets"] + record["anchors"]]
    assert sources == [origin] * 3
    assert f"proposal:{proposal.pk}:" not in json.dumps(record)


def test_labels_accepted_before_keep_their_proposal_named_without_its_row_id(proposal, blank, bob):
    migration = importlib.import_module("annotate.migrations.0007_audit8_origin_without_row_ids")
    do_accept(proposal, bob, blank.version)
    old = f"proposal:{proposal.pk}:heuristic"  # as labels were stored before
    blank.subgoals.update(origin=old)
    target = blank.memory_targets.get()
    target.evidence["source"] = old
    target.save()
    migration.forwards(django_apps, None)
    labels = all_labels(blank)
    assert {g["origin"] for g in labels["subgoals"]} == {"proposal:heuristic:h1"}
    assert labels["memory_targets"][0]["evidence"]["source"] == "proposal:heuristic:h1"
    migration.backwards(django_apps, None)
    assert set(blank.subgoals.values_list("origin", flat=True)) == {old}


def test_accept_all_accepts_what_it_can_and_names_what_it_skipped(proposal, blank, bob):
    edits.do_split_subgoal(blank, bob, blank.version, 2)  # subgoals 0–1 and 2–5 are labels
    done = do_accept(proposal, bob, blank.version)
    assert done.accepted == ["memory_targets:0", "anchors:0", "anchors:1"]
    assert [(s.item, s.name, s.reason) for s in done.skipped] == [
        (
            "subgoals:0",
            "subgoal 0–2 “Open the shop”",
            "the proposed subgoal 0–2 overlaps the accepted subgoal 0–1: "
            "move or delete that one first",
        ),
        (
            "subgoals:1",
            "subgoal 3–5 “Buy”",
            "the proposed subgoal 3–5 overlaps the accepted subgoal 2–5: "
            "move or delete that one first",
        ),
    ]
    labels = all_labels(blank)
    assert [(a["step"], a["type"]) for a in labels["anchors"]] == [
        (1, "context_info"),
        (5, "finish"),
    ]
    assert [(g["start"], g["end"]) for g in labels["subgoals"]] == [(0, 1), (2, 5)]  # untouched
    status, decided = decisions(proposal)
    assert status == ProposalStatus.PENDING  # the skipped subgoals are still to decide
    assert pending_items(proposal)["subgoals"] == [0, 1]
    assert decided == {
        "memory_targets": {"0": "accepted"},
        "anchors": {"0": "accepted", "1": "accepted"},
    }
    # one label edit per part that changed: undo takes back the anchors and reopens them
    assert do_undo(blank, bob, blank.version)
    assert decisions(proposal)[1]["anchors"] == {}
    assert all_labels(blank)["anchors"] == [] and pending_items(proposal)["anchors"] == [0, 1]


def test_accept_all_is_refused_when_nothing_can_be_accepted(proposal, blank, bob):
    do_reject(proposal, bob, ["memory_targets:0", "anchors:0", "anchors:1"])
    edits.do_split_subgoal(blank, bob, blank.version, 2)
    version = blank.version
    with pytest.raises(InvalidData) as refused:
        do_accept(proposal, bob, version)
    assert str(refused.value) == (
        "items: none of the proposed items can be accepted (subgoal 0–2 “Open the shop”: the "
        "proposed subgoal 0–2 overlaps the accepted subgoal 0–1: move or delete that one first; "
        "subgoal 3–5 “Buy”: the proposed subgoal 3–5 overlaps the accepted subgoal 2–5: move "
        "or delete that one first)"
    )
    blank.refresh_from_db()
    assert blank.version == version and pending_items(proposal)["subgoals"] == [0, 1]


def test_a_copy_of_a_label_is_skipped_by_accept_all_and_refused_when_named(proposal, blank, bob):
    # made a label after the proposal was: same step, type and content (case and spaces aside)
    edits.do_add_anchor(blank, bob, blank.version, step=5, type="finish", content=" finished")
    with pytest.raises(InvalidData, match="the same anchor is already a label: reject this one"):
        do_accept(proposal, bob, blank.version, ["anchors:1"])
    done = do_accept(proposal, bob, blank.version)
    assert [(s.item, s.reason) for s in done.skipped] == [
        ("anchors:1", "the same anchor is already a label: reject this one instead")
    ]
    assert [a["content"] for a in all_labels(blank)["anchors"]] == ["price: $4.20", " finished"]


def test_a_proposal_never_holds_exact_copies_of_the_labels(labelled, alice, monkeypatch):
    from annotate.proposers import Proposed
    from annotate.proposers.heuristic import HeuristicProposer

    labels = all_labels(labelled)
    (first, second) = labels["subgoals"]
    target = labels["memory_targets"][0]
    anchor = labels["anchors"][0]
    copies = {
        "subgoals": [
            {"start": first["start"], "end": first["end"], "text": first["text"].upper()},
            {"start": second["start"], "end": second["end"], "text": "Something else"},
        ],
        "memory_targets": [
            {k: target[k] for k in ("key", "value", "encode_step", "retrieve_steps")},
            {**{k: target[k] for k in ("key", "encode_step", "retrieve_steps")}, "value": "other"},
        ],
        "anchors": [
            {"step": anchor["step"], "type": anchor["type"], "content": f"  {anchor['content']} "},
            {"step": anchor["step"], "type": anchor["type"], "content": "new"},
        ],
    }
    monkeypatch.setattr(HeuristicProposer, "propose", lambda self, ep: Proposed(payload=copies))
    proposal, _ = do_request_proposal(labelled, alice)
    run_proposal(proposal)
    proposal.refresh_from_db()
    assert proposal.payload == {
        "subgoals": [copies["subgoals"][1]],
        "memory_targets": [copies["memory_targets"][1]],
        "anchors": [copies["anchors"][1]],
    }
