"""Submitting labels for review, and the reviewer's comments and decisions.

Each ``do_*`` action commits on return (``transaction.atomic(durable=True)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from trajectories import events
from trajectories.labels.edits import text_field
from trajectories.labels.parts import all_labels
from trajectories.labels.protocol import bump, check_editable, lock
from trajectories.models import Status, Trajectory
from trajectories.services import record_event
from trajectories.validation import InvalidData, check_choice, check_step_index, fail

from ..completeness import problems_of
from ..models import ReviewComment

DECISIONS = ("approve", "reject", "send_back")


def problems_of_trajectory(trajectory: Trajectory) -> list:
    labels = all_labels(trajectory)
    return problems_of(
        trajectory.step_count,
        labels["subgoals"],
        labels["memory_targets"],
        labels["anchors"],
        labels["links"],
    )


def do_submit(trajectory: Trajectory, actor, expected_version: Any) -> None:
    """Send the labels for review once nothing is missing."""
    with transaction.atomic(durable=True):
        locked = lock(trajectory, expected_version)
        check_editable(locked)
        problems = problems_of_trajectory(locked)
        if problems:
            listed = "; ".join(p.message for p in problems[:5])
            more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
            raise InvalidData(f"not ready for review: {listed}{more}")
        bump(trajectory, locked, status=Status.IN_REVIEW)
        # What the annotator has not marked resolved is resolved by submitting again.
        ReviewComment.objects.filter(trajectory=locked, resolved=False).update(
            resolved=True, resolved_by=actor, resolved_at=timezone.now()
        )
        record_event(
            events.TRAJECTORY_SUBMITTED,
            actor=actor,
            trajectory=trajectory,
            object_type="Trajectory",
            object_id=locked.pk,
            before={"status": locked.status},
            after={"status": Status.IN_REVIEW},
        )


def do_comment(trajectory: Trajectory, actor, step: Any, text: Any) -> ReviewComment:
    """A reviewer's comment on a step (or on the whole trajectory when ``step`` is None)."""
    step, text = _check_comment(trajectory, step, text)
    with transaction.atomic(durable=True):
        return _comment(trajectory, actor, step, text)


def _check_comment(trajectory: Trajectory, step: Any, text: Any) -> tuple[int | None, str]:
    if step is not None:
        step = check_step_index(step, trajectory.step_count, "step")
    return step, text_field(text, "text", required=True).strip()


def _comment(trajectory: Trajectory, actor, step: int | None, text: str) -> ReviewComment:
    comment = ReviewComment.objects.create(
        trajectory=trajectory, step_index=step, author=actor, text=text
    )
    record_event(
        events.REVIEW_COMMENTED,
        actor=actor,
        trajectory=trajectory,
        object_type="ReviewComment",
        object_id=comment.pk,
        after={"step": step, "text": text},
    )
    return comment


def access_comment(trajectory: Trajectory, comment_id: Any) -> ReviewComment:
    """One of the trajectory's review comments, by id; another's is unknown here (a 422)."""
    try:
        return ReviewComment.objects.select_related("author", "resolved_by").get(
            trajectory=trajectory, pk=int(comment_id)
        )
    except (ReviewComment.DoesNotExist, TypeError, ValueError):
        raise InvalidData(f"comment: no review comment {comment_id} on this trajectory") from None


def do_resolve_comment(comment: ReviewComment, actor, resolved: bool = True) -> bool:
    """Mark one review comment resolved (or open again); False when it already was.

    The caller has checked that ``actor`` may edit or review the trajectory.
    """
    with transaction.atomic(durable=True):
        locked = ReviewComment.objects.select_for_update().get(pk=comment.pk)
        if locked.resolved == resolved:
            return False
        before = {"resolved": locked.resolved}
        locked.resolved = resolved
        locked.resolved_by = actor if resolved else None
        locked.resolved_at = timezone.now() if resolved else None
        locked.save(update_fields=["resolved", "resolved_by", "resolved_at"])
        record_event(
            events.REVIEW_COMMENT_RESOLVED if resolved else events.REVIEW_COMMENT_REOPENED,
            actor=actor,
            trajectory=locked.trajectory,
            object_type="ReviewComment",
            object_id=locked.pk,
            before=before,
            after={"resolved": resolved, "step": locked.step_index, "text": locked.text},
        )
    comment.resolved, comment.resolved_by, comment.resolved_at = (
        locked.resolved,
        locked.resolved_by,
        locked.resolved_at,
    )
    return True


def do_review(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    decision: Any,
    comments: Iterable[Mapping[str, Any]] = (),
) -> None:
    """Approve, reject, or send back to the annotator, with comments attached to steps.

    Trajectories in review get any decision; an admin may also send back an approved or
    rejected trajectory to reopen it.
    """
    decision = check_choice(decision, DECISIONS, "decision")
    comments = list(comments)
    for i, c in enumerate(comments):
        if not isinstance(c, Mapping):
            raise fail(f"comments[{i}]", "must be an object {step, text}")
        if c.get("step") is not None:
            check_step_index(c["step"], trajectory.step_count, f"comments[{i}].step")
        text_field(c.get("text"), f"comments[{i}].text", required=True)
    if decision in ("reject", "send_back") and not comments:
        if not ReviewComment.objects.filter(trajectory=trajectory, resolved=False).exists():
            raise fail("comments", f"say why: a {decision.replace('_', ' ')} needs a comment")
    new_status = {
        "approve": Status.APPROVED,
        "reject": Status.REJECTED,
        "send_back": Status.ANNOTATING,
    }[decision]
    with transaction.atomic(durable=True):
        locked = lock(trajectory, expected_version)
        reopening = decision == "send_back" and locked.status in (Status.APPROVED, Status.REJECTED)
        if locked.status != Status.IN_REVIEW and not reopening:
            raise InvalidData(
                f"this trajectory is {locked.get_status_display().lower()}, not in review"
            )
        for c in comments:
            _comment(locked, actor, *_check_comment(locked, c.get("step"), c["text"]))
        bump(trajectory, locked, status=new_status)
        record_event(
            events.REVIEW_DECIDED[decision],
            actor=actor,
            trajectory=trajectory,
            object_type="Trajectory",
            object_id=locked.pk,
            before={"status": locked.status},
            after={"status": new_status},
        )
