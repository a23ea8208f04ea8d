"""Every label edit, one ``do_*`` function each, all through :func:`.protocol.edit`.

The annotation workspace (``annotate/``) and the recording console (``devices/``) both call
these: a step's labels, a memory target or a note written from either side is the same
versioned, validated, audited and undoable edit with the same audit event kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from django.utils import timezone

from .. import events
from ..models import Anchor, AnchorLink, MemoryTarget, Status, Step, Subgoal, Trajectory
from ..validation import (
    InvalidData,
    check_anchor_link,
    check_anchor_type,
    check_bounds,
    check_memory_target,
    check_relation,
    check_step_index,
    check_subgoals,
    check_success,
    fail,
)
from .parts import (
    NOTES,
    STEP_FIELDS,
    SUBGOAL_FIELDS,
    anchor_row,
    link_row,
    memory_target_row,
    subgoal_row,
)
from .protocol import EDITABLE, edit

TEXT_EVIDENCE = ("resource_id", "class", "text", "content_desc", "path", "source")
EVIDENCE_FIELDS = ("bounds", *TEXT_EVIDENCE, "screen", "node")


def text_field(value: Any, where: str, *, required: bool = False) -> str:
    if not isinstance(value, str):
        raise fail(where, f"must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise fail(where, "must not be empty")
    return value


def only_fields(
    given: Mapping[str, Any], allowed: Iterable[str], where: str = ""
) -> dict[str, Any]:
    allowed = tuple(allowed)
    for name in given:
        if name not in allowed:
            raise fail(
                name if not where else f"{where}.{name}", f"is not one of {', '.join(allowed)}"
            )
    return dict(given)


def check_evidence(value: Any, where: str = "evidence") -> dict[str, Any]:
    """Evidence on a screen: an element's attributes and/or a box ``bounds``; from the
    recording console also the screen it was marked on, how (``source``) and the ``node``."""
    if value in (None, ""):
        return {}
    if not isinstance(value, Mapping):
        raise fail(where, f"must be an object, got {type(value).__name__}")
    evidence = only_fields(value, EVIDENCE_FIELDS, where)
    if "bounds" in evidence:
        evidence["bounds"] = check_bounds(evidence["bounds"], f"{where}.bounds")
    for name in TEXT_EVIDENCE:
        if name in evidence:
            text_field(evidence[name], f"{where}.{name}")
    if "screen" in evidence:
        screen = evidence["screen"]
        if isinstance(screen, bool) or not isinstance(screen, int) or screen < 0:
            raise fail(f"{where}.screen", f"must be a screen number, got {screen!r}")
    if "node" in evidence and not isinstance(evidence["node"], Mapping):
        raise fail(f"{where}.node", f"must be an object, got {type(evidence['node']).__name__}")
    return evidence


def _saved(row: Any) -> Any:
    row.save(force_insert=True)
    return row


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
            new = _saved(subgoal_row(locked, {"start": at, "end": around.end}))
            around.end = at - 1
            around.save(update_fields=["end"])
            return new
        first = max((g.end + 1 for g in subgoals if g.end < at), default=0)
        last = min((g.start - 1 for g in subgoals if g.start > at), default=n - 1)
        if at > first:
            _saved(subgoal_row(locked, {"start": first, "end": at - 1}))
        return _saved(subgoal_row(locked, {"start": at, "end": last}))

    return edit(
        trajectory,
        actor,
        expected_version,
        events.SUBGOAL_SPLIT,
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

    return edit(
        trajectory,
        actor,
        expected_version,
        events.SUBGOAL_MERGED,
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
    shared: bool = False,
) -> Subgoal:
    """Move a subgoal's start and/or end; a neighbour it runs into gives way, but never
    becomes empty (merge instead). With ``shared``, an edge the subgoal shares with an
    adjacent neighbour is their common boundary: shrinking moves the neighbour's edge along
    instead of leaving a gap."""

    def change(locked: Trajectory) -> Subgoal:
        n = locked.step_count
        subgoals = _ordered_subgoals(locked)
        moved = _subgoal(locked, subgoal_id)
        position = next(i for i, g in enumerate(subgoals) if g.pk == moved.pk)
        moved = subgoals[position]  # the one whose new range the overlap check sees
        new_start = moved.start if start is None else check_step_index(start, n, "start")
        new_end = moved.end if end is None else check_step_index(end, n, "end")
        if new_start > new_end:
            raise fail("start", f"start {new_start} is after end {new_end}")
        touched = [moved]
        if shared and position > 0 and subgoals[position - 1].end == moved.start - 1:
            if new_start > moved.start:
                subgoals[position - 1].end = new_start - 1
                touched.append(subgoals[position - 1])
        if (
            shared
            and position + 1 < len(subgoals)
            and subgoals[position + 1].start == moved.end + 1
        ):
            if new_end < moved.end:
                subgoals[position + 1].start = new_end + 1
                touched.append(subgoals[position + 1])
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

    return edit(
        trajectory,
        actor,
        expected_version,
        events.SUBGOAL_BOUNDARY_MOVED,
        "subgoals",
        change,
        object_type="Subgoal",
    )


def do_update_subgoal(
    trajectory: Trajectory, actor, expected_version: Any, subgoal_id: Any, fields: Mapping
) -> Subgoal:
    """Set a subgoal's text (intent), effect, behaviour and/or success."""
    fields = only_fields(fields, SUBGOAL_FIELDS)

    def change(locked: Trajectory) -> Subgoal:
        subgoal = _subgoal(locked, subgoal_id)
        for name, value in fields.items():
            if name == "success":
                value = check_success(value, "success")
            else:
                value = text_field(value, name)
            setattr(subgoal, name, value)
        subgoal.save(update_fields=list(fields) or None)
        return subgoal

    return edit(
        trajectory,
        actor,
        expected_version,
        events.SUBGOAL_UPDATED,
        "subgoals",
        change,
        object_type="Subgoal",
    )


