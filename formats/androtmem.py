"""``androtmem``: AndroTMem-Bench ground truth, laid out so its released scorer accepts it.

One task record per trajectory (``task_id`` is the trajectory's id), in ``<split>.jsonl``:
``instruction_en``, ``primary_intent`` (AndroTMem's intent names), and ``steps[]`` with
``step_index``, ``image_name`` (``images/<sha256>.png``, relative to the export folder, which
is the image root: a screenshot shared by steps is stored once),
``actionForm`` (``action``, pixel ``bbox`` of the target element, ``value``, ``direction``),
the step's anchors in ``extra_info.status`` and the links into them in ``extra_info.links``
(``source`` is the id of the source anchor, ``type`` the relation, ``is_critical``).
Beside what AndroTMem reads, each record carries what Waypoint's evaluator also scores: the
screenshot size of each step (to place GUI-Owl's 0-1000 predictions), the memory targets
(M-Acc) and the gold answer with its grading rule (task success).

The scorer finds a link's ``source`` among every step's aliases (its index, its ``step_id``)
and anchor ids alike; when an anchor id of a record is also a step alias (an imported anchor
named ``1``, say), every anchor id of that record is written as ``anchor:<id>``.

A task imported from AndroTMem's own files (``metadata["androtmem"]``, see
:mod:`formats.androtmem_import`) keeps its ``task_id``, and its anchors and links are written
as the dataset drew them: neither of the two additions below is made to it.

The scorer finds the final completion step by an anchor whose content contains "finish" (in
any case); a Waypoint ``finish`` anchor whose content does not say so gets ``finish: `` put in
front. When the scorer's final step (the last with a finish anchor or a ``finish`` action:
a recording's ``terminate`` step) comes after the last finish anchor, it gets a critical
``prerequisite`` link from that anchor, so TCR follows the chain the annotator drew. ``key``
and ``enter`` steps have no AndroTMem type: they keep their Waypoint name, and
the scorer (like Waypoint's evaluator) never credits them; the dataset card counts them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from trajectories.models import Intent, Trajectory

from .dataset import (
    NO_APP,
    DatasetWriter,
    ExportRun,
    Split,
    card_counts,
    check_memory_graph_option,
    check_plain_options,
    describe_filter,
    record_apps,
)
from .waypoint import iter_records

FORMAT = "androtmem"
SCHEMA_VERSION = 1
INTENT_NAMES = dict(Intent.choices)

# Canonical types AndroTMem's vocabulary has no word for: kept under their own name.
UNMAPPED = ("key", "enter")


def swipe_direction(action: dict[str, Any]) -> str:
    """The direction the finger moves: the larger of the horizontal and vertical travel."""
    dx, dy = action["x2"] - action["x"], action["y2"] - action["y"]
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def action_form(action: dict[str, Any], target: dict[str, Any] | None) -> dict[str, Any]:
    """A canonical action in AndroTMem's ``actionForm`` (pixel bbox of the target element)."""
    kind = action["type"]
    form: dict[str, Any] = {
        "action": kind,
        "bbox": None,
        "point": None,
        "value": "",
        "direction": "",
    }
    if kind in ("click", "long_press"):
        form["action"] = "tap" if kind == "click" else "long_press"
        bounds = (target or {}).get("bounds")
        # Without a resolved element the tap point itself is the (empty) box.
        form["bbox"] = (
            list(bounds) if bounds else [action["x"], action["y"], action["x"], action["y"]]
        )
        form["point"] = [action["x"], action["y"]]
    elif kind == "swipe":
        form["direction"] = swipe_direction(action)
    elif kind == "type":
        form["action"] = "text"
        form["value"] = action["text"]
    elif kind == "open_app":
        form["value"] = action.get("app_label") or action["package"]
    elif kind in ("answer", "terminate"):
        form["action"] = "finish"
        form["value"] = action["text"] if kind == "answer" else action["status"]
    elif kind == "key":
        form["value"] = action["keycode"]
    return form


def _finish_content(anchor: dict[str, Any]) -> str:
    content = anchor["content"]
    if anchor["type"] == "finish" and "finish" not in content.lower():
        return f"finish: {content}" if content else "finish"
    return content


