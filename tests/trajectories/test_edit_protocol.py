"""The one edit protocol: event kinds are constants, invariants are database constraints."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.db import IntegrityError, transaction

from tests.trajectories.builders import make_record
from trajectories import edits, events
from trajectories.models import Anchor, AnchorLink, MemoryTarget, Step, Subgoal
from trajectories.services import do_import_trajectory

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("annotate", "config", "devices", "fixtures", "trajectories")


def _calls(name: str):
    """Every call ``name(...)`` or ``x.name(...)`` in our packages, with where it is."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    func = node.func
                    called = (
                        func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                    )
                    if called == name:
                        yield f"{path.relative_to(ROOT)}:{node.lineno}", node


def test_every_audit_event_kind_is_a_constant():
    written = []
    for where, call in _calls("record_event"):
        if call.args and isinstance(call.args[0], ast.Constant | ast.JoinedStr):
            written.append(where)
    for where, call in _calls("edit"):
        if len(call.args) > 3 and isinstance(call.args[3], ast.Constant | ast.JoinedStr):
            written.append(where)
    assert not written, f"record_event with a string written in place at {written}"
    assert len(list(_calls("record_event"))) > 20  # the scan found the calls


def test_an_edit_with_a_kind_that_is_not_a_constant_is_refused(db, project, alice):
    trajectory, _ = do_import_trajectory(project, make_record(steps=2))
    with pytest.raises(ValueError, match="'step.labels_changed' is not an audit event kind"):
        edits.edit(trajectory, alice, trajectory.version, "step.labels_changed", "step:0", id)


def test_one_name_per_change():
    assert len(events.ALL) == len(
        [v for k, v in vars(events).items() if k.isupper() and isinstance(v, str)]
    )
    assert events.MEMORY_TARGET_ADDED == "memory_target.added"
    assert events.STEP_UPDATED == "step.updated"


# ---------------------------------------------------------------- constraints


@pytest.fixture
def stored(db, project):
    trajectory, _ = do_import_trajectory(project, make_record(steps=3, seed=3))
    return trajectory


def refused(make) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        make()


def test_the_database_refuses_a_subgoal_that_ends_before_it_starts(stored):
    refused(lambda: Subgoal.objects.create(trajectory=stored, start=2, end=1))


def test_the_database_refuses_two_subgoals_starting_at_the_same_step(stored):
    start = Subgoal.objects.filter(trajectory=stored).first().start
    refused(lambda: Subgoal.objects.create(trajectory=stored, start=start, end=start))


def test_the_database_refuses_an_unknown_subgoal_success(stored):
    Subgoal.objects.filter(trajectory=stored).delete()
    refused(lambda: Subgoal.objects.create(trajectory=stored, start=0, end=0, success="maybe"))


def test_the_database_refuses_a_link_from_an_anchor_to_itself(stored):
    anchor = Anchor.objects.filter(trajectory=stored).first()
    refused(lambda: AnchorLink.objects.create(source=anchor, target=anchor, relation="enables"))


def test_the_database_refuses_an_unknown_relation_or_anchor_type(stored):
    a, b = Anchor.objects.filter(trajectory=stored)[:2]
    refused(lambda: AnchorLink.objects.create(source=a, target=b, relation="likes"))
    refused(
        lambda: Anchor.objects.create(
            trajectory=stored, key="a99", step_index=0, type="mood", content="x"
        )
    )


def test_the_database_refuses_two_steps_with_the_same_index(stored):
    step = Step.objects.get(trajectory=stored, index=0)
    step.pk = None
    refused(step.save)


def test_the_database_refuses_a_memory_target_without_a_key(stored):
    refused(
        lambda: MemoryTarget.objects.create(trajectory=stored, key="", value="v", encode_step=0)
    )
