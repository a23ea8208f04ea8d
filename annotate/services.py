"""Every change to a trajectory's labels and workflow: one ``do_*`` function per edit.

Each label edit takes the trajectory, the actor and the version the client last saw, and
1. locks the trajectory row (``select_for_update``) and refuses a stale version
   (:class:`StaleVersion`, naming who changed it and when);
2. validates with ``trajectories.validation`` (:class:`InvalidData` names the field);
3. writes, and returns early when nothing changed;
4. bumps the version, records an audit event with the touched part of the labels before and
   after, and pushes it on the trajectory's undo stack.

The trajectory passed in carries the new version afterwards. Permission checks are the
caller's (``annotate.permissions``); status rules are here.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from trajectories.models import (
    Anchor,
    AnchorLink,
    AuditEvent,
    MemoryTarget,
    Project,
    Role,
    Screen,
    Status,
    Step,
    Subgoal,
    Trajectory,
)
from trajectories.services import record_event
from trajectories.validation import (
    InvalidData,
    check_anchor_link,
    check_anchor_type,
    check_bounds,
    check_choice,
    check_memory_target,
    check_relation,
    check_step_index,
    check_subgoals,
    check_success,
    fail,
)

from .completeness import problems_of
from .labels import STEP_FIELDS, SUBGOAL_FIELDS, Part, all_labels, restore, snapshot
from .models import Assignment, LabelEdit, ReviewComment

EDITABLE = (Status.ANNOTATING, Status.INTERRUPTED)
EVIDENCE_FIELDS = ("bounds", "resource_id", "class", "text", "content_desc", "path")
DECISIONS = ("approve", "reject", "send_back")


class StaleVersion(Exception):
    """The client edited an older version than the stored one."""

    def __init__(self, message: str, version: int) -> None:
        super().__init__(message)
        self.version = version


# ---------------------------------------------------------------- the edit protocol


def _lock(trajectory: Trajectory, expected_version: Any) -> Trajectory:
    if isinstance(expected_version, bool) or not isinstance(expected_version, int):
        raise InvalidData(
            f"version: must be the integer version you edited, got {expected_version!r}"
        )
    locked = Trajectory.objects.select_for_update().get(pk=trajectory.pk)
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


def _bump(trajectory: Trajectory, locked: Trajectory, **fields: Any) -> None:
    locked.version += 1
    Trajectory.objects.filter(pk=locked.pk).update(
        version=locked.version, updated_at=timezone.now(), **fields
    )
    trajectory.version = locked.version
    for name, value in fields.items():
        setattr(trajectory, name, value)


def _check_editable(locked: Trajectory) -> None:
    if locked.status not in EDITABLE:
        raise InvalidData(
            f"this trajectory is {locked.get_status_display().lower()}: its labels can be "
            "edited while it is being annotated"
        )


def _edit(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    kind: str,
    part: Part,
    change: Callable[[Trajectory], Any],
    *,
    object_type: str = "",
) -> Any:
    """Run ``change`` under the edit protocol; return what it returns."""
    with transaction.atomic():
        locked = _lock(trajectory, expected_version)
        _check_editable(locked)
        before = snapshot(locked, part)
        result = change(locked)
        after = snapshot(locked, part)
        if after == before:
            return result
        _bump(trajectory, locked)
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


def _text(value: Any, where: str, *, required: bool = False) -> str:
    if not isinstance(value, str):
        raise fail(where, f"must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise fail(where, "must not be empty")
    return value


def _fields(given: Mapping[str, Any], allowed: Iterable[str], where: str = "") -> dict[str, Any]:
    allowed = tuple(allowed)
    for name in given:
        if name not in allowed:
            raise fail(
                name if not where else f"{where}.{name}", f"is not one of {', '.join(allowed)}"
            )
    return dict(given)


def check_evidence(value: Any, where: str = "evidence") -> dict[str, Any]:
    """Evidence on a screen: an element's attributes and/or a box ``bounds``."""
    if value in (None, ""):
        return {}
    if not isinstance(value, Mapping):
        raise fail(where, f"must be an object, got {type(value).__name__}")
    evidence = _fields(value, EVIDENCE_FIELDS, where)
    if "bounds" in evidence:
        evidence["bounds"] = check_bounds(evidence["bounds"], f"{where}.bounds")
    for name in EVIDENCE_FIELDS[1:]:
        if name in evidence:
            _text(evidence[name], f"{where}.{name}")
    return evidence


