"""The one edit protocol: every change to a trajectory's labels, from any page or API, runs here.

:func:`edit` takes the trajectory, the actor and the version the client last saw, and
1. locks the trajectory row (``select_for_update``) and refuses a stale version
   (:class:`StaleVersion`, naming who changed it and when; the API answers 409);
2. refuses the edit when the trajectory's status does not allow it;
3. runs the change (which validates; :class:`InvalidData` names the field), and returns early
   when nothing changed;
4. bumps the version, records an audit event with the touched part of the labels before and
   after, and pushes it on the trajectory's undo stack (:class:`LabelEdit`).

The trajectory passed in carries the new version afterwards. Permission checks are the
caller's. The edits themselves are in :mod:`trajectories.labels.edits`.

An edit, an undo, a redo and a revert are each a unit of work of their own, committed when they
return (``transaction.atomic(durable=True)``, as Zulip's ``do_*`` actions): called inside another
transaction they refuse to run, so no caller can make a label change that looks done and is
rolled back later. An action that must commit a label edit together with other writes (accepting
a proposal records its decisions; undoing a recorded step removes the step) runs
:func:`apply_edit` inside its own durable transaction instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction
from django.db.models import Count, Exists, OuterRef
from django.dispatch import Signal
from django.utils import timezone

from .. import events
from ..models import AuditEvent, LabelEdit, Status, Trajectory
from ..services import record_event
from ..validation import InvalidData
from .cache import carry_forward
from .parts import Part, restore, snapshot

# Where labels may be edited: the annotation workspace while annotating (or after an
# interruption), the recording console while recording.
EDITABLE = (Status.ANNOTATING, Status.INTERRUPTED)
RECORDING = (Status.RECORDING,)


# Sent inside the edit's transaction when an undo, a redo or a revert takes back
# (``undone=True``) or puts back (``undone=False``) what the audit ``event`` changed, so what
# depends on that change can follow (an accepted proposal's decisions, in ``annotate``).
labels_restored = Signal()  # kwargs: event (AuditEvent), undone (bool)


class StaleVersion(Exception):
    """The client edited an older version than the stored one."""

    def __init__(self, message: str, version: int) -> None:
        super().__init__(message)
        self.version = version


def lock_row(trajectory: Trajectory) -> Trajectory:
    """The trajectory's row, locked for this transaction: for the writes no client version
    guards (a recorded step, a change of status), which still must not interleave."""
    return Trajectory.objects.select_for_update().get(pk=trajectory.pk)


def lock(trajectory: Trajectory, expected_version: Any) -> Trajectory:
    """The trajectory's row, locked for this transaction, if it is still at the expected version."""
    if isinstance(expected_version, bool) or not isinstance(expected_version, int):
        raise InvalidData(
            f"version: must be the integer version you edited, got {expected_version!r}"
        )
    locked = lock_row(trajectory)
    if locked.version != expected_version:
        last = (
            AuditEvent.objects.filter(trajectory=locked).select_related("actor").order_by("-id")
        ).first()
        who = last.actor.get_username() if last and last.actor else "someone"
        when = f" at {timezone.localtime(last.at):%H:%M}" if last else ""
        raise StaleVersion(
            f"{who} changed this trajectory{when} (version {locked.version}); "
            f"you edited version {expected_version}: reload to see it",
            locked.version,
        )
    return locked


def bump(trajectory: Trajectory, locked: Trajectory, **fields: Any) -> None:
    """Count one more version (and set ``fields``) on the locked row and the caller's copy."""
    locked.version += 1
    Trajectory.objects.filter(pk=locked.pk).update_in_project(
        locked.project_id, version=locked.version, updated_at=timezone.now(), **fields
    )
    trajectory.version = locked.version
    for name, value in fields.items():
        setattr(trajectory, name, value)


def check_editable(locked: Trajectory, statuses: Iterable[str] = EDITABLE) -> None:
    if locked.status not in statuses:
        where = (
            "while it is being recorded"
            if tuple(statuses) == RECORDING
            else "while it is being annotated"
        )
        raise InvalidData(
            f"this trajectory is {locked.get_status_display().lower()}: its labels can be "
            f"edited {where}"
        )


