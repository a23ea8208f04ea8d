"""Asking for proposals: one per trajectory, proposer and prompt version; failures kept."""

from __future__ import annotations

import pytest

from annotate.models import Proposal, ProposalStatus
from annotate.services.proposals import do_request_proposal, run_proposal
from trajectories.models import AuditEvent
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db


def test_asking_twice_for_the_same_prompt_does_not_duplicate(blank, alice, bob):
    first, to_run = do_request_proposal(blank, alice)
    again, to_run_again = do_request_proposal(blank, bob)
    assert first.pk == again.pk and to_run and not to_run_again
    assert Proposal.objects.filter(trajectory=blank).count() == 1
    assert (first.proposer, first.prompt_version, first.status) == ("heuristic", "h1", "pending")
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
