"""A trajectory's labels as plain JSON, by part, and how to put a part back.

One mapping per label row, both ways: ``*_dict`` turns a row into JSON (the workspace, the API,
audit events), ``*_values`` turns JSON into a row's fields and ``*_row`` into an unsaved row of
them (import, undo, copies, recording), so every place that writes a subgoal, memory target,
anchor or link fills the same fields.

An edit records the part it touched before and after (a subgoal edit stores all subgoals, a step
edit that step's fields): small enough to keep in every audit event, complete enough that undo
and redo are a restore of one side. Restores keep primary keys, so ids seen by clients survive
an undo.
"""

from __future__ import annotations

from typing import Any

from django.db.models import F

from trajectories.models import Anchor, AnchorLink, MemoryTarget, Step, Subgoal, Trajectory

STEP_FIELDS = ("thought", "summary", "memory", "trainable")
SUBGOAL_FIELDS = ("text", "effect", "behaviour", "success")

Part = str  # "subgoals", "memory_targets", "anchors", "notes" or "step:<index>"
NOTES = "notes"  # key of the notes between steps in Trajectory.metadata


def subgoal_dict(g: Subgoal) -> dict[str, Any]:
    return {
        "id": g.pk,
        "start": g.start,
        "end": g.end,
        "text": g.text,
        "effect": g.effect,
        "behaviour": g.behaviour,
        "success": g.success,
        "origin": g.origin,
    }


def memory_target_dict(m: MemoryTarget) -> dict[str, Any]:
    return {
        "id": m.pk,
        "key": m.key,
        "value": m.value,
        "encode_step": m.encode_step,
        "evidence": m.evidence,
        "retrieve_steps": list(m.retrieve_steps),
    }


def anchor_dict(a: Anchor) -> dict[str, Any]:
    return {
        "id": a.pk,
        "key": a.key,
        "step": a.step_index,
        "type": a.type,
        "content": a.content,
        "description": a.description,
        "evidence": a.evidence,
    }


def link_dict(link: AnchorLink, keys: dict[int, str]) -> dict[str, Any]:
    return {
        "id": link.pk,
        "source": keys[link.source_id],
        "target": keys[link.target_id],
        "relation": link.relation,
        "critical": link.critical,
    }


def subgoal_values(g: dict[str, Any]) -> dict[str, Any]:
    """A subgoal row's fields (but its trajectory and id), from its JSON."""
    return {
        "start": g["start"],
        "end": g["end"],
        "text": g.get("text", ""),
        "effect": g.get("effect", ""),
        "behaviour": g.get("behaviour", ""),
        "success": g.get("success", "") or "",
        "origin": g.get("origin", "human"),
    }


def memory_target_values(m: dict[str, Any]) -> dict[str, Any]:
    """A memory target row's fields (but its trajectory and id), from its JSON."""
    return {
        "key": m["key"],
        "value": m["value"],
        "encode_step": m["encode_step"],
        "evidence": m.get("evidence") or {},
        "retrieve_steps": sorted(set(m.get("retrieve_steps", []))),
    }


def anchor_values(a: dict[str, Any], key: str) -> dict[str, Any]:
    """An anchor row's fields (but its trajectory and id), from its JSON."""
    return {
        "key": key,
        "step_index": a["step"],
        "type": a["type"],
        "content": a["content"],
        "description": a.get("description", ""),
        "evidence": a.get("evidence") or {},
    }


def link_values(link: dict[str, Any], ids: dict[str, int]) -> dict[str, Any]:
    """A link row's fields (but its id), from its JSON; ``ids`` maps anchor keys to their
    rows' ids."""
    return {
        "source_id": ids[link["source"]],
        "target_id": ids[link["target"]],
        "relation": link["relation"],
        "critical": link.get("critical", False),
    }


def subgoal_row(trajectory: Trajectory, g: dict[str, Any], pk: int | None = None) -> Subgoal:
    return Subgoal(pk=pk, trajectory=trajectory, **subgoal_values(g))


def memory_target_row(
    trajectory: Trajectory, m: dict[str, Any], pk: int | None = None
) -> MemoryTarget:
    return MemoryTarget(pk=pk, trajectory=trajectory, **memory_target_values(m))


def anchor_row(
    trajectory: Trajectory, a: dict[str, Any], key: str, pk: int | None = None
) -> Anchor:
    return Anchor(pk=pk, trajectory=trajectory, **anchor_values(a, key))


def link_row(link: dict[str, Any], ids: dict[str, int], pk: int | None = None) -> AnchorLink:
    """``ids`` maps anchor keys to their rows' ids."""
    return AnchorLink(pk=pk, **link_values(link, ids))


def step_dict(step: Step) -> dict[str, Any]:
    return {"index": step.index, **{f: getattr(step, f) for f in STEP_FIELDS}}