def edit(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    kind: str,
    part: Part,
    change: Callable[[Trajectory], Any],
    *,
    object_type: str = "",
    statuses: Iterable[str] = EDITABLE,
) -> Any:
    """Run ``change`` under the edit protocol, committed on return; return what it returns."""
    with transaction.atomic(durable=True):
        return apply_edit(
            trajectory,
            actor,
            expected_version,
            kind,
            part,
            change,
            object_type=object_type,
            statuses=statuses,
        )


def apply_edit(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    kind: str,
    part: Part,
    change: Callable[[Trajectory], Any],
    *,
    object_type: str = "",
    statuses: Iterable[str] = EDITABLE,
) -> Any:
    """:func:`edit` inside the caller's transaction, which commits it with the caller's other
    writes (or rolls it back with them). Outside a transaction it refuses to run (the row lock
    needs one)."""
    if kind not in events.ALL:  # checked before the change runs, not when it is recorded
        raise ValueError(f"{kind!r} is not an audit event kind of trajectories.events")
    locked = lock(trajectory, expected_version)
    check_editable(locked, statuses)
    before = snapshot(locked, part)
    result = change(locked)
    after = snapshot(locked, part)
    if after == before:
        return result
    version = locked.version
    bump(trajectory, locked)
    # What this process keeps of the labels at the version edited holds at the next one but
    # for this part, once committed.
    transaction.on_commit(lambda: carry_forward(locked, version, part, after))
    object_id = getattr(result, "pk", None) or (
        part.removeprefix("step:") if part.startswith("step:") else ""
    )
    event = record_event(
        kind,
        actor=actor,
        trajectory=trajectory,
        object_type=object_type,
        object_id=object_id,
        before={part: before},
        after={part: after},
    )
    LabelEdit.objects.filter(trajectory=locked, undone=True).delete()
    LabelEdit.objects.create(trajectory=locked, event=event)
    return result


def update_metadata(
    trajectory: Trajectory, change: Callable[[dict[str, Any]], Any], **fields: Any
) -> Any:
    """Read, change and write ``Trajectory.metadata`` under the row lock; return what
    ``change`` returns. ``change`` edits the stored metadata in place, so a concurrent writer's
    keys are never overwritten with an older copy. ``fields`` are set in the same update.

    Runs inside the caller's transaction when there is one.
    """
    with transaction.atomic():
        metadata = (
            Trajectory.objects.select_for_update()
            .filter(pk=trajectory.pk)
            .values_list("metadata", flat=True)
            .get()
        )
        metadata = dict(metadata or {})
        result = change(metadata)
        Trajectory.objects.filter(pk=trajectory.pk).update(metadata=metadata, **fields)
        trajectory.metadata = metadata
        for name, value in fields.items():
            setattr(trajectory, name, value)
    return result


# ---------------------------------------------------------------- undo and redo


def _undo_or_redo(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    redo: bool,
    statuses: Iterable[str] = EDITABLE,
) -> bool:
    """Restore one side of the last (undone) edit, as a new audited, versioned edit."""
    with transaction.atomic(durable=True):
        locked = lock(trajectory, expected_version)
        check_editable(locked, statuses)
        entries = LabelEdit.objects.filter(trajectory=locked, undone=redo).select_related("event")
        entry = entries.order_by("id" if redo else "-id").first()
        if entry is None:
            return False
        side = entry.event.after if redo else entry.event.before
        ((part, value),) = side.items()
        current = snapshot(locked, part)
        restore(locked, part, value)
        entry.undone = not redo
        entry.save(update_fields=["undone"])
        bump(trajectory, locked)
        labels_restored.send(sender=Trajectory, event=entry.event, undone=not redo)
        record_event(
            events.LABELS_REDONE if redo else events.LABELS_UNDONE,
            actor=actor,
            trajectory=trajectory,
            object_type="AuditEvent",
            object_id=entry.event_id,
            before={part: current},
            after={part: value},
        )
    return True


