"""AMS, TCR, M-Acc and task success, with AndroTMem's rules where they apply.

AndroTMem (its released scorer, which this module agrees with on the same files):

- a step scores 1 when the predicted and true action types match after folding the aliases
  (click->tap, input_text/type->text, terminate/finish_task->finish) and: text/need_feedback
  values are equal after strip and lower-case; a tap/long_press point lies inside the true
  bbox enlarged by 14% of its width and height on every side (edges included); a swipe has
  the same non-empty direction; open_app, wait, finish, home, back and capture_screen match
  by type alone; any other type scores 0. A prediction credited as correct scores 1.
- AMS is the mean step score over every step of the evaluated tasks (those with at least
  one prediction); a step without a prediction scores 0. Steps credited as correct (AndroTMem's
  inference credits a step whose screenshot was missing) are counted apart.
- TCR: a task succeeds when every step in the closure of its final completion step over
  critical links (``is_critical`` true, following ``source`` recursively) scored 1; a link
  source naming no step fails the task. The final step is the last one with an anchor whose
  content says "finish" or a finish action, else the last step.

Task success: the agent's answer (the value of its last finish prediction that has one; a
terminate reporting success or failure is no answer) against the gold answer with its grading
rule, graded as the recorder and the virtual device grade it (``trajectories.grading``).

STAMP's M-Acc compares the memory predicted at a target's encode step with the target's
value after normalising case, whitespace and number formats (1,234.50 = 1234.5): complete
when the whole value appears, partial when some of its words do, else no match.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from trajectories.grading import answer_matches
from trajectories.invalid import cut

from .predictions import Malformed, Prediction

if TYPE_CHECKING:  # the judge (and its HTTP client) is loaded only by a run that asks for it
    from .judge import Judge

EXPANSION = 0.14
ALIASES = {
    "click": "tap",
    "input_text": "text",
    "type": "text",
    "terminate": "finish",
    "finish": "finish",
    "finish_task": "finish",
}
BY_TYPE = ("open_app", "wait", "finish", "home", "back", "capture_screen")
STEP_IDS = ("step_id", "id", "uuid", "uid", "node_id")
ANCHOR_IDS = ("id", "uuid", "status_id", "anchor_id", "node_id")


def action_type(value: Any) -> str:
    kind = (value if type(value) is str else str(value)).lower().strip()
    return ALIASES.get(kind, kind)


def inside_enlarged_bbox(x: Any, y: Any, bbox: Any) -> bool:
    if not bbox or len(bbox) < 4:
        return False
    try:
        px, py = float(x), float(y)
        x_min, y_min, x_max, y_max = (float(v) for v in bbox[:4])
    except (TypeError, ValueError, OverflowError):  # 10**400 is no point on a screen
        return False
    dx, dy = EXPANSION * abs(x_max - x_min), EXPANSION * abs(y_max - y_min)
    return x_min - dx <= px <= x_max + dx and y_min - dy <= py <= y_max + dy


def step_score(prediction: Prediction | None, step: dict[str, Any]) -> float:
    if prediction is None:
        return 0.0
    if prediction.credited:  # even with no action, as AndroTMem's scorer does
        return 1.0
    if not prediction.action:
        return 0.0
    predicted, truth = prediction.action, step.get("actionForm") or {}
    kind = action_type(truth.get("action", ""))
    if action_type(predicted.get("action", "")) != kind:
        return 0.0
    if kind in ("text", "need_feedback"):
        same = str(predicted.get("value", "")).strip().lower() == (
            str(truth.get("value", "")).strip().lower()
        )
        return 1.0 if same else 0.0
    if kind in ("tap", "long_press"):
        x, y, bbox = predicted.get("x"), predicted.get("y"), truth.get("bbox")
        if x is None or y is None or not bbox:
            return 0.0
        return 1.0 if inside_enlarged_bbox(x, y, bbox) else 0.0
    if kind in ("swipe", "swipe_two_points"):
        direction = str(predicted.get("direction", "")).strip().lower()
        return (
            1.0
            if direction and direction == str(truth.get("direction", "")).strip().lower()
            else 0.0
        )
    return 1.0 if kind in BY_TYPE else 0.0


# ---------------------------------------------------------------- TCR


def _step_uid(step: dict[str, Any]) -> str:
    for key in STEP_IDS:
        if step.get(key) is not None:
            return str(step[key])
    return str(step.get("step_index"))


def _extra(step: dict[str, Any]) -> dict[str, Any]:
    extra = step.get("extra_info")
    return extra if isinstance(extra, dict) else {}


def _name_steps(steps: list[dict[str, Any]], uids: list[str]) -> dict[str, dict[str, Any]]:
    """Each name a link source may give (a step's ids and index, its anchors' ids) -> its step;
    a name two steps share goes to the later one."""
    by_name: dict[str, dict[str, Any]] = {}
    for step, uid in zip(steps, uids, strict=True):
        by_name[uid] = step
        by_name[str(step.get("step_index"))] = step
        for key in STEP_IDS:
            if (value := step.get(key)) is not None:
                by_name[str(value)] = step
        for anchor in _extra(step).get("status") or []:
            for key in ANCHOR_IDS:
                if (value := anchor.get(key)) is not None:
                    by_name[str(value)] = step
    return by_name


def _is_final(step: dict[str, Any]) -> bool:
    for anchor in _extra(step).get("status") or []:
        text = f"{anchor.get('content', '')} {anchor.get('content_en', '')}".lower()
        if "finish" in text:
            return True
    return action_type((step.get("actionForm") or {}).get("action", "")) == "finish"


def _links(step: dict[str, Any]) -> list[dict[str, Any]]:
    links = step.get("links")
    if links is None:
        links = _extra(step).get("links", [])
    return links if isinstance(links, list) else []


def critical_closure(
    steps: list[dict[str, Any]], uids: list[str] | None = None
) -> tuple[set[str], set[str]]:
    """The steps the final completion step needs over critical links, and missing sources
    (``uids``: each step's :func:`_step_uid`, when the caller has them)."""
    by_alias = _name_steps(steps, uids if uids is not None else [_step_uid(s) for s in steps])
    final = next((s for s in reversed(steps) if _is_final(s)), steps[-1])
    required: set[str] = set()
    missing: set[str] = set()
    stack = [_step_uid(final)]
    while stack:
        uid = stack.pop()
        step = by_alias.get(uid)
        if step is None:
            missing.add(uid)
            continue
        uid = _step_uid(step)
        if uid in required:
            continue
        required.add(uid)
        for link in _links(step):
            if link.get("is_critical") is not True or link.get("source") is None:
                continue
            source = by_alias.get(str(link["source"]))
            if source is None:
                missing.add(str(link["source"]))
            else:
                stack.append(_step_uid(source))
    return required, missing


# ---------------------------------------------------------------- M-Acc and answers

NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def _number(match: re.Match) -> str:
    try:
        value = Decimal(match.group(0).replace(",", ""))
    except InvalidOperation:
        return match.group(0)
    text = format(value.normalize(), "f")
    return text


def normalise(text: str) -> str:
    """Case, whitespace and number formats folded: ' Total 1,234.50 ' -> 'total 1234.5'."""
    return " ".join(NUMBER.sub(_number, text.lower()).split())


def memory_match(predicted: str | None, value: str) -> str:
    """complete, partial or none."""
    memory, target = normalise(predicted or ""), normalise(value)
    if not target:
        return "complete"
    if target in memory:
        return "complete"
    words = set(re.findall(r"\w+(?:\.\w+)?", memory))
    if words & set(re.findall(r"\w+(?:\.\w+)?", target)):
        return "partial"
    return "none"


TERMINATE_STATUSES = ("success", "failure")
TASK_SCORES = {"complete": 1.0, "partial": 0.5, "none": 0.0}


def task_memory(steps: list[dict[str, Any]], predicted: dict[str, Prediction], first: int) -> str:
    """What the agent wrote as memory from step ``first`` (the first encode step) on, in
    order: a value written a step late, or kept in a later step's memory, still counts."""
    texts = []
    for step in steps:
        index = step.get("step_index")
        if not isinstance(index, int) or index < first:
            continue
        prediction = predicted.get(str(index))
        text = (prediction.memory or "").strip() if prediction is not None else ""
        if text and text.lower() != "none":  # GUI-Owl writes "Memory: none" for nothing
            texts.append(text)
    return "\n".join(texts)


def task_memory_verdict(verdicts: list[str]) -> str:
    """A task's memory: complete when every target is, none when no target is even partly
    there, partial otherwise (STAMP's g in {1, 0.5, 0})."""
    if all(v == "complete" for v in verdicts):
        return "complete"
    if all(v == "none" for v in verdicts):
        return "none"
    return "partial"


def answer_of(action: dict[str, Any]) -> str | None:
    """The answer a predicted action gives: the value of a finish (GUI-Owl's ``answer``), if
    any. A ``terminate`` whose value is its status (success / failure: GUI-Owl's terminate)
    says how the task ended, not what the answer is."""
    kind = str(action.get("action", "")).lower().strip()
    if action_type(kind) != "finish":
        return None
    value = str(action.get("value") or "")
    if not value.strip():
        return None
    if kind == "terminate" and value.strip().lower() in TERMINATE_STATUSES:
        return None
    return value


def answer_correct(answer: str | None, gold: str, rule: str) -> bool:
    """Graded as the recorder grades it (:func:`trajectories.grading.answer_matches`)."""
    return answer is not None and answer_matches(rule, gold, answer)


# ---------------------------------------------------------------- the whole evaluation


PASS_AT = (1, 3, 5)


def pass_at_k(attempts: dict[str, list[bool]]) -> dict[str, Any]:
    """pass@k over seeds: a template passes when any of k attempts (its instances at other
    seeds) succeeds, estimated without bias from its n attempts with c successes as
    1 - C(n-c, k) / C(n, k), averaged over the templates with at least k attempts. A task
    succeeds by its gold answer, or by TCR when it has none."""
    by_k = []
    for k in PASS_AT:
        rates = [
            1 - math.comb(len(a) - sum(a), k) / math.comb(len(a), k)
            for a in attempts.values()
            if len(a) >= k
        ]
        if rates:
            by_k.append(
                {"k": k, "pass": round(sum(rates) / len(rates), 6), "templates": len(rates)}
            )
    return {
        "templates": len(attempts),
        "attempts": sum(len(a) for a in attempts.values()),
        "by_k": by_k,
    }


def _group() -> dict[str, Any]:
    return {"tasks": 0, "steps": 0, "ams_sum": 0.0, "tcr_success": 0}


def _finish_group(group: dict[str, Any]) -> dict[str, Any]:
    return {
        "tasks": group["tasks"],
        "steps": group["steps"],
        "ams": round(group["ams_sum"] / group["steps"], 6) if group["steps"] else 0.0,
        "tcr": round(group["tcr_success"] / group["tasks"], 6) if group["tasks"] else 0.0,
        "tcr_success": group["tcr_success"],
    }


def length_bucket(steps: int) -> str:
    start = steps // 10 * 10
    return f"{start}-{start + 9}"


def evaluate(
    tasks: list[dict[str, Any]],
    predictions: dict[str, dict[str, Prediction]],
    malformed: Malformed | None = None,
    judge: Judge | None = None,
) -> dict[str, Any]:
    """Every metric over the tasks that have at least one prediction.

    M-Acc is STAMP's: each task with memory targets scores g = 1, 0.5 or 0 (complete,
    partial, none) for what the agent wrote as memory from the first encode step on; by the
    rules (``m_acc``) and, with a ``judge``, by STAMP's Table 17 judge (``m_acc_judge``), apart.
    """
    malformed = malformed or Malformed()
    total = _group()
    groups: dict[str, dict[str, dict[str, Any]]] = {
        "by_intent": defaultdict(_group),
        "by_length": defaultdict(_group),
        "by_app": defaultdict(_group),
    }
    memory = {"targets": 0, "complete": 0, "partial": 0, "none": 0}
    memory_tasks = {"tasks": 0, "rule_sum": 0.0, "judged": 0, "judge_sum": 0.0}
    attempts: dict[str, list[bool]] = defaultdict(list)  # template -> each attempt's success
    answers = {"tasks": 0, "correct": 0}
    required_steps = failed_required = missing_sources = credited = 0
    known = set()
    for task in tasks:
        task_id = str(task["task_id"])
        known.add(task_id)
        steps = task.get("steps") or []
        if task_id not in predictions or not steps:
            continue
        predicted = predictions[task_id]
        indexes = [str(s.get("step_index")) for s in steps]
        given = [predicted.get(index) for index in indexes]
        scores = {
            index: step_score(prediction, step)
            for index, prediction, step in zip(indexes, given, steps, strict=True)
        }
        credited += sum(1 for p in given if p is not None and p.credited)
        uids = [_step_uid(s) for s in steps]
        required, missing = critical_closure(steps, uids)
        by_uid = dict(zip(uids, steps, strict=True))
        failed = set(missing) | {
            uid for uid in required if scores.get(str(by_uid[uid].get("step_index")), 0.0) < 1.0
        }
        success = not failed
        required_steps += len(required)
        failed_required += len(failed)
        missing_sources += len(missing)
        keys = [
            ("by_intent", task.get("primary_intent", "Unknown")),
            ("by_length", length_bucket(len(steps))),
            *(("by_app", app) for app in (task.get("apps") or ["(no app)"])),
        ]
        for target in [total, *(groups[kind][key] for kind, key in keys)]:
            target["tasks"] += 1
            target["steps"] += len(steps)
            target["ams_sum"] += sum(scores.values())
            target["tcr_success"] += success
        targets = [t for t in task.get("memory_targets") or [] if isinstance(t, dict)]
        if targets:
            encodes = [t.get("encode_step") for t in targets]
            first = min((e for e in encodes if isinstance(e, int)), default=0)
            written = task_memory(steps, predicted, first)
            verdicts = [memory_match(written, str(t.get("value", ""))) for t in targets]
            for verdict in verdicts:
                memory["targets"] += 1
                memory[verdict] += 1
            memory_tasks["tasks"] += 1
            memory_tasks["rule_sum"] += TASK_SCORES[task_memory_verdict(verdicts)]
            if judge is not None:
                reference = "\n".join(f"{t.get('key', '')}: {t.get('value', '')}" for t in targets)
                instruction = str(task.get("instruction_en") or task.get("instruction") or "")
                judged = judge.grade_task(instruction, reference, written, task_id)
                if judged is not None:
                    memory_tasks["judged"] += 1
                    memory_tasks["judge_sum"] += TASK_SCORES[judged]
        if task.get("gold_answer"):
            answers["tasks"] += 1
            answer = status = None
            for prediction in given:
                told = answer_of(prediction.action) if prediction and prediction.action else None
                if told is None:
                    continue
                # A finish whose value is a terminate status (AndroTMem's layout writes the
                # answer and the terminate after it both as finish) is the answer only when
                # no other answer was given.
                if told.strip().lower() in TERMINATE_STATUSES:
                    status = told
                else:
                    answer = told
            answer = answer if answer is not None else status
            correct = answer_correct(answer, task["gold_answer"], task.get("grading_rule", "exact"))
            answers["correct"] += correct
        else:
            correct = success  # no gold answer: the task is done when its critical chain is
        attempts[str(task.get("task_template") or task_id)].append(correct)
    unknown = sorted(set(predictions) - known)
    result = {
        **_finish_group(total),
        "required_steps": required_steps,
        "failed_required_steps": failed_required,
        "missing_link_sources": missing_sources,
        "credited_steps": credited,
        "memory": {
            **memory,
            "tasks": memory_tasks["tasks"],
            # STAMP's M-Acc: (1/N) sum of g over the N tasks with memory, g in {1, 0.5, 0}.
            "m_acc": round(memory_tasks["rule_sum"] / memory_tasks["tasks"], 6)
            if memory_tasks["tasks"]
            else None,
            "judged_tasks": memory_tasks["judged"],
            "m_acc_judge": round(memory_tasks["judge_sum"] / memory_tasks["judged"], 6)
            if memory_tasks["judged"]
            else None,
        },
        "answers": {
            **answers,
            "success_rate": round(answers["correct"] / answers["tasks"], 6)
            if answers["tasks"]
            else None,
        },
        "pass_at_k": pass_at_k(attempts),
        "malformed": {"count": malformed.count, "lines": malformed.lines},
        "judge": judge.report() if judge is not None else None,
        # An id is the agent's text: a 60 MB one is not repeated back.
        "unknown_tasks": {"count": len(unknown), "ids": [cut(uid) for uid in unknown[:20]]},
    }
    result["by_intent"] = {k: _finish_group(v) for k, v in sorted(groups["by_intent"].items())}
    result["by_length"] = {
        k: _finish_group(v)
        for k, v in sorted(groups["by_length"].items(), key=lambda item: int(item[0].split("-")[0]))
    }
    result["by_app"] = {k: _finish_group(v) for k, v in sorted(groups["by_app"].items())}
    return result