def do_delete_subgoal(
    trajectory: Trajectory, actor, expected_version: Any, subgoal_id: Any
) -> None:
    def change(locked: Trajectory) -> None:
        _subgoal(locked, subgoal_id).delete()

    edit(
        trajectory,
        actor,
        expected_version,
        events.SUBGOAL_DELETED,
        "subgoals",
        change,
        object_type="Subgoal",
    )


# ---------------------------------------------------------------- steps


def do_update_step(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    index: Any,
    fields: Mapping,
    *,
    statuses: Iterable[str] = EDITABLE,
) -> Step:
    """Set a step's thought, summary, memory text and/or trainable flag."""
    fields = only_fields(fields, STEP_FIELDS)
    at = check_step_index(index, trajectory.step_count, "index")
    for name, value in fields.items():
        if name == "trainable":
            if not isinstance(value, bool):
                raise fail("trainable", f"must be true or false, got {value!r}")
        else:
            text_field(value, name)

    def change(locked: Trajectory) -> Step:
        step = Step.objects.get(trajectory=locked, index=at)
        if fields:
            for name, value in fields.items():
                setattr(step, name, value)
            step.save(update_fields=list(fields))
        return step

    return edit(
        trajectory,
        actor,
        expected_version,
        events.STEP_UPDATED,
        f"step:{at}",
        change,
        object_type="Step",
        statuses=statuses,
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
    statuses: Iterable[str] = EDITABLE,
) -> MemoryTarget:
    """A value that must be carried forward from ``encode_step`` to ``retrieve_steps``.

    While recording, the screen on show is the one before the step not yet recorded, so
    ``encode_step`` may name that step (``step_count``).
    """
    key = text_field(key, "key", required=True).strip()
    value = text_field(value, "value")
    pending = 1 if trajectory.status == Status.RECORDING else 0
    retrieve = check_memory_target(
        encode_step,
        _steps_list(retrieve_steps, "retrieve_steps"),
        trajectory.step_count + pending,
        "",
    )
    evidence = check_evidence(evidence)

    def change(locked: Trajectory) -> MemoryTarget:
        row = {"key": key, "value": value, "encode_step": encode_step}
        return _saved(
            memory_target_row(locked, {**row, "retrieve_steps": retrieve, "evidence": evidence})
        )

    return edit(
        trajectory,
        actor,
        expected_version,
        events.MEMORY_TARGET_ADDED,
        "memory_targets",
        change,
        object_type="MemoryTarget",
        statuses=statuses,
    )


def do_update_memory_target(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    target_id: Any,
    fields: Mapping,
    *,
    statuses: Iterable[str] = EDITABLE,
) -> MemoryTarget:
    fields = only_fields(fields, ("key", "value", "encode_step", "retrieve_steps", "evidence"))

    def change(locked: Trajectory) -> MemoryTarget:
        # While recording, a value may be encoded by the step not yet recorded.
        pending = 1 if locked.status == Status.RECORDING else 0
        target = _memory_target(locked, target_id)
        if "key" in fields:
            target.key = text_field(fields["key"], "key", required=True).strip()
        if "value" in fields:
            target.value = text_field(fields["value"], "value")
        if "evidence" in fields:
            target.evidence = check_evidence(fields["evidence"])
        encode = fields.get("encode_step", target.encode_step)
        retrieve = _steps_list(
            fields.get("retrieve_steps", target.retrieve_steps), "retrieve_steps"
        )
        target.retrieve_steps = check_memory_target(
            encode, retrieve, locked.step_count + pending, ""
        )
        target.encode_step = encode
        target.save()
        return target

    return edit(
        trajectory,
        actor,
        expected_version,
        events.MEMORY_TARGET_UPDATED,
        "memory_targets",
        change,
        object_type="MemoryTarget",
        statuses=statuses,
    )


