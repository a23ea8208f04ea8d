"""What the workspace page shows: one context builder, a constant number of queries.

The filmstrip needs every step (one query with screens and blobs); everything an edit can
change (track, panels, problems, history) needs only the step count and the labels, so an
autosave re-renders without reading the steps.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict
from functools import lru_cache
from typing import Any

from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from trajectories.blobs import read_blob
from trajectories.edits import EDITABLE, undo_state
from trajectories.labels import anchor_dict, memory_target_dict, subgoal_dict
from trajectories.models import (
    Anchor,
    AnchorLink,
    AnchorType,
    AuditEvent,
    Blob,
    MemoryTarget,
    Relation,
    Status,
    Step,
    Subgoal,
    SubgoalSuccess,
    Trajectory,
)
from trajectories.uixml import UIXmlError, parse_ui_xml

from .completeness import problems_of
from .models import ReviewComment
from .permissions import may_edit, may_review

PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#b07aa1",
    "#76b7b2",
    "#edc948",
    "#e15759",
    "#9c755f",
    "#ff9da7",
    "#8cd17d",
]
ANCHOR_LANES = list(AnchorType.values)
RELATION_COLOURS = {
    Relation.PREREQUISITE: "#2458d6",
    Relation.ENABLES: "#067647",
    Relation.RESULT_OF: "#b54708",
    Relation.BLOCKS: "#b42318",
}
HISTORY_SIZE = 15


def screen_elements(blob: Blob) -> tuple[dict[str, Any], ...]:
    """Boxes of a UI XML blob's pickable elements."""
    return _elements_of(blob.sha256, blob.content_type)


@lru_cache(maxsize=256)
def _elements_of(sha256: str, content_type: str) -> tuple[dict[str, Any], ...]:
    # Blobs never change: parse each once per process.
    try:
        tree = parse_ui_xml(read_blob(Blob(sha256=sha256, content_type=content_type, size=0)))
    except (UIXmlError, OSError):
        return ()
    interactable = {el.path for el in tree.interactable()}
    found = []
    for el in tree.elements:
        if el.area <= 0 or el.depth == 0:
            continue
        acts = el.path in interactable
        if not acts and not (el.text or el.content_desc):
            continue
        found.append(
            {
                "bounds": list(el.bounds),
                "x": el.bounds[0],
                "y": el.bounds[1],
                "w": el.width,
                "h": el.height,
                "interactable": acts,
                "target": json.dumps(el.to_target(), ensure_ascii=False),
                "title": "\n".join(
                    f"{k}: {v}"
                    for k, v in (
                        ("class", el.class_name),
                        ("resource-id", el.resource_id),
                        ("text", el.text),
                        ("content-desc", el.content_desc),
                        ("bounds", list(el.bounds)),
                        ("clickable", el.clickable),
                    )
                    if v not in ("", None)
                ),
            }
        )
    # Small elements last, so they are on top and get the pointer.
    found.sort(key=lambda e: -(e["w"] * e["h"]))
    return tuple(found)


ELEMENT_RECT = (
    '<rect class="el{}" x="{}" y="{}" width="{}" height="{}" data-target="{}">'
    "<title>{}</title></rect>"
)


@lru_cache(maxsize=256)
def _elements_svg(sha256: str, content_type: str) -> SafeString:
    # The boxes of a screen are the same on every visit: draw their markup once per process
    # (a dump has dozens of elements; rendering them through the template cost every request).
    return format_html_join(
        "",
        ELEMENT_RECT,
        (
            (
                " act" if e["interactable"] else "",
                e["x"],
                e["y"],
                e["w"],
                e["h"],
                e["target"],
                e["title"],
            )
            for e in _elements_of(sha256, content_type)
        ),
    )


def track_of(
    step_count: int,
    subgoals: list[dict],
    memory: list[dict],
    anchors: list[dict],
    comments: list[ReviewComment],
) -> list[dict[str, Any]]:
    """One cell per step: its subgoal (colour), markers for memory, anchors and comments."""
    cells = [
        {"index": i, "subgoal": None, "colour": "", "first": False, "last": False, "marks": ""}
        for i in range(step_count)
    ]
    for n, g in enumerate(subgoals):
        for i in range(g["start"], min(g["end"], step_count - 1) + 1):
            cells[i].update(subgoal=g, colour=PALETTE[n % len(PALETTE)])
        if g["start"] < step_count:
            cells[g["start"]]["first"] = True
        if g["end"] < step_count:
            cells[g["end"]]["last"] = True
    marks: dict[int, list[str]] = defaultdict(list)
    for m in memory:
        marks[m["encode_step"]].append("E")
        for r in m["retrieve_steps"]:
            marks[r].append("R")
    for a in anchors:
        marks[a["step"]].append("◆")
    for c in comments:
        if c.step_index is not None and not c.resolved:
            marks[c.step_index].append("✎")
    for i, found in marks.items():
        if 0 <= i < step_count:
            cells[i]["marks"] = "".join(sorted(set(found)))
    return cells