def _subgoal(locked: Trajectory, subgoal_id: Any) -> Subgoal:
    try:
        return Subgoal.objects.get(trajectory=locked, pk=int(subgoal_id))
    except (Subgoal.DoesNotExist, ValueError, TypeError):
        raise InvalidData(f"subgoal {subgoal_id!r} is not a subgoal of this trajectory") from None


def _ordered_subgoals(locked: Trajectory) -> list[Subgoal]:
    return list(Subgoal.objects.filter(trajectory=locked).order_by("start", "id"))


# ---------------------------------------------------------------- subgoals


def do_split_subgoal(trajectory: Trajectory, actor, expected_version: Any, step: Any) -> Subgoal:
    """Start a subgoal at ``step``: the subgoal around it is cut in two; in steps no subgoal
    covers, the uncovered run around ``step`` becomes subgoals on either side of it."""

    def change(locked: Trajectory) -> Subgoal:
        n = locked.step_count
        at = check_step_index(step, n, "step")
        subgoals = _ordered_subgoals(locked)
        around = next((g for g in subgoals if g.start <= at <= g.end), None)
        if around is not None:
            if around.start == at:
                raise fail("step", f"step {at} already starts subgoal {around.start}–{around.end}")
            new = Subgoal.objects.create(trajectory=locked, start=at, end=around.end)
            around.end = at - 1
            around.save(update_fields=["end"])
            return new
        first = max((g.end + 1 for g in subgoals if g.end < at), default=0)
        last = min((g.start - 1 for g in subgoals if g.start > at), default=n - 1)
        if at > first:
            Subgoal.objects.create(trajectory=locked, start=first, end=at - 1)
        return Subgoal.objects.create(trajectory=locked, start=at, end=last)

    return _edit(
        trajectory,
        actor,
        expected_version,
        "subgoal.split",
        "subgoals",
        change,
        object_type="Subgoal",
    )


def do_merge_subgoals(
    trajectory: Trajectory, actor, expected_version: Any, subgoal_id: Any
) -> Subgoal:
    """Merge a subgoal with the next one (and any uncovered steps between them).

    Fields keep the first subgoal's value, or the second's where the first is empty; success
    stays only when both agree.
    """

    def change(locked: Trajectory) -> Subgoal:
        subgoals = _ordered_subgoals(locked)
        first = _subgoal(locked, subgoal_id)
        position = next(i for i, g in enumerate(subgoals) if g.pk == first.pk)
        if position + 1 >= len(subgoals):
            raise fail("subgoal", f"subgoal {first.start}–{first.end} is the last: nothing follows")
        second = subgoals[position + 1]
        first.end = second.end
        for name in ("text", "effect", "behaviour"):
            if not getattr(first, name).strip():
                setattr(first, name, getattr(second, name))
        if first.success != second.success:
            first.success = ""
        second.delete()
        first.save()
        return first

    return _edit(
        trajectory,
        actor,
        expected_version,
        "subgoal.merged",
        "subgoals",
        change,
        object_type="Subgoal",
    )