def _link_final_step_to_finish_anchor(
    steps: list[dict[str, Any]], anchors: list[dict[str, Any]], anchor_id: Callable[[str], str]
) -> None:
    """Make the scorer's final step lead to the chain the annotator drew.

    The scorer takes the last step with a finish anchor or a ``finish`` action as the final
    one; a recording ends with its ``terminate`` step (a ``finish`` action), which comes after
    the step where the annotator put the finish anchor. That step gets a critical
    ``prerequisite`` link from the last finish anchor, so the closure runs through it and its
    critical links, not through the terminate step alone.
    """
    finish = [a for a in anchors if a["type"] == "finish"]
    if not finish or not steps:
        return
    last = max(finish, key=lambda a: a["step"])
    final = next(
        (
            s
            for s in reversed(steps)
            if s["actionForm"]["action"] == "finish"
            or any("finish" in a["content"].lower() for a in s["extra_info"]["status"])
        ),
        steps[-1],
    )
    if final["step_index"] <= last["step"]:
        return
    final["extra_info"]["links"].append(
        {
            "source": anchor_id(last["id"]),
            "target": final["step_id"],
            "type": "prerequisite",
            "is_critical": True,
        }
    )


def check_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """parquet, and memory_graph: a graph version whose memory block each step gets."""
    options = dict(options or {})
    version = check_memory_graph_option(options.pop("memory_graph", None))
    return {**check_plain_options(FORMAT, options), "memory_graph": version}


def task_record(
    record: dict[str, Any],
    image_of: Callable[[str], str],
    memory_blocks: dict[int, str] | None = None,
) -> dict[str, Any]:
    """The AndroTMem task record of a native record; ``image_of(blob)`` copies an image;
    ``memory_blocks`` (by step index) become each step's ``memory_block``."""
    # A task imported from AndroTMem's own files keeps its task_id and its links as drawn.
    imported = record["metadata"].get(FORMAT) or {}
    task_id = imported.get("task_id") or record["id"]
    as_drawn = bool(imported.get("as_drawn"))
    step_aliases = {str(s["index"]) for s in record["steps"]}
    step_aliases |= {f"{task_id}/{s['index']}" for s in record["steps"]}
    qualify = any(a["id"] in step_aliases for a in record["anchors"])

    def anchor_id(key: str) -> str:
        return f"anchor:{key}" if qualify else key

    anchors_at: dict[int, list[dict]] = {}
    step_of_anchor = {}
    for anchor in record["anchors"]:
        anchors_at.setdefault(anchor["step"], []).append(anchor)
        step_of_anchor[anchor["id"]] = anchor["step"]
    links_into: dict[int, list[dict]] = {}
    for link in record["anchor_links"]:
        step = step_of_anchor.get(link["target"])
        if step is not None:
            links_into.setdefault(step, []).append(link)
    steps = []
    for step in record["steps"]:
        index = step["index"]
        screen = record["screens"][step["screen"]]
        name = image_of(screen["screenshot"])
        steps.append(
            {
                "step_index": index,
                "step_id": f"{task_id}/{index}",
                "image_name": name,
                "width": screen["width"],
                "height": screen["height"],
                "summary": step["summary"],
                **(
                    {"memory_block": memory_blocks.get(index, "")}
                    if memory_blocks is not None
                    else {}
                ),
                "actionForm": action_form(step["action"], step["target"]),
                "extra_info": {
                    "status": [
                        {
                            "id": anchor_id(a["id"]),
                            "type": a["type"],
                            "content": a["content"] if as_drawn else _finish_content(a),
                            "content_en": a["content"] if as_drawn else _finish_content(a),
                            "description": a["description"],
                            "description_en": a["description"],
                            "evidence": a["evidence"],
                        }
                        for a in anchors_at.get(index, [])
                    ],
                    "links": [
                        {
                            "source": anchor_id(link["source"]),
                            "target": anchor_id(link["target"]),
                            "type": link["relation"],
                            "is_critical": link["critical"],
                        }
                        for link in links_into.get(index, [])
                    ],
                },
            }
        )
    if not as_drawn:
        _link_final_step_to_finish_anchor(steps, record["anchors"], anchor_id)
    task = record["task"]
    device = record["metadata"].get("virtual_device") or {}
    out = {
        "task_id": task_id,
        "task_uid": task["id"],
        # The template an instance is made from, and its seed: episodes of one template at
        # several seeds are the attempts pass@k counts.
        "task_template": record["metadata"].get("virtual_task") or task["id"],
        "seed": device.get("seed"),
        "instruction_en": task["goal"],
        "instruction": task["goal"],
        # The apps it was about: the task's, else the ones it used (the evaluator's by_app).
        "apps": [app for app in record_apps(record) if app != NO_APP],
        "gold_answer": task["gold_answer"],
        "grading_rule": task["grading_rule"],
        "memory_targets": [
            {"key": m["key"], "value": m["value"], "encode_step": m["encode_step"]}
            for m in record["memory_targets"]
        ],
        "steps": steps,
    }
    if task["intent"]:
        out["primary_intent"] = INTENT_NAMES.get(task["intent"], task["intent"])
    return out