# The keys of anchor_dict, in its order ("step" is the row's step_index).
ANCHOR_KEYS = ("id", "key", "step", "type", "content", "description", "evidence")


def anchors_part(trajectory: Trajectory) -> dict[str, Any]:
    """The anchors (by step) and the links going out of them (by id), in one query: a row per
    anchor and outgoing link."""
    rows = (
        Anchor.objects.filter(trajectory_id=trajectory.pk)
        .order_by("step_index", "id", "links_out__id")
        .values(
            *(k for k in ANCHOR_KEYS if k != "step"),
            step=F("step_index"),
            link=F("links_out__id"),
            link_target=F("links_out__target_id"),
            relation=F("links_out__relation"),
            critical=F("links_out__critical"),
        )
    )
    anchors: dict[int, dict[str, Any]] = {}
    outgoing = []
    for row in rows:
        anchors.setdefault(row["id"], {k: row[k] for k in ANCHOR_KEYS})
        if row["link"] is not None:
            outgoing.append(row)
    keys = {a["id"]: a["key"] for a in anchors.values()}
    links = [
        {
            "id": row["link"],
            "source": row["key"],
            "target": keys[row["link_target"]],
            "relation": row["relation"],
            "critical": row["critical"],
        }
        for row in sorted(outgoing, key=lambda row: row["link"])
    ]
    return {"anchors": list(anchors.values()), "links": links}


def snapshot(trajectory: Trajectory, part: Part) -> Any:
    if part == "subgoals":
        return [
            subgoal_dict(g)
            for g in Subgoal.objects.filter(trajectory=trajectory).order_by("start", "id")
        ]
    if part == "memory_targets":
        return [
            memory_target_dict(m)
            for m in MemoryTarget.objects.filter(trajectory=trajectory).order_by(
                "encode_step", "key", "id"
            )
        ]
    if part == "anchors":
        return anchors_part(trajectory)
    if part == NOTES:
        metadata = Trajectory.objects.filter(pk=trajectory.pk).values_list("metadata", flat=True)
        return list((metadata.first() or {}).get(NOTES, []))
    if part.startswith("step:"):
        step = Step.objects.get(trajectory=trajectory, index=int(part.removeprefix("step:")))
        return step_dict(step)
    raise ValueError(f"unknown label part {part!r}")


def restore(trajectory: Trajectory, part: Part, value: Any) -> None:
    """Make ``part`` of the trajectory's labels equal to ``value`` (a :func:`snapshot`).

    Called with the trajectory row locked (``notes`` rewrites the metadata).
    """
    if part == "subgoals":
        Subgoal.objects.filter(trajectory=trajectory).delete()
        Subgoal.objects.bulk_create([subgoal_row(trajectory, g, g["id"]) for g in value])
    elif part == "memory_targets":
        MemoryTarget.objects.filter(trajectory=trajectory).delete()
        MemoryTarget.objects.bulk_create([memory_target_row(trajectory, m, m["id"]) for m in value])
    elif part == "anchors":
        Anchor.objects.filter(trajectory=trajectory).delete()
        anchors = Anchor.objects.bulk_create(
            [anchor_row(trajectory, a, a["key"], a["id"]) for a in value["anchors"]]
        )
        ids = {a.key: a.pk for a in anchors}
        AnchorLink.objects.bulk_create([link_row(link, ids, link["id"]) for link in value["links"]])
    elif part == NOTES:
        metadata = Trajectory.objects.get(pk=trajectory.pk).metadata
        metadata[NOTES] = value
        Trajectory.objects.filter(pk=trajectory.pk).update(metadata=metadata)
    elif part.startswith("step:"):
        Step.objects.filter(trajectory=trajectory, index=value["index"]).update(
            **{f: value[f] for f in STEP_FIELDS}
        )
    else:
        raise ValueError(f"unknown label part {part!r}")


def label_parts(trajectory: Trajectory) -> dict[str, Any]:
    """The trajectory's subgoals, memory targets, anchors and links (its labels but the
    steps'), in three queries."""
    return {
        "subgoals": snapshot(trajectory, "subgoals"),
        "memory_targets": snapshot(trajectory, "memory_targets"),
        **anchors_part(trajectory),
    }


def all_labels(trajectory: Trajectory) -> dict[str, Any]:
    """Every label of the trajectory, for the API and for copies."""
    return with_steps(label_parts(trajectory), step_labels(trajectory))


def with_steps(parts: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`label_parts` and :func:`step_labels` as one answer, in the API's order."""
    return {"subgoals": parts["subgoals"], "steps": steps, **parts}


def step_labels(trajectory: Trajectory) -> list[dict[str, Any]]:
    """The labels of each step, by index."""
    steps = Step.objects.filter(trajectory=trajectory).order_by("index")
    return [step_dict(s) for s in steps.only("index", "trajectory_id", *STEP_FIELDS)]
