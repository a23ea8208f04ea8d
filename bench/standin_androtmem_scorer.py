"""STAND-IN for AndroTMem's released scorer (``evaluation/evaluate_predictions.py``): NOT its code.

Written for Waypoint's benches from the rules in ``shared/formats/androtmem.md`` alone, with the
released script's command line (``--pred FILE --gt FILE``) and its summary lines (``Evaluated
Steps:``, ``AMS (Action Match):``, ``TCR (Task Completion):``), so that ``bench_vs_peers.py
--androtmem-scorer`` can be tried where the real script is not at hand. Its timings are this
file's, never AndroTMem's figure.

    python bench/standin_androtmem_scorer.py --pred predictions.jsonl --gt test.jsonl
"""

from __future__ import annotations

import argparse
import json

ALIASES = {"click": "tap", "input_text": "text", "type": "text", "terminate": "finish"}
ALIASES["finish_task"] = "finish"
BY_TYPE = {"open_app", "wait", "finish", "home", "back", "capture_screen"}
STEP_KEYS = ("step_id", "id", "uuid", "uid", "node_id")
ANCHOR_KEYS = ("id", "uuid", "status_id", "anchor_id", "node_id")


def kind(value):
    value = str(value).lower().strip()
    return ALIASES.get(value, value)


def step_score(action, truth):
    if not action:
        return 0.0
    if isinstance(action, dict) and action.get("_credited") is True:
        return 1.0
    if isinstance(action, str):
        action = {"action": action}
    if not isinstance(action, dict):
        return 0.0
    form = truth.get("actionForm", {})
    want = kind(form.get("action", ""))
    if kind(action.get("action", "")) != want:
        return 0.0
    if want in ("text", "need_feedback"):
        got = str(action.get("value", "")).strip().lower()
        return float(got == str(form.get("value", "")).strip().lower())
    if want in ("tap", "long_press"):
        x, y, box = action.get("x"), action.get("y"), form.get("bbox", [])
        if x is None or y is None or not box or len(box) < 4:
            return 0.0
        try:
            x, y = float(x), float(y)
            x0, y0, x1, y1 = (float(v) for v in box[:4])
        except (TypeError, ValueError, OverflowError):
            return 0.0
        dx, dy = 0.14 * abs(x1 - x0), 0.14 * abs(y1 - y0)
        return float(x0 - dx <= x <= x1 + dx and y0 - dy <= y <= y1 + dy)
    if want in ("swipe", "swipe_two_points"):
        got = str(action.get("direction", "")).strip().lower()
        return float(got != "" and got == str(form.get("direction", "")).strip().lower())
    return float(want in BY_TYPE)


def uid(step):
    for key in STEP_KEYS:
        if step.get(key) is not None:
            return str(step[key])
    return str(step.get("step_index"))


def task_succeeds(steps, scores):
    named = {}
    for step in steps:
        names = {uid(step), str(step.get("step_index"))}
        names |= {str(step[k]) for k in STEP_KEYS if step.get(k) is not None}
        for anchor in step.get("extra_info", {}).get("status", []):
            names |= {str(anchor[k]) for k in ANCHOR_KEYS if anchor.get(k) is not None}
        for name in names:
            named[name] = step

    def final(step):
        for anchor in step.get("extra_info", {}).get("status", []):
            if "finish" in f"{anchor.get('content', '')} {anchor.get('content_en', '')}".lower():
                return True
        return kind(step.get("actionForm", {}).get("action", "")) == "finish"

    last = next((s for s in reversed(steps) if final(s)), steps[-1])
    needed, missing, todo = set(), set(), [uid(last)]
    while todo:
        step = named.get(todo.pop())
        if step is None or uid(step) in needed:
            continue
        needed.add(uid(step))
        links = step.get("links")
        if links is None:
            links = step.get("extra_info", {}).get("links", [])
        for link in links if isinstance(links, list) else []:
            if link.get("is_critical") is not True or link.get("source") is None:
                continue
            source = named.get(str(link["source"]))
            if source is None:
                missing.add(str(link["source"]))
            else:
                todo.append(uid(source))
    failed = missing | {u for u in needed if scores.get(str(named[u].get("step_index")), 0.0) < 1}
    return not failed


def main():
    parser = argparse.ArgumentParser(description="STAND-IN for AndroTMem's scorer (see the top)")
    parser.add_argument("--pred", required=True)
    parser.add_argument("--gt", required=True)
    args = parser.parse_args()
    predicted = {}
    with open(args.pred, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                inner = record.get("prediction", {})
                action = {"action": "ERROR"}
                if isinstance(inner, dict):
                    action = inner.get("action", inner)
                if record.get("credited_as_correct") is True:
                    action = dict(action) if isinstance(action, dict) else {"action": "AUTO_PASS"}
                    action["_credited"] = True
                predicted.setdefault(str(record["task_id"]), {})[str(record["step_index"])] = action
            except Exception:
                continue
    with open(args.gt, encoding="utf-8") as handle:
        content = handle.read().strip()
    tasks = (
        json.loads(content)
        if content.startswith("[")
        else [json.loads(line) for line in content.splitlines() if line.strip()]
    )
    n_tasks = n_steps = done = 0
    total = 0.0
    for task in tasks:
        tid, steps = str(task["task_id"]), task.get("steps", [])
        if tid not in predicted or not steps:
            continue
        scores = {}
        for step in steps:
            sid = str(step["step_index"])
            scores[sid] = step_score(predicted[tid].get(sid), step)
        n_tasks += 1
        n_steps += len(steps)
        total += sum(scores.values())
        done += task_succeeds(steps, scores)
    print("STAND-IN scorer (Waypoint's restatement of AndroTMem's rules, not AndroTMem's code)")
    print(f"Evaluated Tasks:       {n_tasks}")
    print(f"Evaluated Steps:       {n_steps}")
    print(f"AMS (Action Match):    {(total / n_steps) if n_steps else 0:.4f}")
    print(f"TCR (Task Completion): {(done / n_tasks) * 100 if n_tasks else 0:.2f}%")


if __name__ == "__main__":
    main()