def anchor_graph(step_count: int, anchors: list[dict], links: list[dict]) -> dict[str, Any]:
    """Positions for the anchor graph: x by step, one lane per anchor type."""
    width, lane, pad = 640, 22, 16
    span = max(step_count - 1, 1)
    nodes, at = [], {}
    for a in anchors:
        x = 90 + (width - 90 - pad) * a["step"] / span
        y = pad + lane * ANCHOR_LANES.index(a["type"])
        at[a["key"]] = (x, y)
        nodes.append({**a, "x": round(x, 1), "y": round(y, 1)})
    edges = []
    for link in links:
        if link["source"] not in at or link["target"] not in at:
            continue
        (x1, y1), (x2, y2) = at[link["source"]], at[link["target"]]
        bend = -18 if x2 >= x1 else 18
        edges.append(
            {
                **link,
                "path": f"M{x1:.1f},{y1:.1f} Q{(x1 + x2) / 2:.1f},{min(y1, y2) + bend:.1f} "
                f"{x2:.1f},{y2:.1f}",
                "colour": RELATION_COLOURS.get(link["relation"], "#667085"),
            }
        )
    lanes = [
        {"name": t.replace("_", " "), "y": pad + lane * i + 4} for i, t in enumerate(ANCHOR_LANES)
    ]
    return {
        "width": width,
        "height": pad * 2 + lane * (len(ANCHOR_LANES) - 1),
        "nodes": nodes,
        "edges": edges,
        "lanes": lanes,
    }


def labels_context(trajectory: Trajectory, index: int, user, role: str | None) -> dict[str, Any]:
    """Everything an edit can change, for the selected step ``index``."""
    n = trajectory.step_count
    subgoals = [
        subgoal_dict(g)
        for g in Subgoal.objects.filter(trajectory=trajectory).order_by("start", "id")
    ]
    for i, g in enumerate(subgoals):
        g["colour"] = PALETTE[i % len(PALETTE)]
    memory = [
        memory_target_dict(m)
        for m in MemoryTarget.objects.filter(trajectory=trajectory).order_by(
            "encode_step", "key", "id"
        )
    ]
    anchors = [
        anchor_dict(a)
        for a in Anchor.objects.filter(trajectory=trajectory).order_by("step_index", "id")
    ]
    keys = {a["id"]: a["key"] for a in anchors}
    links = [
        {
            "id": x.pk,
            "source": keys[x.source_id],
            "target": keys[x.target_id],
            "relation": x.relation,
            "critical": x.critical,
        }
        for x in AnchorLink.objects.filter(source__trajectory=trajectory).order_by("id")
    ]
    comments = list(ReviewComment.objects.filter(trajectory=trajectory).select_related("author"))
    history = list(
        AuditEvent.objects.filter(trajectory=trajectory).select_related("actor")[:HISTORY_SIZE]
    )
    problems = [asdict(p) for p in problems_of(n, subgoals, memory, anchors, links)]
    editable = trajectory.status in EDITABLE and may_edit(user, trajectory, role)
    current = next((g for g in subgoals if g["start"] <= index <= g["end"]), None)
    for m in memory:
        m["retrieve_text"] = ", ".join(str(r) for r in m["retrieve_steps"])
        m["here"] = (
            "encoded"
            if m["encode_step"] == index
            else ("retrieved" if index in m["retrieve_steps"] else "")
        )
        m["evidence_json"] = json.dumps(m["evidence"])
    return {
        "trajectory": trajectory,
        "index": index,
        "step_count": n,
        "subgoals": subgoals,
        "current_subgoal": current,
        "memory_targets": memory,
        "anchors": anchors,
        "anchors_here": [a for a in anchors if a["step"] == index],
        "links": links,
        "comments": comments,
        "comments_here": [c for c in comments if c.step_index == index],
        "history": history,
        "problems": problems,
        "track": track_of(n, subgoals, memory, anchors, comments),
        "graph": anchor_graph(n, anchors, links),
        "can_edit": editable,
        "may_edit": may_edit(user, trajectory, role),
        "can_review": may_review(role) and trajectory.status == Status.IN_REVIEW,
        "can_reopen": may_review(role) and trajectory.status in (Status.APPROVED, Status.REJECTED),
        "role": role,
        "anchor_types": AnchorType.choices,
        "relations": Relation.choices,
        "successes": SubgoalSuccess.choices,
        **undo_state(trajectory),
    }


def step_context(
    trajectory: Trajectory,
    index: int,
    labels: dict[str, Any],
    steps: list[Step] | None = None,
) -> dict[str, Any]:
    """The selected step with its screen, XML boxes and evidence boxes.

    ``steps``, when the page has read them all (with screens and blobs), spares a query.
    """
    if steps is not None:
        step = next((s for s in steps if s.index == index), None)
    else:
        step = (
            Step.objects.filter(trajectory=trajectory, index=index)
            .select_related("screen__screenshot", "screen__ui_xml")
            .first()
        )
    xml = step.screen.ui_xml if step and step.screen.ui_xml_id else None
    elements = screen_elements(xml) if xml else ()
    elements_svg = _elements_svg(xml.sha256, xml.content_type) if xml else ""
    evidence = []
    for m in labels["memory_targets"]:
        if m["encode_step"] == index and m["evidence"].get("bounds"):
            evidence.append(
                {"label": m["key"], "kind": "memory", "bounds": m["evidence"]["bounds"]}
            )
    for a in labels["anchors_here"]:
        if a["evidence"].get("bounds"):
            evidence.append(
                {"label": a["key"], "kind": "anchor", "bounds": a["evidence"]["bounds"]}
            )
    for e in evidence:
        x1, y1, x2, y2 = e["bounds"]
        e.update(x=x1, y=y1, w=x2 - x1, h=y2 - y1)
    return {
        "step": step,
        "elements": elements,
        "elements_svg": elements_svg,
        "evidence_boxes": evidence,
    }
