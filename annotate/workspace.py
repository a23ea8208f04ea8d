"""What the workspace page shows: one context builder, a constant number of queries.

The filmstrip needs every step (one query with screens and the type of their UI XML);
everything an edit can change (track, panels, problems, history) needs only the step count and
the labels, so an autosave re-renders without reading the steps. The page itself is the
templates in annotate/templates/annotate/ (workspace.html and the parts htmx swaps in).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from django.urls import reverse

from trajectories.blobs import read_blob
from trajectories.labels.protocol import EDITABLE, undo_state
from trajectories.models import (
    Anchor,
    AnchorLink,
    AnchorType,
    AuditEvent,
    Blob,
    MemoryTarget,
    Relation,
    Screen,
    Status,
    Step,
    Subgoal,
    SubgoalSuccess,
    Trajectory,
)
from trajectories.selectors import STEP_ROW_FIELDS
from trajectories.uixml import UIXmlError, parse_ui_xml

from .completeness import problems_of
from .history import history_entries
from .models import Proposal, ProposalStatus, ReviewComment
from .permissions import assignment_of, may_edit, may_review
from .queues import next_item
from .services.proposals import PART_NAMES

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
# The choices the forms offer (an enum builds its list anew on every ``.choices``).
ANCHOR_TYPES = AnchorType.choices
RELATIONS = Relation.choices
SUCCESSES = SubgoalSuccess.choices
HISTORY_SIZE = 15
# What the history panel shows of an event (annotate.history): who, when, what it changed.
HISTORY_FIELDS = ("at", "kind", "before", "after", "actor__username")


def screen_elements(blob: Blob | PageBlob) -> tuple[dict[str, Any], ...]:
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
    width, lane, pad = 640, 28, 16
    span = max(step_count - 1, 1)
    nodes, at = [], {}
    for a in anchors:
        x = 90 + (width - 90 - pad) * a["step"] / span
        y = pad + lane * ANCHOR_LANES.index(a["type"])
        at[a["key"]] = (x, y)
        content = a["content"] if len(a["content"]) <= 18 else a["content"][:17] + "…"
        # Labels of the right-most anchors go to their left, inside the graph.
        left = x > width - 130
        nodes.append(
            {**a, "x": round(x, 1), "y": round(y, 1), "label": content, "label_left": left}
        )
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


def labels_context(
    trajectory: Trajectory, index: int, user, role: str | None, labels: dict[str, Any]
) -> dict[str, Any]:
    """Everything an edit can change, for the selected step ``index``; ``labels`` as dicts of
    trajectories.labels.parts (subgoal_dict, ...), kept by the version read
    (:func:`~trajectories.labels.cache.kept_at_version`), the caller's to change."""
    n = trajectory.step_count
    subgoals, memory = labels["subgoals"], labels["memory_targets"]
    anchors, links = labels["anchors"], labels["links"]
    for i, g in enumerate(subgoals):
        g["colour"] = PALETTE[i % len(PALETTE)]
    comments = (
        []
        if trajectory.__dict__.get("has_comments") is False  # known to have none
        else list(
            ReviewComment.objects.filter(trajectory_id=trajectory.pk).select_related(
                "author", "resolved_by"
            )
        )
    )
    history = (
        AuditEvent.objects.filter(trajectory_id=trajectory.pk)
        .select_related("actor")
        .only(*HISTORY_FIELDS)[:HISTORY_SIZE]
    )
    problems = [asdict(p) for p in problems_of(n, subgoals, memory, anchors, links)]
    editable = can_edit_labels(trajectory, user, role)
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
        "history": history_entries(history),
        "problems": problems,
        "track": track_of(n, subgoals, memory, anchors, comments),
        "graph": anchor_graph(n, anchors, links),
        "can_edit": editable,
        "may_edit": may_edit(user, trajectory, role),
        "can_review": may_review(role) and trajectory.status == Status.IN_REVIEW,
        "can_reopen": may_review(role) and trajectory.status in (Status.APPROVED, Status.REJECTED),
        "can_resolve": may_edit(user, trajectory, role) or may_review(role),
        "open_comments": sum(1 for c in comments if not c.resolved),
        "role": role,
        **_next_context(trajectory, user, role),
        "anchor_types": ANCHOR_TYPES,
        "relations": RELATIONS,
        "successes": SUCCESSES,
        **undo_state(trajectory),
        **proposal_context(trajectory, index),
    }


