"""Grading an answer against a gold answer: one function, five rules, checked where rules enter."""

from __future__ import annotations

import json

import pytest

from formats.catalogue import export_trajectories
from trajectories.grading import GRADING_RULES, UnknownGradingRule, answer_matches
from trajectories.models import GradingRule, Task, Trajectory
from trajectories.records import TaskRecord
from trajectories.services import do_import_trajectory, get_or_create_task
from trajectories.validation import InvalidData

from .builders import make_record

KNOWN = "(known: exact, iexact, contains, number, regex)"

# (rule, gold, answer, right?). The rules but regex are also checked against the JavaScript
# grade() of the virtual Answers page (tests/devices/test_virtual_answers_grading.py).
CASES = [
    ("exact", "Done", "Done", True),
    ("exact", "Done", "  Done\n", True),  # surrounding whitespace is no part of an answer
    ("exact", " Done ", "Done", True),
    ("exact", "Done", "\ufeffDone", True),  # trimmed as JavaScript's trim() does
    ("exact", "Done", "done", False),  # case counts
    ("exact", "FC-1234", "FC-12345", False),
    ("exact", "12.50", "12.5", False),  # no number folding
    ("iexact", "MegaMart", "megamart ", True),
    ("iexact", "MegaMart", "MEGAMART", True),
    ("iexact", "MegaMart", "Mega Mart", False),
    ("iexact", "Straße", "STRASSE", False),  # lower-cased, not case-folded (as JavaScript)
    ("contains", "MegaMart", "It is cheaper at megamart.", True),
    ("contains", "MegaMart", "MegaMart", True),
    ("contains", "MegaMart", "FreshCart", False),
    ("contains", "Mega Mart", "MegaMart", False),
    ("number", "$12.50", "12.5", True),
    ("number", "12.5", "The price is $12.50.", True),
    ("number", "1,234.50", "1234.5", True),
    ("number", "$12.50", "12.504", True),  # within half a cent
    ("number", "$12.50", "$12.51", False),
    ("number", "-3", "3", False),
    ("number", "$12.50", "twelve fifty", False),  # no number at all
    ("number", "$12.50", "١٢٫٥٠", False),  # ASCII digits only, as JavaScript's \d
    ("number", "about 3 or 4", "3", True),  # the first number counts
    ("regex", r"FC-\d{6}", "FC-123456", True),
    ("regex", r"FC-\d{6}", " FC-123456 ", True),  # matched against the trimmed answer
    ("regex", r"FC-\d{6}", "fc-123456", False),  # case-sensitive...
    ("regex", r"(?i)fc-\d{6}", "FC-123456", True),  # ...unless the pattern says otherwise
    ("regex", r"FC-\d{6}", "Order FC-123456", False),  # the whole answer must match
    ("regex", r"FC-(\d", "FC-(1", False),  # an invalid pattern matches nothing
]


@pytest.mark.parametrize(("rule", "gold", "answer", "right"), CASES)
def test_an_answer_is_graded_by_its_rule(rule, gold, answer, right):
    assert answer_matches(rule, gold, answer) is right


@pytest.mark.parametrize("rule", ["fuzzy", "", "EXACT"])
def test_an_unknown_rule_is_an_error_not_a_wrong_answer(rule):
    with pytest.raises(UnknownGradingRule) as refused:
        answer_matches(rule, "Done", "Done")
    assert str(refused.value) == f"unknown grading rule {rule!r} {KNOWN}"


def test_a_task_can_carry_every_rule_the_grader_knows():
    assert GradingRule.values == list(GRADING_RULES)


@pytest.mark.django_db
def test_an_import_with_an_unknown_rule_is_refused_and_writes_nothing(project):
    record = make_record(steps=2, seed=3)
    record.task.grading_rule = "fuzzy"
    with pytest.raises(InvalidData) as refused:
        do_import_trajectory(project, record)
    assert str(refused.value) == f"task.grading_rule: unknown grading rule 'fuzzy' {KNOWN}"
    assert not Task.objects.filter(project=project).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("rule", ["iexact", "contains", "number"])
def test_the_rules_of_virtual_tasks_are_imported_and_exported(project, tmp_path, rule):
    record = make_record(steps=2, seed=3, metadata={"virtual_task": "t3", "seed": 42})
    record.task.grading_rule = rule
    trajectory, _ = do_import_trajectory(project, record)
    assert trajectory.task.grading_rule == rule
    out = tmp_path / "out"
    export_trajectories(Trajectory.objects.filter(project=project), out, "memory-world")
    [task] = [json.loads(line) for line in (out / "test.jsonl").open()]
    assert task["grading_rule"] == rule


@pytest.mark.django_db
def test_a_task_with_an_unknown_rule_is_not_created(project):
    with pytest.raises(InvalidData) as refused:
        get_or_create_task(project, TaskRecord(uid="t", goal="g", grading_rule="close enough"))
    assert str(refused.value) == (f"task.grading_rule: unknown grading rule 'close enough' {KNOWN}")
    assert not Task.objects.filter(project=project).exists()
