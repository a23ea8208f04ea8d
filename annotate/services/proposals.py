"""Asking for proposals and running a proposer; accepting or rejecting what it proposed.

A proposal is one per trajectory, proposer and prompt version: asking again returns the one
there is (and runs a failed one again). Accepting proposed items is an ordinary label edit of
the one edit protocol (versioned, audited as ``proposal.accepted``, undoable); the labels keep
where they came from (a subgoal's ``origin``, evidence ``source``). A proposal never holds
an exact copy of a label the trajectory had when it was made (:func:`without_copies`).

Each ``do_*`` action commits on return (``transaction.atomic(durable=True)``); accepting
commits its label edits (:func:`~trajectories.labels.protocol.apply_edit`) with the decisions.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from trajectories import events
from trajectories.jobs import (
    DETACHED,
    end_detached_job,
    enqueue_job,
    run_job,
    touch_detached_job,
)
from trajectories.labels.edits import check_evidence, next_anchor_key, text_field
from trajectories.labels.parts import (
    all_labels,
    anchor_row,
    memory_target_row,
    snapshot,
    subgoal_row,
)
from trajectories.labels.protocol import apply_edit, last_edit_event_id
from trajectories.models import (
    Anchor,
    AuditEvent,
    Job,
    JobKind,
    MemoryTarget,
    Project,
    Subgoal,
    Trajectory,
)
from trajectories.selectors import check_trajectory_filters, trajectory_list
from trajectories.services import record_event
from trajectories.validation import (
    InvalidData,
    check_anchor_type,
    check_memory_target,
    check_step_index,
    check_success,
)

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
    with transaction.atomic(durable=True):
        return _request_proposal(trajectory, actor, impl)


def _request_proposal(trajectory: Trajectory, actor, impl) -> tuple[Proposal, bool]:
    key = {"trajectory": trajectory, "proposer": impl.name, "prompt_version": impl.prompt_version}
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
    trajectory = proposal.trajectory
    began = time.perf_counter()
    try:
        impl = get_proposer(proposal.proposer)  # the LLM's may be unconfigured here
        episode = episode_of_trajectory(trajectory, images=getattr(impl, "wants_images", False))
        answer = impl.propose(episode)
        error = answer.error
        payload = check_payload(answer.payload, len(episode.actions)) if not error else {}
        payload = without_copies(payload, all_labels(trajectory)) if payload else {}
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


# ---------------------------------------------------------------- jobs


def do_start_proposals(
    project: Project,
    actor,
    filters: dict[str, Any] | None = None,
    proposer: str = DEFAULT_PROPOSER,
) -> Job:
    """Queue a job asking ``proposer`` for proposals on the project's trajectories that match
    ``filters`` (the trajectory list's: ``{"trajectories": [uid, ...]}`` for a selection,
    none for all)."""
    impl = get_proposer(proposer)
    filters = check_trajectory_filters(filters)
    chosen = list(trajectory_list(None, project, filters))
    if not chosen:
        raise InvalidData("trajectories: no trajectory of this project matches the selection")
    ids = [t.pk for t in chosen]
    with transaction.atomic(durable=True):
        for trajectory in chosen:  # pending from now on: the workspace shows they were asked
            if trajectory.step_count:
                _request_proposal(trajectory, actor, impl)
        job = Job.objects.create(
            project=project,
            kind=JobKind.PROPOSE,
            format=proposer,
            created_by=actor,
            params={"filters": filters, "trajectories": ids},
            total=len(ids),
        )
        record_event(
            events.JOB_PROPOSALS_QUEUED,
            actor=actor,
            project=project,
            obj=job,
            after={"proposer": proposer, "trajectories": len(ids), "filters": filters},
        )
        enqueue_job(job)
    return job


PROPOSE_TASK = "annotate.propose_trajectory"  # the name of annotate.tasks.propose_task


def run_proposal_job(job: Job, progress: Callable[[int, int], None]) -> dict[str, Any] | str:
    """Hand each trajectory's proposal to a task of its own (one trajectory per task); the
    last task ends the job. Run again (its worker lost), it hands out only what is left."""
    ids = job.params.get("trajectories", [])
    counts: Counter[str] = Counter()
    to_run = []
    for pk in ids:
        trajectory = Trajectory.objects.filter(pk=pk, project=job.project).first()
        if trajectory is None:
            counts["gone"] += 1
        elif not trajectory.step_count:
            counts["without steps"] += 1
        else:
            proposal, _ = do_request_proposal(trajectory, job.created_by, job.format)
            if proposal.status == ProposalStatus.PENDING and not proposal.payload:
                to_run.append(proposal.pk)
            else:
                counts["already proposed"] += 1
    if not to_run:
        return dict(counts)
    params = {**job.params, "settled": dict(counts), "dispatched": to_run}
    Job.objects.filter(pk=job.pk).update(params=params, done=len(ids) - len(to_run))
    for proposal_id in to_run:
        _send_proposal(proposal_id, job.pk)
    return DETACHED


_HERE: ContextVar[bool] = ContextVar("proposals_here", default=False)


def run_job_here(job_id: int) -> None:
    """Run a proposal job and its proposals in this process (``manage.py propose --now``)."""
    token = _HERE.set(True)
    try:
        run_job(job_id)
    finally:
        _HERE.reset(token)


def _send_proposal(proposal_id: int, job_id: int) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER or _HERE.get():
        run_dispatched_proposal(proposal_id, job_id)
    else:
        current_app.send_task(PROPOSE_TASK, args=(proposal_id, job_id))


def run_dispatched_proposal(proposal_id: int, job_id: int | None = None) -> bool:
    """Claim a pending proposal (a conditional UPDATE) and run it; False when another task
    has it or it is done. The job, if any, counts it and ends after its last proposal."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.WAYPOINT_JOB_STALE_S)
    claimed = (
        Proposal.objects.filter(pk=proposal_id, status=ProposalStatus.PENDING, payload={})
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale))
        .update(claimed_at=now)
    )
    if not claimed:
        return False
    stop = threading.Event()
    if job_id:
        touch_detached_job(job_id)
        threading.Thread(target=_beat, args=(job_id, proposal_id, stop), daemon=True).start()
    try:
        run_proposal(Proposal.objects.select_related("trajectory__task").get(pk=proposal_id))
    except Exception:
        Proposal.objects.filter(pk=proposal_id).update(claimed_at=None)  # for the retry
        raise
    finally:
        stop.set()
    if job_id:
        touch_detached_job(job_id, done=1)
        end_detached_job(job_id, _job_counts(job_id))
    return True