def can_edit_labels(trajectory: Trajectory, user, role: str | None) -> bool:
    """Whether the page offers ``user`` its edits: an editor, while the labels are editable."""
    return trajectory.status in EDITABLE and may_edit(user, trajectory, role)


def proposal_panel_context(
    trajectory: Trajectory, index: int, user, role: str | None
) -> dict[str, Any]:
    """What the proposals panel and track show alone (the panel polls it while a proposal is
    being made)."""
    return {
        "trajectory": trajectory,
        "index": index,
        "step_count": trajectory.step_count,
        "can_edit": can_edit_labels(trajectory, user, role),
        **proposal_context(trajectory, index),
    }


def proposal_context(trajectory: Trajectory, index: int) -> dict[str, Any]:
    """The newest proposal with items still to decide (or the newest failed one), as a track
    of proposed subgoals and a list of pending items; the items on step ``index`` first, the
    first of them marked (the one the keys y and x act on until another is marked)."""
    proposals = (
        []
        if trajectory.__dict__.get("has_proposals") is False  # known to have none
        else list(
            Proposal.objects.filter(trajectory_id=trajectory.pk).order_by("-created_at", "-id")
        )
    )
    open_ = next(
        (
            p
            for p in proposals
            if p.status == ProposalStatus.PENDING
            and p.payload
            and any(
                str(i) not in p.decisions.get(part, {})
                for part in PART_NAMES
                for i in range(len(p.payload.get(part, [])))
            )
        ),
        None,
    )
    asked = next((p for p in proposals if p.status == ProposalStatus.PENDING), None)
    failed = next((p for p in proposals if p.status == ProposalStatus.FAILED), None)
    decided = next((p for p in proposals if p.decided_at is not None), None)
    context: dict[str, Any] = {
        "proposal": open_,
        "proposal_decided": decided if open_ is None else None,
        "proposal_waiting": asked if open_ is None and asked and not asked.payload else None,
        "proposal_failed": failed if open_ is None else None,
    }
    if open_ is None:
        return context
    items = []
    for part, name in PART_NAMES.items():
        decided = open_.decisions.get(part, {})
        for i, item in enumerate(open_.payload.get(part, [])):
            if str(i) in decided:
                continue
            if part == "subgoals":
                steps = range(item["start"], item["end"] + 1)
                label = f"{item['start']}–{item['end']} {item.get('text', '')}"
                editable = ("text", item.get("text", ""))
            elif part == "memory_targets":
                steps = [item["encode_step"], *item["retrieve_steps"]]
                label = f"{item['key']} = {item['value']} (step {item['encode_step']} → "
                label += ", ".join(str(r) for r in item["retrieve_steps"]) + ")"
                editable = ("value", item["value"])
            else:
                steps = [item["step"]]
                label = f"step {item['step']} {item['type']}: {item['content']}"
                editable = ("content", item["content"])
            items.append(
                {
                    "id": f"{part}:{i}",
                    "dom": f"{part}-{i}",
                    "kind": name,
                    "label": label,
                    "field": editable[0],
                    "value": editable[1],
                    "here": index in steps,
                    "marked": False,
                }
            )
    items.sort(key=lambda it: not it["here"])
    if items and items[0]["here"]:
        items[0]["marked"] = True
    cells = []
    pending_subgoals = [
        (i, g)
        for i, g in enumerate(open_.payload.get("subgoals", []))
        if str(i) not in open_.decisions.get("subgoals", {})
    ]
    for step in range(trajectory.step_count):
        found = next(((i, g) for i, g in pending_subgoals if g["start"] <= step <= g["end"]), None)
        cells.append(
            {
                "index": step,
                "item": f"subgoals:{found[0]}" if found else "",
                "first": bool(found) and found[1]["start"] == step,
                "text": found[1].get("text", "") if found else "",
                "range": f"{found[1]['start']}–{found[1]['end']}" if found else "",
            }
        )
    context.update(proposal_items=items, proposal_track=cells)
    return context


