"""Asking for proposals and running a proposer; accepting or rejecting what it proposed.

A proposal is one per trajectory, proposer and prompt version: asking again returns the one
there is (and runs a failed one again). Accepting proposed items is an ordinary label edit of
the one edit protocol (versioned, audited as ``proposal.accepted``, undoable); the labels keep
where they came from (a subgoal's ``origin``, evidence ``source``).
"""

from __future__ import annotations

import time
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from trajectories import events
from trajectories.models import Trajectory
from trajectories.services import record_event
from trajectories.validation import InvalidData

from ..models import Proposal, ProposalStatus
from ..proposers import DEFAULT_PROPOSER, check_payload, episode_of_trajectory, get_proposer


def do_request_proposal(
    trajectory: Trajectory, actor, proposer: str = DEFAULT_PROPOSER
) -> tuple[Proposal, bool]:
    """The trajectory's proposal by this proposer's current prompt; True when it is to run
    (new, or failed before). Asking twice does not make two."""
    impl = get_proposer(proposer)
    if not trajectory.step_count:
        raise InvalidData("trajectory: it has no steps to propose labels for")
    key = {"trajectory": trajectory, "proposer": impl.name, "prompt_version": impl.prompt_version}
    with transaction.atomic():
        found = Proposal.objects.select_for_update().filter(**key).first()
        if found is not None:
            if found.status != ProposalStatus.FAILED:
                return found, False
            Proposal.objects.filter(pk=found.pk).update(status=ProposalStatus.PENDING, error="")
            found.status, found.error = ProposalStatus.PENDING, ""
            return found, True
        try:
            with transaction.atomic():
                proposal = Proposal.objects.create(
                    **key, model=getattr(impl, "model", ""), requested_by=actor
                )
        except IntegrityError:  # a concurrent request made it first
            return Proposal.objects.get(**key), False
        record_event(events.PROPOSAL_REQUESTED, actor=actor, trajectory=trajectory, obj=proposal)
    return proposal, True


def run_proposal(proposal: Proposal) -> Proposal:
    """Ask the proposer and store its payload; a failure keeps the raw output and the error,
    never labels. A proposal already proposed is left as it is."""
    if proposal.payload or proposal.status != ProposalStatus.PENDING:
        return proposal
    impl = get_proposer(proposal.proposer)
    trajectory = proposal.trajectory
    began = time.perf_counter()
    try:
        episode = episode_of_trajectory(trajectory, images=getattr(impl, "wants_images", False))
        answer = impl.propose(episode)
        error = answer.error
        payload = check_payload(answer.payload, len(episode.actions)) if not error else {}
    except InvalidData as exc:
        answer, error, payload = None, str(exc), {}
    fields: dict[str, Any] = {
        "payload": payload,
        "raw_output": answer.raw_output if answer else "",
        "error": error,
        "duration_ms": round(1000 * (time.perf_counter() - began)),
        "prompt_tokens": answer.prompt_tokens if answer else 0,
        "completion_tokens": answer.completion_tokens if answer else 0,
        "model": (answer.model if answer and answer.model else proposal.model),
    }
    if error:
        fields["status"] = ProposalStatus.FAILED
    Proposal.objects.filter(pk=proposal.pk).update(**fields)
    for name, value in fields.items():
        setattr(proposal, name, value)
    if error:
        record_event(
            events.PROPOSAL_FAILED,
            trajectory=trajectory,
            obj=proposal,
            after={"error": error, "raw_output": proposal.raw_output[:2000]},
        )
    return proposal


def pending_items(proposal: Proposal) -> dict[str, list[int]]:
    """Indices of the proposed items not decided yet, by part."""
    return {
        part: [
            i
            for i in range(len(proposal.payload.get(part, [])))
            if str(i) not in proposal.decisions.get(part, {})
        ]
        for part in PARTS
    }


PARTS = ("subgoals", "memory_targets", "anchors")


def _touch_decided(proposal: Proposal) -> None:
    """Once every item is decided, the proposal's status says how it went."""
    if any(pending_items(proposal).values()) or proposal.status == ProposalStatus.FAILED:
        return
    decided = [d for part in proposal.decisions.values() for d in part.values()]
    if decided and all(d == "rejected" for d in decided):
        proposal.status = ProposalStatus.REJECTED
    elif "edited" in decided:
        proposal.status = ProposalStatus.EDITED
    else:
        proposal.status = ProposalStatus.ACCEPTED
    proposal.decided_at = timezone.now()