def _beat(job_id: int, proposal_id: int, stop: threading.Event) -> None:
    """While a proposer works (an LLM may take minutes), the job and the claim stay fresh."""
    try:
        while not stop.wait(settings.WAYPOINT_JOB_HEARTBEAT_S):
            touch_detached_job(job_id)
            Proposal.objects.filter(pk=proposal_id).update(claimed_at=timezone.now())
    finally:
        connection.close()  # this thread's own connection


def _job_counts(job_id: int) -> dict[str, Any]:
    params = Job.objects.values_list("params", flat=True).get(pk=job_id)
    counts = Counter(params.get("settled", {}))
    statuses = Proposal.objects.filter(pk__in=params.get("dispatched", [])).values_list(
        "status", flat=True
    )
    for status in statuses:
        counts["failed" if status == ProposalStatus.FAILED else "proposed"] += 1
    return dict(counts)


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
PART_NAMES = {"subgoals": "subgoal", "memory_targets": "memory target", "anchors": "anchor"}


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


# ---------------------------------------------------------------- accepting and rejecting

EDITABLE_FIELDS = {
    "subgoals": ("text", "effect", "behaviour", "success"),
    "memory_targets": ("key", "value"),
    "anchors": ("content", "description"),
}


def check_items(proposal: Proposal, items: Any) -> list[tuple[str, int]]:
    """``"all"`` (every pending item) or part:index names like ``"subgoals:2"``, still pending."""
    pending = pending_items(proposal)
    checked = []
    if items == "all":
        checked = [(part, i) for part in PARTS for i in pending[part]]
        items = []
    elif isinstance(items, str):
        items = [items]
    for item in items if isinstance(items, list | tuple) else [items]:
        part, _, index = str(item).partition(":")
        if part not in PARTS or not index.isdigit():
            raise InvalidData(f"items: {item!r} is not a proposed item (e.g. subgoals:0)")
        if int(index) >= len(proposal.payload.get(part, [])):
            raise InvalidData(f"items: proposal {proposal.pk} has no {part} item {index}")
        if int(index) not in pending[part]:
            raise InvalidData(f"items: {item} was already decided")
        checked.append((part, int(index)))
    if not checked:
        raise InvalidData("items: nothing left to decide in this proposal")
    return checked


def _check_decidable(proposal: Proposal) -> None:
    if proposal.status == ProposalStatus.FAILED:
        raise InvalidData(
            f"proposal {proposal.pk} failed ({proposal.error}): there is nothing to accept"
        )


@dataclass(frozen=True, slots=True)
class Skipped:
    """A proposed item "accept all" left pending, and why (as the refusal would say it)."""

    item: str  # part:index, e.g. "subgoals:1"
    name: str  # as the annotator sees it, e.g. "subgoal 1–5 “Buy”"
    reason: str


@dataclass(frozen=True, slots=True)
class Acceptance:
    """What accepting did: the proposal as it now stands, the items that became labels and
    those that were skipped (still pending)."""

    proposal: Proposal
    accepted: list[str]
    skipped: list[Skipped]


