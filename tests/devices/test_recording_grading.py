"""The recorder, the evaluator, the virtual device and its Answers page grade an answer alike."""

from __future__ import annotations

import json

import pytest

from devices.services.recording import grade_answer
from devices.virtual.apps import APPS_DIR, ManifestError, grade
from evaluation.scoring import evaluate_files
from formats.catalogue import export_trajectories
from tests.trajectories.builders import make_record
from tests.trajectories.test_grading import CASES
from trajectories.grading import answer_matches
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory

ANSWERS_PAGE = APPS_DIR / "answers" / "index.html"
CASES_ON_THE_PAGE = [c for c in CASES if c[0] != "regex"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("rule", "gold", "answer", "right"),
    [
        ("exact", "Done", "done", False),
        ("exact", "FC-123456", " FC-123456 ", True),
        ("iexact", "MegaMart", "megamart", True),
        ("contains", "MegaMart", "FreshCart", False),
        ("number", "$12.50", "12.5", True),
        ("number", "12.50", "1,250", False),
        ("regex", r"FC-\d{6}", "fc-123456", False),
        ("regex", r"(?i)fc-\d{6}", "FC-123456", True),
    ],
)
def test_the_evaluator_and_the_recorder_give_the_same_verdict(
    project, tmp_path, rule, gold, answer, right
):
    record = make_record(steps=2, seed=5)
    record.task.gold_answer, record.task.grading_rule = gold, rule
    trajectory, _ = do_import_trajectory(project, record)

    recorded = grade_answer(trajectory, answer)
    assert recorded == {"correct": right, "by": f"gold answer ({rule})"}

    export_trajectories(Trajectory.objects.filter(project=project), tmp_path / "bench", "androtmem")
    predictions = tmp_path / "pred.jsonl"
    finish = {"action": {"action": "finish", "value": answer}}
    predictions.write_text(
        json.dumps({"task_id": record.uid, "step_index": 1, "prediction": finish}) + "\n"
    )
    evaluated = evaluate_files(tmp_path / "bench", predictions)["answers"]
    assert evaluated == {"tasks": 1, "correct": int(right), "success_rate": float(right)}


@pytest.mark.parametrize(("rule", "gold", "answer", "right"), CASES_ON_THE_PAGE)
def test_the_virtual_device_grades_as_waypoint_does(rule, gold, answer, right):
    assert grade(rule, gold, answer) is right is answer_matches(rule, gold, answer)


def test_the_virtual_device_knows_no_regex_as_its_answers_page_does():
    with pytest.raises(ManifestError) as refused:
        grade("regex", r"FC-\d+", "FC-1")
    assert str(refused.value) == (
        "unknown grading rule 'regex' (the Answers page grades by: exact, iexact, number, contains)"
    )


def test_the_answers_page_grades_as_waypoint_does(browser):
    """The JavaScript grade() the Answers page runs, on every case of the Python tests."""
    html = ANSWERS_PAGE.read_text()
    script = html[html.index("function numberOf") : html.index("const main")]
    page = browser.new_page()
    verdicts = page.evaluate(
        "(cases) => {" + script + "return cases.map(([r, g, a]) => grade(r, g, a)); }",
        [[rule, gold, answer] for rule, gold, answer, _ in CASES_ON_THE_PAGE],
    )
    disagreements = [
        case
        for case, verdict in zip(CASES_ON_THE_PAGE, verdicts, strict=True)
        if verdict is not case[3]
    ]
    assert disagreements == []