def do_move_boundary(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    subgoal_id: Any,
    *,
    start: Any = None,
    end: Any = None,
) -> Subgoal:
    """Move a subgoal's start and/or end; a neighbour it runs into gives way, but never
    becomes empty (merge instead)."""

    def change(locked: Trajectory) -> Subgoal:
        n = locked.step_count
        subgoals = _ordered_subgoals(locked)
        moved = _subgoal(locked, subgoal_id)
        position = next(i for i, g in enumerate(subgoals) if g.pk == moved.pk)
        new_start = moved.start if start is None else check_step_index(start, n, "start")
        new_end = moved.end if end is None else check_step_index(end, n, "end")
        if new_start > new_end:
            raise fail("start", f"start {new_start} is after end {new_end}")
        touched = [moved]
        if position > 0 and subgoals[position - 1].end >= new_start:
            before = subgoals[position - 1]
            if before.start >= new_start:
                raise fail(
                    "start",
                    f"moving the start to {new_start} would leave subgoal "
                    f"{before.start}–{before.end} empty: merge them instead",
                )
            before.end = new_start - 1
            touched.append(before)
        if position + 1 < len(subgoals) and subgoals[position + 1].start <= new_end:
            after = subgoals[position + 1]
            if after.end <= new_end:
                raise fail(
                    "end",
                    f"moving the end to {new_end} would leave subgoal "
                    f"{after.start}–{after.end} empty: merge them instead",
                )
            after.start = new_end + 1
            touched.append(after)
        moved.start, moved.end = new_start, new_end
        check_subgoals([(g.start, g.end) for g in subgoals], n)
        for g in touched:
            g.save(update_fields=["start", "end"])
        return moved

    return _edit(
        trajectory,
        actor,
        expected_version,
        "subgoal.boundary_moved",
        "subgoals",
        change,
        object_type="Subgoal",
    )


def do_update_subgoal(
    trajectory: Trajectory, actor, expected_version: Any, subgoal_id: Any, fields: Mapping
) -> Subgoal:
    """Set a subgoal's text (intent), effect, behaviour and/or success."""
    fields = _fields(fields, SUBGOAL_FIELDS)

    def change(locked: Trajectory) -> Subgoal:
        subgoal = _subgoal(locked, subgoal_id)
        for name, value in fields.items():
            if name == "success":
                value = check_success(value, "success")
            else:
                value = _text(value, name)
            setattr(subgoal, name, value)
        subgoal.save(update_fields=list(fields) or None)
        return subgoal

    return _edit(
        trajectory,
        actor,
        expected_version,
        "subgoal.updated",
        "subgoals",
        change,
        object_type="Subgoal",
    )


def do_delete_subgoal(
    trajectory: Trajectory, actor, expected_version: Any, subgoal_id: Any
) -> None:
    def change(locked: Trajectory) -> None:
        _subgoal(locked, subgoal_id).delete()

    _edit(
        trajectory,
        actor,
        expected_version,
        "subgoal.deleted",
        "subgoals",
        change,
        object_type="Subgoal",
    )


# ---------------------------------------------------------------- steps


def do_update_step(
    trajectory: Trajectory, actor, expected_version: Any, index: Any, fields: Mapping
) -> Step:
    """Set a step's thought, summary, memory text and/or trainable flag."""
    fields = _fields(fields, STEP_FIELDS)
    at = check_step_index(index, trajectory.step_count, "index")
    for name, value in fields.items():
        if name == "trainable":
            if not isinstance(value, bool):
                raise fail("trainable", f"must be true or false, got {value!r}")
        else:
            _text(value, name)

    def change(locked: Trajectory) -> Step:
        step = Step.objects.get(trajectory=locked, index=at)
        if fields:
            for name, value in fields.items():
                setattr(step, name, value)
            step.save(update_fields=list(fields))
        return step

    return _edit(
        trajectory,
        actor,
        expected_version,
        "step.updated",
        f"step:{at}",
        change,
        object_type="Step",
    )


# ---------------------------------------------------------------- memory targets


def _memory_target(locked: Trajectory, target_id: Any) -> MemoryTarget:
    try:
        return MemoryTarget.objects.get(trajectory=locked, pk=int(target_id))
    except (MemoryTarget.DoesNotExist, ValueError, TypeError):
        raise InvalidData(
            f"memory target {target_id!r} is not a memory target of this trajectory"
        ) from None


def _steps_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise fail(where, "must be a list of step indices")
    return list(value)