def do_accept(
    proposal: Proposal,
    actor,
    expected_version: Any,
    items: Any = "all",
    edited: dict[str, Any] | None = None,
) -> Acceptance:
    """Make proposed items labels, one label edit per part (``proposal.accepted``, undoable).

    ``edited`` (for a single item) changes its fields as it is accepted: the decision is then
    ``edited``. Named items are accepted all or none: one that cannot be (a subgoal that
    overlaps an accepted one, a copy of a label) is refused, naming it. ``"all"`` accepts
    every pending item that can be and skips the others, which stay pending; it is refused
    only when none can be.
    """
    _check_decidable(proposal)
    trajectory = proposal.trajectory
    every = items == "all"
    chosen = check_items(proposal, items)
    edited = {k: v for k, v in (edited or {}).items() if v is not None}
    if edited and len(chosen) != 1:
        raise InvalidData("edited: only one item at a time can be accepted with changes")
    by_part: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for part, index in chosen:
        item = dict(proposal.payload[part][index])
        if edited:
            allowed = EDITABLE_FIELDS[part]
            for name in edited:
                if name not in allowed:
                    raise InvalidData(f"{name}: is not one of {', '.join(allowed)}")
                text_field(edited[name], name, required=name in ("key", "content"))
            item.update(edited)
        by_part.setdefault(part, []).append((index, item))
    version = expected_version
    decision = "edited" if edited else "accepted"
    accepted_in: dict[str, dict[str, Any]] = {}
    skipped: list[Skipped] = []
    accepted: list[tuple[str, int]] = []
    with transaction.atomic(durable=True):  # the label edits and the decisions, or nothing
        for part in PARTS:
            if part not in by_part:
                continue
            skipped_before = len(skipped)
            apply_edit(
                trajectory,
                actor,
                version,
                events.PROPOSAL_ACCEPTED,
                part,
                lambda locked, part=part: _add(
                    locked, proposal, part, by_part[part], skipped if every else None
                ),
                object_type="Proposal",
            )
            left_out = {s.item for s in skipped[skipped_before:]}
            added = [(part, i) for i, _ in by_part[part] if f"{part}:{i}" not in left_out]
            if not added:  # every item of the part skipped: no edit was made
                continue
            version = trajectory.version
            accepted_in[str(last_edit_event_id(trajectory))] = {
                "part": part,
                "items": {str(i): decision for _, i in added},
            }
            accepted += added
        if not accepted:
            reasons = "; ".join(f"{s.name}: {s.reason}" for s in skipped)
            raise InvalidData(f"items: none of the proposed items can be accepted ({reasons})")
        _decide(proposal, actor, accepted, decision, accepted_in)
    return Acceptance(proposal, [f"{p}:{i}" for p, i in accepted], skipped)


def item_name(part: str, item: dict[str, Any]) -> str:
    """A proposed item as the proposals panel names it."""
    if part == "subgoals":
        return f"subgoal {item['start']}–{item['end']} “{item.get('text', '')}”"
    if part == "memory_targets":
        return f"memory target {item['key']} = {item['value']} (step {item['encode_step']})"
    return f"anchor at step {item['step']} ({item['type']}) “{item['content']}”"


def _same_text(value: Any) -> str:
    return " ".join(str(value or "").split()).casefold()


def copy_signature(part: str, item: dict[str, Any]) -> tuple[Any, ...]:
    """What makes a proposed item an exact copy of a label: a subgoal's steps and intent, a
    memory target's key, value and encode step, an anchor's step, type and content (texts
    compared ignoring case and spacing)."""
    if part == "subgoals":
        return (item["start"], item["end"], _same_text(item.get("text")))
    if part == "memory_targets":
        return (_same_text(item["key"]), _same_text(item["value"]), item["encode_step"])
    return (item["step"], item["type"], _same_text(item["content"]))


def without_copies(payload: dict[str, Any], labels: dict[str, Any]) -> dict[str, Any]:
    """The payload less the items that are exact copies of ``labels``' (a proposal never
    proposes what is already labelled)."""
    kept = {}
    for part, proposed in payload.items():
        there = {copy_signature(part, label) for label in labels.get(part, [])}
        kept[part] = [item for item in proposed if copy_signature(part, item) not in there]
    return kept