def export_androtmem(
    trajectories: QuerySet[Trajectory],
    dest: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    options: dict[str, Any] | None = None,
    filters: dict[str, Any] | None = None,
    split: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the trajectories as AndroTMem-Bench task records into the new folder ``dest``."""
    opts = check_options(options)
    division = Split.parse(split, "test")
    step_memory = None
    if opts["memory_graph"] is not None:
        from graphs.exports import StepMemory

        step_memory = StepMemory(trajectories, opts["memory_graph"])
    run = ExportRun(division, trajectories, progress)
    unmapped: Counter = Counter()
    no_element = 0
    counts = {"trajectories": 0, "steps": 0, "anchors": 0, "links": 0, "images": 0}
    with DatasetWriter(
        dest, FORMAT, SCHEMA_VERSION, splits=division.names, parquet=opts["parquet"]
    ) as writer:
        for name, record in run.records(iter_records(trajectories, lean=True)):
            blocks = step_memory.blocks(record) if step_memory else None
            task = task_record(record, writer.image, blocks)
            writer.write(name, task)
            for step in task["steps"]:
                form = step["actionForm"]
                if form["action"] in UNMAPPED:
                    unmapped[form["action"]] += 1
                if (
                    form["bbox"]
                    and form["bbox"][0] == form["bbox"][2]
                    and form["bbox"][1] == form["bbox"][3]
                ):
                    no_element += 1
            run.per_split[name]["tasks"] += 1
            run.count_apps(record, name)
            counts["trajectories"] += 1
            counts["steps"] += len(record["steps"])
            counts["anchors"] += len(record["anchors"])
            counts["links"] += len(record["anchor_links"])
        counts["images"] = writer.images_written
        counts["splits"] = writer.counts_per_split()
        counts["unmapped_actions"] = dict(sorted(unmapped.items()))
        card = _card(counts, run.per_split, run.apps, filters, division, no_element)
        writer.finish(run.head(opts, filters), counts, card)
    run.finished()
    return counts


def _card(counts, per_split, apps, filters, division, no_element) -> str:
    files = ", ".join(f'"{n}": "{n}.jsonl"' for n in division.names)
    unmapped = counts["unmapped_actions"]
    unmapped_text = (
        "; ".join(f"{n} `{kind}` step(s)" for kind, n in unmapped.items())
        + " keep their Waypoint name as `action`: AndroTMem has no such type, and its scorer "
        "scores such a step 0 whatever is predicted"
        if unmapped
        else "none"
    )
    return f"""# Waypoint export: androtmem

AndroTMem-Bench ground truth: one task record per trajectory with its steps' `actionForm`,
anchors (`extra_info.status`) and incoming causal links (`extra_info.links`), laid out so
AndroTMem's released evaluation code reads it (use this folder as the image root).

- Tasks (trajectories): {counts["trajectories"]}, steps: {counts["steps"]},
  anchors: {counts["anchors"]}, links: {counts["links"]}, images: {counts["images"]}.
- Selection: {describe_filter(filters)}.
- Split: by {division.by}, seed {division.seed}, ratios {dict(division.ratios)}.
- Actions: click -> `tap`, type -> `text`, answer/terminate -> `finish`, swipe direction is the
  way the finger moves; `bbox` is the target element's bounds in screenshot pixels.
- Taps with no resolved target element (their bbox is the tap point): {no_element}.
- Actions outside AndroTMem's vocabulary: {unmapped_text}.

## Counts

{card_counts(per_split, apps, "tasks")}

## Loading

```python
from datasets import load_dataset
ds = load_dataset("json", data_files={{{files}}})
```

Score predictions with `python manage.py evaluate --benchmark <this folder> --predictions
<file.jsonl>` or with AndroTMem's own scorer. `manifest.json` lists the sha256 of every file.
"""