def do_add_memory_target(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    *,
    key: Any,
    value: Any,
    encode_step: Any,
    retrieve_steps: Any = (),
    evidence: Any = None,
) -> MemoryTarget:
    key = _text(key, "key", required=True).strip()
    value = _text(value, "value")
    retrieve = check_memory_target(
        encode_step, _steps_list(retrieve_steps, "retrieve_steps"), trajectory.step_count, ""
    )
    evidence = check_evidence(evidence)

    def change(locked: Trajectory) -> MemoryTarget:
        return MemoryTarget.objects.create(
            trajectory=locked,
            key=key,
            value=value,
            encode_step=encode_step,
            retrieve_steps=retrieve,
            evidence=evidence,
        )

    return _edit(
        trajectory,
        actor,
        expected_version,
        "memory_target.added",
        "memory_targets",
        change,
        object_type="MemoryTarget",
    )


def do_update_memory_target(
    trajectory: Trajectory, actor, expected_version: Any, target_id: Any, fields: Mapping
) -> MemoryTarget:
    fields = _fields(fields, ("key", "value", "encode_step", "retrieve_steps", "evidence"))

    def change(locked: Trajectory) -> MemoryTarget:
        target = _memory_target(locked, target_id)
        if "key" in fields:
            target.key = _text(fields["key"], "key", required=True).strip()
        if "value" in fields:
            target.value = _text(fields["value"], "value")
        if "evidence" in fields:
            target.evidence = check_evidence(fields["evidence"])
        encode = fields.get("encode_step", target.encode_step)
        retrieve = _steps_list(
            fields.get("retrieve_steps", target.retrieve_steps), "retrieve_steps"
        )
        target.retrieve_steps = check_memory_target(encode, retrieve, locked.step_count, "")
        target.encode_step = encode
        target.save()
        return target

    return _edit(
        trajectory,
        actor,
        expected_version,
        "memory_target.updated",
        "memory_targets",
        change,
        object_type="MemoryTarget",
    )


def do_delete_memory_target(
    trajectory: Trajectory, actor, expected_version: Any, target_id: Any
) -> None:
    def change(locked: Trajectory) -> None:
        _memory_target(locked, target_id).delete()

    _edit(
        trajectory,
        actor,
        expected_version,
        "memory_target.deleted",
        "memory_targets",
        change,
        object_type="MemoryTarget",
    )


# ---------------------------------------------------------------- anchors and links


def _anchor(locked: Trajectory, key: Any) -> Anchor:
    found = Anchor.objects.filter(trajectory=locked, key=str(key)).first()
    if found is None:
        raise InvalidData(f"anchor {key!r} is not an anchor of this trajectory")
    return found


def next_anchor_key(keys: Iterable[str]) -> str:
    numbers = [int(m.group(1)) for k in keys if (m := re.fullmatch(r"a(\d+)", k))]
    return f"a{max(numbers, default=0) + 1}"


def do_add_anchor(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    *,
    step: Any,
    type: Any,
    content: Any,
    description: Any = "",
    evidence: Any = None,
) -> Anchor:
    """Add an anchor on a step; its key is the next free ``a<n>``."""
    at = check_step_index(step, trajectory.step_count, "step")
    anchor_type = check_anchor_type(type, "type")
    content = _text(content, "content", required=True)
    description = _text(description, "description")
    evidence = check_evidence(evidence)

    def change(locked: Trajectory) -> Anchor:
        keys = Anchor.objects.filter(trajectory=locked).values_list("key", flat=True)
        return Anchor.objects.create(
            trajectory=locked,
            key=next_anchor_key(keys),
            step_index=at,
            type=anchor_type,
            content=content,
            description=description,
            evidence=evidence,
        )

    return _edit(
        trajectory, actor, expected_version, "anchor.added", "anchors", change, object_type="Anchor"
    )


def do_update_anchor(
    trajectory: Trajectory, actor, expected_version: Any, key: Any, fields: Mapping
) -> Anchor:
    fields = _fields(fields, ("step", "type", "content", "description", "evidence"))

    def change(locked: Trajectory) -> Anchor:
        anchor = _anchor(locked, key)
        if "step" in fields:
            anchor.step_index = check_step_index(fields["step"], locked.step_count, "step")
        if "type" in fields:
            anchor.type = check_anchor_type(fields["type"], "type")
        if "content" in fields:
            anchor.content = _text(fields["content"], "content", required=True)
        if "description" in fields:
            anchor.description = _text(fields["description"], "description")
        if "evidence" in fields:
            anchor.evidence = check_evidence(fields["evidence"])
        anchor.save()
        return anchor

    return _edit(
        trajectory,
        actor,
        expected_version,
        "anchor.updated",
        "anchors",
        change,
        object_type="Anchor",
    )