def _add(
    locked: Trajectory,
    proposal: Proposal,
    part: str,
    items: list[tuple[int, dict[str, Any]]],
    skipped: list[Skipped] | None,
) -> Proposal:
    """Write the items of ``part`` as labels; with a ``skipped`` list, an item that cannot be
    a label is added to it instead of refusing them all."""
    origin = proposal.origin
    n = locked.step_count
    rows = snapshot(locked, part)
    labels = rows["anchors"] if part == "anchors" else rows
    copies = {copy_signature(part, label) for label in labels}
    keys = [a["key"] for a in labels] if part == "anchors" else []
    for index, item in items:
        try:
            if copy_signature(part, item) in copies:
                raise InvalidData(
                    f"the same {PART_NAMES[part]} is already a label: reject this one instead"
                )
            row = _label_row(locked, part, item, origin, n, labels, keys)
        except InvalidData as exc:
            if skipped is None:
                raise
            skipped.append(Skipped(f"{part}:{index}", item_name(part, item), str(exc)))
            continue
        row.save(force_insert=True)
        copies.add(copy_signature(part, item))
        if part == "subgoals":
            labels.append({"start": row.start, "end": row.end})
        elif part == "anchors":
            keys.append(row.key)
    return proposal


def _label_row(
    locked: Trajectory,
    part: str,
    item: dict[str, Any],
    origin: str,
    n: int,
    labels: list[dict[str, Any]],
    keys: list[str],
) -> Subgoal | MemoryTarget | Anchor:
    """The label a proposed item makes, checked against the trajectory's labels; not saved."""
    if part == "subgoals":
        start = check_step_index(item["start"], n, "start")
        end = check_step_index(item["end"], n, "end")
        for other in sorted(labels, key=lambda g: g["start"]):
            if start <= other["end"] and other["start"] <= end:
                raise InvalidData(
                    f"the proposed subgoal {start}–{end} overlaps the accepted "
                    f"subgoal {other['start']}–{other['end']}: move or delete that one first"
                )
        success = check_success(item.get("success", ""), "success")
        return subgoal_row(locked, {**item, "success": success, "origin": origin})
    evidence = check_evidence({**(item.get("evidence") or {}), "source": origin})
    if part == "memory_targets":
        retrieve = check_memory_target(item["encode_step"], item["retrieve_steps"], n, "")
        return memory_target_row(locked, {**item, "retrieve_steps": retrieve, "evidence": evidence})
    check_step_index(item["step"], n, "step")
    check_anchor_type(item["type"], "type")
    return anchor_row(locked, {**item, "evidence": evidence}, next_anchor_key(keys))


def do_reject(proposal: Proposal, actor, items: Any = "all") -> Proposal:
    """Set proposed items aside; nothing is written to the labels."""
    _check_decidable(proposal)
    chosen = check_items(proposal, items)
    with transaction.atomic(durable=True):
        _decide(proposal, actor, chosen, "rejected")
    return proposal


def _decide(
    proposal: Proposal,
    actor,
    chosen: list[tuple[str, int]],
    decision: str,
    accepted_in: dict[str, dict[str, Any]] | None = None,
) -> None:
    locked = Proposal.objects.select_for_update().get(pk=proposal.pk)
    for part, index in chosen:
        if str(index) in locked.decisions.get(part, {}):
            raise InvalidData(f"items: {part}:{index} was already decided")
        locked.decisions.setdefault(part, {})[str(index)] = decision
    proposal.decisions, proposal.status = locked.decisions, locked.status
    proposal.accepted_in = {**locked.accepted_in, **(accepted_in or {})}
    _touch_decided(proposal)
    proposal.decided_by = actor
    Proposal.objects.filter(pk=proposal.pk).update(
        decisions=proposal.decisions,
        accepted_in=proposal.accepted_in,
        status=proposal.status,
        decided_at=proposal.decided_at,
        decided_by=actor,
    )
    if decision == "rejected":
        record_event(
            events.PROPOSAL_REJECTED,
            actor=actor,
            trajectory=proposal.trajectory,
            obj=proposal,
            after={"items": [f"{p}:{i}" for p, i in chosen], "proposer": proposal.proposer},
        )


def follow_restored_labels(event: AuditEvent, undone: bool, **_: Any) -> None:
    """An undo, redo or revert took back (or put back) the labels of an accepted proposal's
    edit: its items become pending again (or decided again, as they were)."""
    if event.kind == events.LABELS_REVERTED and event.object_type == "AuditEvent":
        # undoing a revert puts the reverted change back, and redoing it takes it back again
        event = AuditEvent.objects.filter(pk=event.object_id).first()
        undone = not undone
    if event is None or event.kind != events.PROPOSAL_ACCEPTED:
        return
    proposal = (
        Proposal.objects.select_for_update()
        .filter(pk=event.object_id, trajectory_id=event.trajectory_id)
        .first()
    )
    accepted = proposal.accepted_in.get(str(event.pk)) if proposal else None
    if accepted is None:
        return
    decided = proposal.decisions.setdefault(accepted["part"], {})
    for index, decision in accepted["items"].items():
        if undone:
            decided.pop(index, None)
        else:
            decided[index] = decision
    if undone:
        proposal.status, proposal.decided_at = ProposalStatus.PENDING, None
    else:
        _touch_decided(proposal)
    proposal.save(update_fields=["decisions", "status", "decided_at"])
