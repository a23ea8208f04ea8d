"""AndroTMem's released scorer, restated from its rules (``shared/formats/androtmem.md``).

A second, deliberately plain reading of the same rules, written apart from
``evaluation.metrics``: the tests check that Waypoint's evaluator gives what these rules give,
and both give the known answer on data built so that the answer is known.
"""

from __future__ import annotations

from typing import Any

ALIASES = {
    "click": "tap",
    "input_text": "text",
    "type": "text",
    "terminate": "finish",
    "finish_task": "finish",
}
STEP_KEYS = ("step_id", "id", "uuid", "uid", "node_id")
ANCHOR_KEYS = ("id", "uuid", "status_id", "anchor_id", "node_id")


def kind(value: Any) -> str:
    value = str(value or "").strip().lower()
    return ALIASES.get(value, value)


def step_ok(truth: dict[str, Any], predicted: dict[str, Any] | None) -> bool:
    if predicted is None:
        return False
    form = truth["actionForm"]
    want, got = kind(form["action"]), kind(predicted.get("action"))
    if want != got:
        return False
    if want in ("text", "need_feedback"):
        return (
            str(form.get("value", "")).strip().lower()
            == str(predicted.get("value", "")).strip().lower()
        )
    if want in ("tap", "long_press"):
        x0, y0, x1, y1 = form["bbox"]
        dx, dy = (x1 - x0) * 0.14, (y1 - y0) * 0.14
        x, y = float(predicted["x"]), float(predicted["y"])
        return x0 - dx <= x <= x1 + dx and y0 - dy <= y <= y1 + dy
    if want == "swipe":
        return bool(form.get("direction")) and form.get("direction") == predicted.get("direction")
    return want in ("open_app", "wait", "finish", "home", "back", "capture_screen")


def names_of(step: dict[str, Any]) -> set[str]:
    names = {str(step["step_index"])} | {str(step[k]) for k in STEP_KEYS if step.get(k)}
    for anchor in step.get("extra_info", {}).get("status", []):
        names |= {str(anchor[k]) for k in ANCHOR_KEYS if anchor.get(k)}
    return names


def closure(steps: list[dict[str, Any]]) -> tuple[list[int], bool]:
    """The step indexes the final step needs over critical links; False when a source is
    missing."""
    named = {name: step for step in steps for name in names_of(step)}

    def finishes(step):
        anchors = step.get("extra_info", {}).get("status", [])
        return any("finish" in str(a.get("content", "")).lower() for a in anchors) or (
            kind(step["actionForm"]["action"]) == "finish"
        )

    final = next((s for s in reversed(steps) if finishes(s)), steps[-1])
    seen, todo, complete = set(), [final], True
    while todo:
        step = todo.pop()
        if step["step_index"] in seen:
            continue
        seen.add(step["step_index"])
        for link in step.get("extra_info", {}).get("links", []):
            if link.get("is_critical") is True:
                source = named.get(str(link["source"]))
                if source is None:
                    complete = False
                else:
                    todo.append(source)
    return sorted(seen), complete


def score(tasks: list[dict[str, Any]], predictions: list[dict[str, Any]]) -> dict[str, float]:
    """AMS and TCR of predictions (one dict per step, as the scorer reads them)."""
    by_step = {(p["task_id"], p["step_index"]): p["prediction"]["action"] for p in predictions}
    steps = ok_steps = tasks_done = 0
    for task in tasks:
        ok = {
            s["step_index"]: step_ok(s, by_step.get((task["task_id"], s["step_index"])))
            for s in task["steps"]
        }
        steps += len(ok)
        ok_steps += sum(ok.values())
        needed, complete = closure(task["steps"])
        tasks_done += complete and all(ok[i] for i in needed)
    return {"ams": ok_steps / steps, "tcr": tasks_done / len(tasks)}