def do_undo(
    trajectory: Trajectory, actor, expected_version: Any, *, statuses: Iterable[str] = EDITABLE
) -> bool:
    """Undo the trajectory's last label edit (whoever made it); False when there is none.

    ``statuses``: the recording console undoes label edits while recording."""
    return _undo_or_redo(trajectory, actor, expected_version, redo=False, statuses=statuses)


def do_redo(trajectory: Trajectory, actor, expected_version: Any) -> bool:
    return _undo_or_redo(trajectory, actor, expected_version, redo=True)


PART_NAMES = {
    "subgoals": "subgoals",
    "memory_targets": "memory targets",
    "anchors": "anchors and links",
    "notes": "notes",
}


def label_change_part(event: AuditEvent) -> Part | None:
    """The part of the labels an audit event changed, or None when it is no label change."""
    before, after = event.before or {}, event.after or {}
    if len(before) != 1 or before.keys() != after.keys():
        return None
    (part,) = before
    return part if part in PART_NAMES or part.startswith("step:") else None


def part_name(part: Part) -> str:
    return PART_NAMES.get(part) or f"step {part.removeprefix('step:')}"


def do_revert(trajectory: Trajectory, actor, expected_version: Any, event_id: Any) -> AuditEvent:
    """Put back what one earlier label change replaced, as a new (undoable) edit, when nothing
    since has changed the same part of the labels."""
    try:
        pk = int(event_id)
    except (TypeError, ValueError):
        raise InvalidData(f"event: must be a change's number, got {event_id!r}") from None
    event = AuditEvent.objects.filter(trajectory=trajectory, pk=pk).first()
    part = label_change_part(event) if event else None
    if part is None:
        raise InvalidData(f"event: {pk} is not a label change of this trajectory")

    def change(locked: Trajectory) -> AuditEvent:
        if snapshot(locked, part) != event.after[part]:
            raise InvalidData(
                f"revert: the {part_name(part)} changed again since; "
                "revert the later changes first, or edit them by hand"
            )
        restore(locked, part, event.before[part])
        labels_restored.send(sender=Trajectory, event=event, undone=True)
        return event

    return edit(
        trajectory,
        actor,
        expected_version,
        events.LABELS_REVERTED,
        part,
        change,
        object_type="AuditEvent",
    )


def next_undo_part(trajectory: Trajectory) -> Part | None:
    """The part of the labels an undo would change now (``step:3``, ``memory_targets``...)."""
    entry = (
        LabelEdit.objects.filter(trajectory=trajectory, undone=False)
        .select_related("event")
        .order_by("-id")
        .first()
    )
    return label_change_part(entry.event) if entry is not None else None


def last_edit_event_id(trajectory: Trajectory) -> int | None:
    """The audit event of the trajectory's latest label edit (the top of its undo stack)."""
    entry = LabelEdit.objects.filter(trajectory=trajectory, undone=False).order_by("-id").first()
    return entry.event_id if entry is not None else None


def forget_undo(trajectory: Trajectory) -> None:
    """Empty the undo and redo stacks: after a change of the steps themselves (a recorded step
    undone), an older label edit could put labels back on a step that is not the same any more."""
    LabelEdit.objects.filter(trajectory=trajectory).delete()


def undo_state_subqueries(trajectory: OuterRef) -> dict[str, Exists]:
    """``can_undo`` and ``can_redo`` as subqueries, for a query that loads trajectories with
    them (``trajectory`` is the outer reference to the trajectory's id)."""
    edits = LabelEdit.objects.filter(trajectory=trajectory)
    return {
        "can_undo": Exists(edits.filter(undone=False)),
        "can_redo": Exists(edits.filter(undone=True)),
    }


def undo_state(trajectory: Trajectory) -> dict[str, bool]:
    """Whether the trajectory has a label edit to undo, and one to redo (as loaded with the
    trajectory by ``annotate.permissions.access_workspace_page``, else one query)."""
    known = trajectory.__dict__.get("_undo_state")
    if known is not None:
        return dict(known)
    counts = dict(
        LabelEdit.objects.filter(trajectory=trajectory)
        .values_list("undone")
        .annotate(n=Count("id"))
        .values_list("undone", "n")
    )
    return {"can_undo": bool(counts.get(False)), "can_redo": bool(counts.get(True))}