def do_delete_anchor(trajectory: Trajectory, actor, expected_version: Any, key: Any) -> None:
    """Delete an anchor and its links."""

    def change(locked: Trajectory) -> None:
        _anchor(locked, key).delete()

    _edit(
        trajectory,
        actor,
        expected_version,
        "anchor.deleted",
        "anchors",
        change,
        object_type="Anchor",
    )


def do_add_anchor_link(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    *,
    source: Any,
    target: Any,
    relation: Any,
    critical: Any = False,
) -> AnchorLink:
    relation = check_relation(relation, "relation")
    if not isinstance(critical, bool):
        raise fail("critical", f"must be true or false, got {critical!r}")

    def change(locked: Trajectory) -> AnchorLink:
        anchors = {a.key: a for a in Anchor.objects.filter(trajectory=locked)}
        check_anchor_link(source, target, anchors, "")
        if AnchorLink.objects.filter(
            source=anchors[source], target=anchors[target], relation=relation
        ).exists():
            raise InvalidData(f"the link {source} -{relation}-> {target} already exists")
        return AnchorLink.objects.create(
            source=anchors[source], target=anchors[target], relation=relation, critical=critical
        )

    return _edit(
        trajectory,
        actor,
        expected_version,
        "anchor_link.added",
        "anchors",
        change,
        object_type="AnchorLink",
    )


def do_delete_anchor_link(
    trajectory: Trajectory, actor, expected_version: Any, link_id: Any
) -> None:
    def change(locked: Trajectory) -> None:
        try:
            AnchorLink.objects.get(source__trajectory=locked, pk=int(link_id)).delete()
        except (AnchorLink.DoesNotExist, ValueError, TypeError):
            raise InvalidData(f"link {link_id!r} is not a link of this trajectory") from None

    _edit(
        trajectory,
        actor,
        expected_version,
        "anchor_link.deleted",
        "anchors",
        change,
        object_type="AnchorLink",
    )


# ---------------------------------------------------------------- undo and redo


def _undo_or_redo(trajectory: Trajectory, actor, expected_version: Any, redo: bool) -> bool:
    """Restore one side of the last (undone) edit, as a new audited, versioned edit."""
    with transaction.atomic():
        locked = _lock(trajectory, expected_version)
        _check_editable(locked)
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
        _bump(trajectory, locked)
        record_event(
            "labels.redone" if redo else "labels.undone",
            actor=actor,
            trajectory=trajectory,
            object_type="AuditEvent",
            object_id=entry.event_id,
            before={part: current},
            after={part: value},
        )
    return True


def do_undo(trajectory: Trajectory, actor, expected_version: Any) -> bool:
    """Undo the trajectory's last label edit (whoever made it); False when there is none."""
    return _undo_or_redo(trajectory, actor, expected_version, redo=False)


def do_redo(trajectory: Trajectory, actor, expected_version: Any) -> bool:
    return _undo_or_redo(trajectory, actor, expected_version, redo=True)


def undo_state(trajectory: Trajectory) -> dict[str, bool]:
    counts = dict(
        LabelEdit.objects.filter(trajectory=trajectory)
        .values_list("undone")
        .annotate(n=Count("id"))
        .values_list("undone", "n")
    )
    return {"can_undo": bool(counts.get(False)), "can_redo": bool(counts.get(True))}


# ---------------------------------------------------------------- submit and review


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
    with transaction.atomic():
        locked = _lock(trajectory, expected_version)
        _check_editable(locked)
        problems = problems_of_trajectory(locked)
        if problems:
            listed = "; ".join(p.message for p in problems[:5])
            more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
            raise InvalidData(f"not ready for review: {listed}{more}")
        _bump(trajectory, locked, status=Status.IN_REVIEW)
        ReviewComment.objects.filter(trajectory=locked, resolved=False).update(resolved=True)
        record_event(
            "trajectory.submitted",
            actor=actor,
            trajectory=trajectory,
            object_type="Trajectory",
            object_id=locked.pk,
            before={"status": locked.status},
            after={"status": Status.IN_REVIEW},
        )


