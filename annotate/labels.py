"""A trajectory's labels as plain JSON, by part, and how to put a part back.

An edit records the part it touched before and after (a subgoal edit stores all subgoals, a step
edit that step's fields): small enough to keep in every audit event, complete enough that undo
and redo are a restore of one side. Restores keep primary keys, so ids seen by clients survive
an undo.
"""

from __future__ import annotations

from typing import Any

from trajectories.models import Anchor, AnchorLink, MemoryTarget, Step, Subgoal, Trajectory

STEP_FIELDS = ("thought", "summary", "memory", "trainable")
SUBGOAL_FIELDS = ("text", "effect", "behaviour", "success")

Part = str  # "subgoals", "memory_targets", "anchors" or "step:<index>"


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


def step_dict(step: Step) -> dict[str, Any]:
    return {"index": step.index, **{f: getattr(step, f) for f in STEP_FIELDS}}


def anchors_part(trajectory: Trajectory) -> dict[str, Any]:
    anchors = list(Anchor.objects.filter(trajectory=trajectory).order_by("step_index", "id"))
    keys = {a.pk: a.key for a in anchors}
    links = AnchorLink.objects.filter(source__trajectory=trajectory).order_by("id")
    return {
        "anchors": [anchor_dict(a) for a in anchors],
        "links": [link_dict(link, keys) for link in links],
    }


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
    if part.startswith("step:"):
        step = Step.objects.get(trajectory=trajectory, index=int(part.removeprefix("step:")))
        return step_dict(step)
    raise ValueError(f"unknown label part {part!r}")


def restore(trajectory: Trajectory, part: Part, value: Any) -> None:
    """Make ``part`` of the trajectory's labels equal to ``value`` (a :func:`snapshot`)."""
    if part == "subgoals":
        Subgoal.objects.filter(trajectory=trajectory).delete()
        Subgoal.objects.bulk_create(
            [
                Subgoal(
                    pk=g["id"],
                    trajectory=trajectory,
                    start=g["start"],
                    end=g["end"],
                    origin=g["origin"],
                    **{f: g[f] for f in SUBGOAL_FIELDS},
                )
                for g in value
            ]
        )
    elif part == "memory_targets":
        MemoryTarget.objects.filter(trajectory=trajectory).delete()
        MemoryTarget.objects.bulk_create(
            [
                MemoryTarget(
                    pk=m["id"],
                    trajectory=trajectory,
                    key=m["key"],
                    value=m["value"],
                    encode_step=m["encode_step"],
                    evidence=m["evidence"],
                    retrieve_steps=m["retrieve_steps"],
                )
                for m in value
            ]
        )
    elif part == "anchors":
        Anchor.objects.filter(trajectory=trajectory).delete()
        anchors = Anchor.objects.bulk_create(
            [
                Anchor(
                    pk=a["id"],
                    trajectory=trajectory,
                    key=a["key"],
                    step_index=a["step"],
                    type=a["type"],
                    content=a["content"],
                    description=a["description"],
                    evidence=a["evidence"],
                )
                for a in value["anchors"]
            ]
        )
        ids = {a.key: a.pk for a in anchors}
        AnchorLink.objects.bulk_create(
            [
                AnchorLink(
                    pk=link["id"],
                    source_id=ids[link["source"]],
                    target_id=ids[link["target"]],
                    relation=link["relation"],
                    critical=link["critical"],
                )
                for link in value["links"]
            ]
        )
    elif part.startswith("step:"):
        Step.objects.filter(trajectory=trajectory, index=value["index"]).update(
            **{f: value[f] for f in STEP_FIELDS}
        )
    else:
        raise ValueError(f"unknown label part {part!r}")


def all_labels(trajectory: Trajectory) -> dict[str, Any]:
    """Every label of the trajectory, for the API and for copies."""
    steps = Step.objects.filter(trajectory=trajectory).order_by("index")
    return {
        "subgoals": snapshot(trajectory, "subgoals"),
        "steps": [step_dict(s) for s in steps.only("index", "trajectory_id", *STEP_FIELDS)],
        "memory_targets": snapshot(trajectory, "memory_targets"),
        **anchors_part(trajectory),
    }