def do_delete_memory_target(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    target_id: Any,
    *,
    statuses: Iterable[str] = EDITABLE,
) -> None:
    def change(locked: Trajectory) -> None:
        _memory_target(locked, target_id).delete()

    edit(
        trajectory,
        actor,
        expected_version,
        events.MEMORY_TARGET_DELETED,
        "memory_targets",
        change,
        object_type="MemoryTarget",
        statuses=statuses,
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
    content = text_field(content, "content", required=True)
    description = text_field(description, "description")
    evidence = check_evidence(evidence)

    def change(locked: Trajectory) -> Anchor:
        keys = Anchor.objects.filter(trajectory=locked).values_list("key", flat=True)
        row = {"step": at, "type": anchor_type, "content": content}
        return _saved(
            anchor_row(
                locked,
                {**row, "description": description, "evidence": evidence},
                next_anchor_key(keys),
            )
        )

    return edit(
        trajectory,
        actor,
        expected_version,
        events.ANCHOR_ADDED,
        "anchors",
        change,
        object_type="Anchor",
    )


def do_update_anchor(
    trajectory: Trajectory, actor, expected_version: Any, key: Any, fields: Mapping
) -> Anchor:
    fields = only_fields(fields, ("step", "type", "content", "description", "evidence"))

    def change(locked: Trajectory) -> Anchor:
        anchor = _anchor(locked, key)
        if "step" in fields:
            anchor.step_index = check_step_index(fields["step"], locked.step_count, "step")
        if "type" in fields:
            anchor.type = check_anchor_type(fields["type"], "type")
        if "content" in fields:
            anchor.content = text_field(fields["content"], "content", required=True)
        if "description" in fields:
            anchor.description = text_field(fields["description"], "description")
        if "evidence" in fields:
            anchor.evidence = check_evidence(fields["evidence"])
        anchor.save()
        return anchor

    return edit(
        trajectory,
        actor,
        expected_version,
        events.ANCHOR_UPDATED,
        "anchors",
        change,
        object_type="Anchor",
    )


def do_delete_anchor(trajectory: Trajectory, actor, expected_version: Any, key: Any) -> None:
    """Delete an anchor and its links."""

    def change(locked: Trajectory) -> None:
        _anchor(locked, key).delete()

    edit(
        trajectory,
        actor,
        expected_version,
        events.ANCHOR_DELETED,
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
        ids = {key: anchor.pk for key, anchor in anchors.items()}
        link = {"source": source, "target": target, "relation": relation, "critical": critical}
        return _saved(link_row(link, ids))

    return edit(
        trajectory,
        actor,
        expected_version,
        events.ANCHOR_LINK_ADDED,
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

    edit(
        trajectory,
        actor,
        expected_version,
        events.ANCHOR_LINK_DELETED,
        "anchors",
        change,
        object_type="AnchorLink",
    )


# ---------------------------------------------------------------- notes


def do_add_note(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    text: Any,
    *,
    statuses: Iterable[str] = EDITABLE,
) -> dict[str, Any]:
    """A note between steps, kept in the trajectory's metadata before the next step."""
    text = text_field(text, "note", required=True).strip()
    note: dict[str, Any] = {}

    def change(locked: Trajectory) -> dict[str, Any]:
        note.update(
            before_step=locked.step_count,
            text=text,
            by=actor.get_username(),
            at=timezone.now().isoformat(),
        )
        # ``locked`` was read under the row lock: its metadata is the stored one.
        locked.metadata.setdefault(NOTES, []).append(note)
        Trajectory.objects.filter(pk=locked.pk).update(metadata=locked.metadata)
        return note

    edit(
        trajectory,
        actor,
        expected_version,
        events.NOTE_ADDED,
        NOTES,
        change,
        object_type="Trajectory",
        statuses=statuses,
    )
    trajectory.metadata = Trajectory.objects.values_list("metadata", flat=True).get(
        pk=trajectory.pk
    )
    return note