def do_comment(trajectory: Trajectory, actor, step: Any, text: Any) -> ReviewComment:
    """A reviewer's comment on a step (or on the whole trajectory when ``step`` is None)."""
    if step is not None:
        step = check_step_index(step, trajectory.step_count, "step")
    text = _text(text, "text", required=True).strip()
    with transaction.atomic():
        comment = ReviewComment.objects.create(
            trajectory=trajectory, step_index=step, author=actor, text=text
        )
        record_event(
            "review.commented",
            actor=actor,
            trajectory=trajectory,
            object_type="ReviewComment",
            object_id=comment.pk,
            after={"step": step, "text": text},
        )
    return comment


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
        _text(c.get("text"), f"comments[{i}].text", required=True)
    if decision in ("reject", "send_back") and not comments:
        if not ReviewComment.objects.filter(trajectory=trajectory, resolved=False).exists():
            raise fail("comments", f"say why: a {decision.replace('_', ' ')} needs a comment")
    new_status = {
        "approve": Status.APPROVED,
        "reject": Status.REJECTED,
        "send_back": Status.ANNOTATING,
    }[decision]
    with transaction.atomic():
        locked = _lock(trajectory, expected_version)
        reopening = decision == "send_back" and locked.status in (Status.APPROVED, Status.REJECTED)
        if locked.status != Status.IN_REVIEW and not reopening:
            raise InvalidData(
                f"this trajectory is {locked.get_status_display().lower()}, not in review"
            )
        for c in comments:
            do_comment(locked, actor, c.get("step"), c["text"])
        _bump(trajectory, locked, status=new_status)
        record_event(
            f"review.{decision}",
            actor=actor,
            trajectory=trajectory,
            object_type="Trajectory",
            object_id=locked.pk,
            before={"status": locked.status},
            after={"status": new_status},
        )


# ---------------------------------------------------------------- assignment and copies


def do_make_copy(original: Trajectory, actor) -> Trajectory:
    """A second annotator's copy: the same steps on the same screens (shared blobs) and the
    labels the original has now, under a new uid, linked by ``copy_of``."""
    with transaction.atomic():
        copy = Trajectory.objects.get(pk=original.pk)
        copy.pk = None
        copy.id = None
        copy.uid = uuid.uuid4()
        copy.copy_of = original
        copy.version = 1
        copy.status = Status.ANNOTATING
        copy.final_screen = None
        copy.save()
        screens = list(Screen.objects.filter(trajectory=original).order_by("id"))
        old_ids = [s.pk for s in screens]
        for s in screens:
            s.pk = None
            s.trajectory = copy
        Screen.objects.bulk_create(screens)
        new_id = dict(zip(old_ids, (s.pk for s in screens), strict=True))
        steps = list(Step.objects.filter(trajectory=original).order_by("index"))
        for s in steps:
            s.pk = None
            s.trajectory = copy
            s.screen_id = new_id[s.screen_id]
        Step.objects.bulk_create(steps)
        if original.final_screen_id in new_id:
            copy.final_screen_id = new_id[original.final_screen_id]
            copy.save(update_fields=["final_screen"])
        labels = all_labels(original)
        for part in ("subgoals", "memory_targets"):
            restore(copy, part, [{**item, "id": None} for item in labels[part]])
        restore(
            copy,
            "anchors",
            {
                "anchors": [{**a, "id": None} for a in labels["anchors"]],
                "links": [{**link, "id": None} for link in labels["links"]],
            },
        )
        record_event(
            "trajectory.copied",
            actor=actor,
            trajectory=copy,
            object_type="Trajectory",
            object_id=copy.pk,
            after={"copy_of": original.pk},
        )
    return copy


