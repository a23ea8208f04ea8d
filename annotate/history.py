"""The history panel in words: what a label change did, before → after."""

from __future__ import annotations

from typing import Any

from trajectories import events
from trajectories.labels.protocol import label_change_part, part_name
from trajectories.models import AuditEvent

MAX_LINES = 4
KIND_WORDS = {
    events.LABELS_UNDONE: "undid a change",
    events.LABELS_REDONE: "redid a change",
    events.LABELS_REVERTED: "reverted a change",
    events.STEP_UNDONE_LABELS: "took the labels off an undone step",
    events.MEMORY_FROM_ENVIRONMENT: "labelled memory from the device's known variables",
}


def _text(value: Any, size: int = 40) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    text = str(value)
    text = text if len(text) <= size else text[: size - 1] + "…"
    return f"“{text}”" if text else "empty"


def _fields(name: str, before: dict, after: dict, fields: tuple[str, ...]) -> list[str]:
    return [
        f"{name} {field}: {_text(before.get(field))} → {_text(after.get(field))}"
        for field in fields
        if before.get(field) != after.get(field)
    ]


def _steps(g: dict) -> str:
    return f"step {g['start']}" if g["start"] == g["end"] else f"steps {g['start']}–{g['end']}"


def _by_id(before: list[dict], after: list[dict], name, fields: tuple[str, ...]) -> list[str]:
    old = {x["id"]: x for x in before}
    new = {x["id"]: x for x in after}
    lines = [f"removed {name(old[i])}" for i in old if i not in new]
    lines += [f"added {name(new[i])}" for i in new if i not in old]
    for i in old.keys() & new.keys():
        lines += _fields(name(old[i]), old[i], new[i], fields)
    return lines


def change_lines(event: AuditEvent) -> list[str]:
    """What a label change did, in the workspace's words (at most a few lines)."""
    part = label_change_part(event)
    if part is None:
        return []
    before, after = event.before[part], event.after[part]
    if part.startswith("step:"):
        lines = _fields(
            part_name(part), before, after, ("thought", "summary", "memory", "trainable")
        )
    elif part == "subgoals":
        lines = _by_id(
            before,
            after,
            lambda g: f"subgoal {_steps(g)}" + (f" {_text(g['text'], 24)}" if g["text"] else ""),
            ("text", "effect", "behaviour", "success"),
        )
        old = {g["id"]: g for g in before}
        lines += [
            f"subgoal {_steps(old[g['id']])} → {_steps(g)}"
            for g in after
            if g["id"] in old and _steps(old[g["id"]]) != _steps(g)
        ]
    elif part == "memory_targets":
        lines = _by_id(
            before,
            after,
            lambda m: f"memory target “{m['key']}”",
            ("key", "value", "encode_step", "retrieve_steps"),
        )
    elif part == "anchors":
        lines = _by_id(
            before["anchors"],
            after["anchors"],
            lambda a: f"anchor {a['key']} ({a['type'].replace('_', ' ')})",
            ("type", "content", "description"),
        )
        lines += _by_id(
            before["links"],
            after["links"],
            lambda x: f"link {x['source']} {x['relation'].replace('_', ' ')} {x['target']}",
            ("relation", "critical"),
        )
    else:
        lines = [f"{part_name(part)} changed"]
    if len(lines) > MAX_LINES:
        lines = [*lines[: MAX_LINES - 1], f"and {len(lines) - MAX_LINES + 1} more"]
    return lines


def history_entries(changes: list[AuditEvent]) -> list[dict[str, Any]]:
    return [
        {
            "event": e,
            "what": KIND_WORDS.get(e.kind, e.kind.replace("_", " ").replace(".", " ")),
            "lines": change_lines(e),
            "revertable": label_change_part(e) is not None,
        }
        for e in changes
    ]