def _next_context(trajectory: Trajectory, user, role: str | None) -> dict[str, Any]:
    """Once the user's part is done (submitted, or reviewed), the next item of their queue."""
    if trajectory.status == Status.IN_REVIEW:
        if not assignment_of(trajectory, user)[1]:  # known, or read once for the page
            return {"show_next": False}
        reviewing = False
    elif trajectory.status in (Status.APPROVED, Status.REJECTED) and may_review(role):
        reviewing = True
    else:
        return {"show_next": False}
    return {"show_next": True, "next_item": next_item(user, trajectory, reviewing)}


@dataclass(frozen=True, slots=True)
class PageBlob:
    """A UI XML blob as the page names it: its key and type."""

    sha256: str
    content_type: str


@dataclass(frozen=True, slots=True)
class PageScreen:
    """A screen as the page draws it."""

    width: int
    height: int
    screenshot_id: str
    ui_xml: PageBlob | None

    @property
    def screenshot(self) -> Blob:
        return Blob(sha256=self.screenshot_id)

    @property
    def ui_xml_id(self) -> str | None:
        """The UI XML's key, as a Screen names it."""
        return self.ui_xml.sha256 if self.ui_xml is not None else None


@dataclass(frozen=True, slots=True)
class PageStep:
    """A step as the page shows it (what a Step has of it, with its screen): a dozen of them
    on every load, where model instances cost more than the query that read them."""

    index: int
    action_type: str
    action: dict[str, Any]
    target: dict[str, Any] | None
    thought: str
    summary: str
    memory: str
    trainable: bool
    screen: PageScreen

    __str__ = Step.__str__


def page_steps(rows: list[dict[str, Any]]) -> list[PageStep]:
    """The trajectory's steps as the page shows them, from the rows of
    :func:`~trajectories.selectors.step_rows` (as kept by
    :func:`~trajectories.labels.cache.kept_at_version`)."""
    return [_page_step(row) for row in rows]


def _page_step(row: dict[str, Any]) -> PageStep:
    xml, xml_type = row["ui_xml_id"], row["ui_xml_type"]
    screen = PageScreen(
        row["width"],
        row["height"],
        row["screenshot_id"],
        PageBlob(xml, xml_type) if xml is not None else None,
    )
    return PageStep(*(row[name] for name in STEP_ROW_FIELDS), screen)


def step_context(
    trajectory: Trajectory, index: int, labels: dict[str, Any], steps: list[PageStep]
) -> dict[str, Any]:
    """The selected step with its screen, XML boxes and evidence boxes (``steps``: all the
    trajectory's, from :func:`page_steps`)."""
    step = next((s for s in steps if s.index == index), None)
    xml = step.screen.ui_xml if step and step.screen.ui_xml_id else None
    elements = screen_elements(xml) if xml else ()
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
    after = _screen_after(trajectory, index, steps) if step else None
    return {
        "step": step,
        "screen_url": reverse("blob", args=[step.screen.screenshot_id]) if step else "",
        "after_screen": after,
        "after_url": reverse("blob", args=[after.screenshot_id]) if after else "",
        "elements": elements,
        "evidence_boxes": evidence,
    }


def _screen_after(
    trajectory: Trajectory, index: int, steps: list[PageStep]
) -> PageScreen | Screen | None:
    """The screen step ``index`` led to: the next step's (``steps`` holds it when there is
    one), or the trajectory's final one."""
    following = next((s for s in steps if s.index == index + 1), None)
    if following is not None:
        return following.screen
    if trajectory.final_screen_id is None:
        return None
    return (
        Screen.objects.filter(pk=trajectory.final_screen_id)
        .only("width", "height", "screenshot")
        .first()
    )


# What each form field is called on the page, for naming a change that was not saved.
FIELD_NAMES = {
    "text": "intent",
    "effect": "effect",
    "behaviour": "behaviour",
    "success": "success",
    "thought": "thought",
    "summary": "summary",
    "memory": "memory",
    "trainable": "trainable",
    "key": "key",
    "value": "value",
    "retrieve_steps": "needed at steps",
    "type": "type",
    "content": "content",
    "description": "description",
    "relation": "relation",
    "critical": "critical",
    "comment": "comment",
    "decision": "decision",
    "start": "from step",
    "end": "to step",
}


def _steps_text(start: int, end: int) -> str:
    return f"step {start}" if start == end else f"steps {start}–{end}"