def _check_annotator(project: Project, annotator) -> None:
    role = project.role_of(annotator)
    if role not in (Role.ANNOTATOR, Role.ADMIN):
        raise InvalidData(f"{annotator.get_username()} is not an annotator of {project.name}")


def do_assign(trajectory: Trajectory, annotator, actor) -> Assignment:
    """Assign a trajectory to one annotator (again: nothing changes)."""
    _check_annotator(trajectory.project, annotator)
    with transaction.atomic():
        assignment, created = Assignment.objects.get_or_create(
            trajectory=trajectory, annotator=annotator, defaults={"assigned_by": actor}
        )
        if created:
            record_event(
                "assignment.added",
                actor=actor,
                trajectory=trajectory,
                object_type="Assignment",
                object_id=assignment.pk,
                after={"annotator": annotator.get_username()},
            )
    return assignment


def do_unassign(trajectory: Trajectory, annotator, actor) -> None:
    with transaction.atomic():
        deleted, _ = Assignment.objects.filter(trajectory=trajectory, annotator=annotator).delete()
        if deleted:
            record_event(
                "assignment.removed",
                actor=actor,
                trajectory=trajectory,
                object_type="Assignment",
                before={"annotator": annotator.get_username()},
            )


def do_assign_double(trajectory: Trajectory, first, second, actor) -> Trajectory:
    """Two annotators label the same trajectory independently: ``first`` the original,
    ``second`` a copy. Returns the copy."""
    if first.pk == second.pk:
        raise InvalidData("double annotation needs two different annotators")
    if trajectory.copy_of_id:
        raise InvalidData("this trajectory is already a copy for double annotation")
    _check_annotator(trajectory.project, second)
    with transaction.atomic():
        do_assign(trajectory, first, actor)
        copy = do_make_copy(trajectory, actor)
        do_assign(copy, second, actor)
    return copy


def do_spread_assignments(
    project: Project,
    trajectories: Iterable[Trajectory],
    annotators: list,
    actor,
    per_trajectory: int = 1,
) -> list[Assignment]:
    """Share trajectories out evenly: each goes to the annotators with the fewest assignments
    in the project so far (ties by the order given). A trajectory that already has its
    annotator keeps them (with 2 per trajectory they become the first of the pair); one that
    already has a copy is left alone."""
    if per_trajectory not in (1, 2):
        raise fail("per_trajectory", f"must be 1 or 2, got {per_trajectory!r}")
    if len(annotators) < per_trajectory:
        raise fail("annotators", f"need at least {per_trajectory} annotators")
    for annotator in annotators:
        _check_annotator(project, annotator)
    load = dict(
        Assignment.objects.filter(trajectory__project=project, annotator__in=annotators)
        .values("annotator")
        .annotate(n=Count("id"))
        .values_list("annotator", "n")
    )
    order = {a.pk: i for i, a in enumerate(annotators)}
    users = {a.pk: a for a in annotators}

    def least_loaded(excluding: set[int]):
        free = [a for a in annotators if a.pk not in excluding]
        chosen = min(free, key=lambda a: (load.get(a.pk, 0), order[a.pk]))
        load[chosen.pk] = load.get(chosen.pk, 0) + 1
        return chosen

    made: list[Assignment] = []
    with transaction.atomic():
        for trajectory in trajectories:
            if trajectory.project_id != project.pk:
                raise InvalidData(f"trajectory {trajectory.pk} is not in {project.name}")
            if trajectory.copy_of_id or (per_trajectory == 2 and trajectory.copies.exists()):
                continue
            existing = list(
                Assignment.objects.filter(trajectory=trajectory).values_list(
                    "annotator_id", flat=True
                )
            )
            if per_trajectory == 1:
                if not existing:
                    made.append(do_assign(trajectory, least_loaded(set()), actor))
                continue
            if existing:
                first = users.get(existing[0]) or get_user_model().objects.get(pk=existing[0])
            else:
                first = least_loaded(set())
            second = least_loaded({first.pk})
            copy = do_assign_double(trajectory, first, second, actor)
            made += list(Assignment.objects.filter(trajectory__in=[trajectory, copy]))
    return made
