"""TCR and task success give the known answer on data built so that the answer is known.

A wrong step on the critical chain the annotator drew fails the task (and only that task);
ground truth scores 1; AndroTMem's released scorer's rules (``androtmem_rules``) agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.scoring import evaluate_files
from fixtures.generate import generate_dataset, generate_record
from formats.catalogue import export_trajectories
from tests.evaluation import androtmem_rules
from tests.trajectories.builders import make_record
from trajectories.grading import answer_matches
from trajectories.models import Trajectory
from trajectories.records import StepRecord
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def tasks_of(folder: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(folder.glob("*.jsonl")) for line in f.open()]


def truth(step: dict) -> dict:
    """The prediction that is right for a step of the ground truth."""
    form = step["actionForm"]
    action = {"action": form["action"]}
    if form["action"] in ("tap", "long_press"):
        x0, y0, x1, y1 = form["bbox"]
        action.update(x=(x0 + x1) // 2, y=(y0 + y1) // 2)
    elif form["action"] == "swipe":
        action["direction"] = form["direction"]
    elif form["action"] in ("text", "open_app"):
        action["value"] = form["value"]
    elif form["action"] == "finish" and form["value"] in ("success", "failure"):
        action = {"action": "terminate", "value": form["value"]}
    elif form["action"] == "finish":
        action["value"] = form["value"]
    return action


WRONG = {"action": "tap", "x": -500, "y": -500}


def memory_at(task: dict, index: int) -> str:
    """What a perfect agent writes as memory at a step: the values it encodes."""
    return "; ".join(
        f"{m['key']}: {m['value']}" for m in task["memory_targets"] if m["encode_step"] == index
    )


def predictions(tasks: list[dict], wrong: set[tuple[str, int]] = frozenset()) -> list[dict]:
    return [
        {
            "task_id": task["task_id"],
            "step_index": step["step_index"],
            "prediction": {
                "action": WRONG if (task["task_id"], step["step_index"]) in wrong else truth(step),
                "memory": memory_at(task, step["step_index"]),
            },
        }
        for task in tasks
        for step in task["steps"]
    ]


def evaluate(folder: Path, preds: list[dict], tmp_path: Path) -> dict:
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in preds))
    return evaluate_files(folder, path)


def recorded_task(project):
    """Ten clicks and a terminate; the annotator read a price on step 2, which the finish on
    step 9 needs (a critical link), as a recording on a phone is labelled."""
    record = make_record(steps=11, seed=5)
    record.steps[10] = StepRecord(
        index=10, screen=10, action={"type": "terminate", "status": "success"}
    )
    record.anchors = [
        {
            "id": "price",
            "step": 2,
            "type": "context_info",
            "content": "12.50",
            "description": "needed to pay",
            "evidence": {},
        },
        {
            "id": "done",
            "step": 9,
            "type": "finish",
            "content": "Paid",
            "description": "",
            "evidence": {},
        },
    ]
    record.anchor_links = [
        {"source": "price", "target": "done", "relation": "prerequisite", "critical": True}
    ]
    do_import_trajectory(project, record)
    return record


def test_a_wrong_critical_prerequisite_fails_tcr_of_a_recorded_task(project, tmp_path):
    record = recorded_task(project)
    export_trajectories(Trajectory.objects.filter(project=project), tmp_path / "b", "androtmem")
    tasks = tasks_of(tmp_path / "b")
    assert androtmem_rules.closure(tasks[0]["steps"]) == ([2, 9, 10], True)

    right = evaluate(tmp_path / "b", predictions(tasks), tmp_path)
    assert (right["ams"], right["tcr"]) == (1.0, 1.0)
    wrong_read = evaluate(tmp_path / "b", predictions(tasks, {(record.uid, 2)}), tmp_path)
    assert wrong_read["tcr"] == 0.0
    # A wrong step off the chain costs AMS, not TCR.
    off_chain = evaluate(tmp_path / "b", predictions(tasks, {(record.uid, 4)}), tmp_path)
    assert (off_chain["ams"], off_chain["tcr"]) == (round(10 / 11, 6), 1.0)
    for preds in (predictions(tasks), predictions(tasks, {(record.uid, 2)})):
        ours = evaluate(tmp_path / "b", preds, tmp_path)
        theirs = androtmem_rules.score(tasks, preds)
        assert {k: round(v, 6) for k, v in theirs.items()} == {
            "ams": ours["ams"],
            "tcr": ours["tcr"],
        }


@pytest.fixture
def demo(project, tmp_path) -> list[dict]:
    generate_dataset(project, 30, steps=14, seed=3)
    export_trajectories(Trajectory.objects.filter(project=project), tmp_path / "d", "androtmem")
    return tasks_of(tmp_path / "d")


def test_ground_truth_scores_one_on_the_demo_data(demo, tmp_path):
    result = evaluate(tmp_path / "d", predictions(demo), tmp_path)
    assert (result["tasks"], result["ams"], result["tcr"]) == (30, 1.0, 1.0)
    assert result["answers"] == {"tasks": 30, "correct": 30, "success_rate": 1.0}
    assert (result["memory"]["tasks"], result["memory"]["m_acc"]) == (30, 1.0)
    assert androtmem_rules.score(demo, predictions(demo)) == {"ams": 1.0, "tcr": 1.0}


def test_the_demos_critical_chain_runs_from_every_price_read_to_the_finish(demo):
    for task in demo:
        needed, complete = androtmem_rules.closure(task["steps"])
        reads = {
            s["step_index"]
            for s in task["steps"]
            for a in s["extra_info"]["status"]
            if a["type"] == "context_info"
        }
        answer = next(
            s["step_index"]
            for s in task["steps"]
            if s["actionForm"]["value"]
            and s["actionForm"]["action"] == "finish"
            and s["actionForm"]["value"] not in ("success", "failure")
        )
        assert complete
        assert reads | {answer} <= set(needed), task["task_id"]


def test_one_wrong_price_read_fails_tcr_for_that_task_only(demo, tmp_path):
    task = next(
        t
        for t in demo
        if any(a["type"] == "context_info" for s in t["steps"] for a in s["extra_info"]["status"])
    )
    read = next(
        s["step_index"]
        for s in task["steps"]
        if any(a["type"] == "context_info" for a in s["extra_info"]["status"])
    )
    preds = predictions(demo, {(task["task_id"], read)})
    result = evaluate(tmp_path / "d", preds, tmp_path)
    assert result["tcr_success"] == 29
    assert round(androtmem_rules.score(demo, preds)["tcr"], 6) == result["tcr"] == round(29 / 30, 6)


def test_wrong_answers_and_wrong_price_reads_fail_every_task(demo, tmp_path):
    wrong = {
        (t["task_id"], s["step_index"])
        for t in demo
        for s in t["steps"]
        if s["extra_info"]["status"]
        and any(a["type"] in ("context_info", "dependency") for a in s["extra_info"]["status"])
    }
    result = evaluate(tmp_path / "d", predictions(demo, wrong), tmp_path)
    assert result["tcr"] == 0.0


@pytest.mark.parametrize("seed", range(0, 400, 7))
def test_every_generated_answer_passes_its_own_tasks_rule(seed):
    record = generate_record(seed, steps=8)
    [answer] = [s.action["text"] for s in record.steps if s.action["type"] == "answer"]
    assert answer_matches(record.task.grading_rule, record.task.gold_answer, answer)


def test_a_price_is_graded_as_a_number_so_a_sentence_with_it_is_right():
    record = next(r for r in map(generate_record, range(50)) if r.task.intent == "lookup")
    price = record.task.gold_answer
    assert record.task.grading_rule == "number"
    assert answer_matches("number", price, f"The item costs {price}")
    assert not answer_matches("number", price, "The item costs $0.01")


def template_tasks(template: str, seeds: int) -> list[dict]:
    return [
        {
            "task_id": f"{template}-{seed}",
            "task_template": template,
            "seed": seed,
            "gold_answer": f"${seed}.00",
            "grading_rule": "number",
            "steps": [{"step_index": 0, "actionForm": {"action": "finish", "value": ""}}],
        }
        for seed in range(seeds)
    ]


def test_pass_at_k_counts_a_template_solved_at_any_of_k_seeds(tmp_path):
    """Template A is solved at 1 of its 3 seeds, B at none: pass@1 = (1/3 + 0) / 2 and
    pass@3 = (1 + 0) / 2 (with 3 attempts, the one success is always among them)."""
    tasks = template_tasks("A", 3) + template_tasks("B", 3)
    bench = tmp_path / "gt.jsonl"
    bench.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    answers = {"A-0": "$0.00", "A-1": "$9", "A-2": "$9", "B-0": "$9", "B-1": "$9", "B-2": "$9"}
    preds = [
        {"task_id": t, "step_index": 0, "prediction": {"action": {"action": "finish", "value": a}}}
        for t, a in answers.items()
    ]
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in preds))
    result = evaluate_files(bench, path)
    assert result["pass_at_k"] == {
        "templates": 2,
        "attempts": 6,
        "by_k": [
            {"k": 1, "pass": round((1 / 3) / 2, 6), "templates": 2},
            {"k": 3, "pass": 0.5, "templates": 2},
        ],
    }


def test_the_androtmem_export_names_each_tasks_template_and_seed(demo):
    assert all(t["task_template"] == t["task_uid"] and t["seed"] is None for t in demo)


def test_a_task_that_names_no_app_is_scored_under_the_app_it_used(project, tmp_path):
    record = make_record(steps=2, seed=8)
    record.task.apps = []
    do_import_trajectory(project, record)
    export_trajectories(Trajectory.objects.filter(project=project), tmp_path / "b", "androtmem")
    tasks = tasks_of(tmp_path / "b")
    assert tasks[0]["apps"] == ["com.example.shop"]  # its screens' app
    result = evaluate(tmp_path / "b", predictions(tasks), tmp_path)
    assert list(result["by_app"]) == ["com.example.shop"]