def subgoal_name(trajectory: Trajectory, subgoal_id: Any) -> str:
    """A subgoal as the annotator sees it: its place on the track and its steps."""
    ranges = list(
        Subgoal.objects.filter(trajectory=trajectory)
        .order_by("start", "id")
        .values_list("pk", "start", "end")
    )
    for n, (pk, start, end) in enumerate(ranges, start=1):
        if str(pk) == str(subgoal_id):
            return f"subgoal {n} ({_steps_text(start, end)})"
    return "a subgoal that has since been removed"


def _thing(trajectory: Trajectory, op: str, post) -> tuple[str, tuple[str, ...]]:
    """What an edit was about, in the page's words, and the fields that only identify it."""
    step = post.get("step", "")
    if op in ("subgoal", "merge", "delete_subgoal", "boundary"):
        verb = {"merge": "merge ", "delete_subgoal": "delete ", "boundary": "move "}.get(op, "")
        return verb + subgoal_name(trajectory, post.get("subgoal")), ("subgoal",)
    if op == "split":
        return f"split at step {post.get('at', step)}", ("at",)
    if op == "step":
        return f"step {step}", ("trainable_present",)
    if op in ("memory_update", "memory_toggle", "memory_delete"):
        target = MemoryTarget.objects.filter(
            trajectory=trajectory, pk=_pk(post.get("target"))
        ).first()
        name = f"memory target “{target.key}”" if target else "a removed memory target"
        verb = {"memory_toggle": f"needed at step {step}: ", "memory_delete": "delete "}
        return verb.get(op, "") + name, ("target",)
    if op == "memory_add":
        return f"new memory target at step {step}", ()
    if op in ("anchor_update", "anchor_delete"):
        return ("delete " if op == "anchor_delete" else "") + f"anchor {post.get('key')}", ("key",)
    if op == "anchor_add":
        return f"new anchor at step {step}", ("evidence",)
    if op == "link_add":
        return f"new link {post.get('source')} → {post.get('target')}", ("source", "target")
    if op == "link_delete":
        link = (
            AnchorLink.objects.filter(source__trajectory=trajectory, pk=_pk(post.get("link")))
            .select_related("source", "target")
            .first()
        )
        name = f"link {link.source.key} {link.relation} {link.target.key}" if link else "a link"
        return f"delete {name}", ("link",)
    return op.replace("_", " "), ()


def _pk(raw: Any) -> int | None:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


def _stored_fields(trajectory: Trajectory, op: str, post) -> dict[str, str]:
    """The stored text of an autosaved form's fields: a form sends them all, the message
    names only the ones the annotator changed."""
    if op == "subgoal":
        found = Subgoal.objects.filter(trajectory=trajectory, pk=_pk(post.get("subgoal")))
        return _first(found, "text", "effect", "behaviour", "success")
    if op == "step":
        found = Step.objects.filter(trajectory=trajectory, index=_pk(post.get("step")))
        return _first(found, "thought", "summary", "memory")
    if op == "memory_update":
        found = MemoryTarget.objects.filter(trajectory=trajectory, pk=_pk(post.get("target")))
        return _first(found, "key", "value")
    if op == "anchor_update":
        found = Anchor.objects.filter(trajectory=trajectory, key=post.get("key"))
        return _first(found, "type", "content", "description")
    return {}


def _first(queryset, *fields: str) -> dict[str, str]:
    row = queryset.values(*fields).first() or {}
    return {k: "" if v is None else str(v) for k, v in row.items()}


def describe_edit(trajectory: Trajectory, op: str, post) -> str:
    """A refused edit in the annotator's terms, e.g. ``subgoal 2 (steps 3–5): intent “Pay”``."""
    thing, ids = _thing(trajectory, op, post)
    hidden = {"csrfmiddlewaretoken", "version", "step", "evidence", *ids}
    stored = _stored_fields(trajectory, op, post)
    changes = [
        FIELD_NAMES.get(k, k.replace("_", " ")) + ("" if v == "on" else f" “{v[:200]}”")
        for k, v in post.items()
        if k not in hidden and v and stored.get(k) != v
    ]
    if post.get("evidence"):
        changes.append("the evidence picked on the screen")
    return f"{thing}: {', '.join(changes)}" if changes else thing
