"""The one edit protocol: event kinds are constants, invariants are database constraints."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.db import IntegrityError, transaction

from tests.packages import PACKAGES
from tests.trajectories.builders import make_record
from trajectories import events
from trajectories.labels import edits, protocol
from trajectories.models import Anchor, AnchorLink, MemoryTarget, Step, Subgoal
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

ROOT = Path(__file__).resolve().parents[2]


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
    named = {
        node.attr
        for name in ("record_event", "edit")
        for _, call in _calls(name)
        for node in ast.walk(call)
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "events"
    }
    assert len(named) > 40
    assert sorted(name for name in named if not hasattr(events, name)) == []


def test_an_edit_with_a_kind_that_is_not_a_constant_is_refused(db, project, alice):
    trajectory, _ = do_import_trajectory(project, make_record(steps=2))
    with pytest.raises(ValueError, match="'step.labels_changed' is not an audit event kind"):
        protocol.edit(trajectory, alice, trajectory.version, "step.labels_changed", "step:0", id)


def test_an_event_of_an_unknown_kind_is_not_recorded(db, project, alice):
    from trajectories.models import AuditEvent
    from trajectories.services import record_event

    with pytest.raises(ValueError, match="'memory_target.created' is not an audit event kind"):
        record_event("memory_target.created", actor=alice, project=project)
    assert not AuditEvent.objects.filter(kind="memory_target.created").exists()


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


# ---------------------------------------------------------------- one mapping per label row

LABEL_MODELS = {"Subgoal", "MemoryTarget", "Anchor", "AnchorLink"}


def test_label_rows_are_made_only_by_the_mapping_in_trajectories_labels_parts():
    """Import, the workspace, recording, undo and copies fill a label row's fields the same way."""
    made_elsewhere = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts or path == ROOT / "trajectories" / "labels" / "parts.py":
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                direct = isinstance(func, ast.Name) and func.id in LABEL_MODELS
                created = (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("create", "get_or_create", "update_or_create")
                    and ast.unparse(func.value).split(".")[0] in LABEL_MODELS
                )
                if direct or created:
                    made_elsewhere.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert made_elsewhere == []


def test_a_label_written_by_the_workspace_reads_back_as_the_import_wrote_it(db, project, alice):
    from trajectories.labels.parts import all_labels

    imported, _ = do_import_trajectory(project, make_record(steps=3, seed=3))
    labels = all_labels(imported)
    blank, _ = do_import_trajectory(
        project,
        make_record(steps=3, seed=4, subgoals=[], memory_targets=[], anchors=[], anchor_links=[]),
    )
    for g in labels["subgoals"]:
        if g["start"] > 0:
            edits.do_split_subgoal(blank, alice, blank.version, g["start"])
    for g, mine in zip(labels["subgoals"], all_labels(blank)["subgoals"], strict=True):
        fields = {k: g[k] for k in ("text", "effect", "behaviour", "success")}
        edits.do_update_subgoal(blank, alice, blank.version, mine["id"], fields)
    for m in labels["memory_targets"]:
        fields = {k: m[k] for k in ("key", "value", "encode_step", "retrieve_steps", "evidence")}
        edits.do_add_memory_target(blank, alice, blank.version, **fields)
    for a in labels["anchors"]:
        fields = {k: a[k] for k in ("step", "type", "content", "description", "evidence")}
        edits.do_add_anchor(blank, alice, blank.version, **fields)
    for link in labels["links"]:
        fields = {k: link[k] for k in ("source", "target", "relation", "critical")}
        edits.do_add_anchor_link(blank, alice, blank.version, **fields)

    def without_ids(part):
        return [{k: v for k, v in item.items() if k != "id"} for item in part]

    written = all_labels(blank)
    for part in ("subgoals", "memory_targets", "anchors", "links"):
        assert without_ids(written[part]) == without_ids(labels[part]), part


NOT_OUTSIDE_THE_PROTOCOL = (
    "Trajectory.objects.select_for_update",
    "LabelEdit",
    'F("version")',
    "StaleVersion(",
)


def test_the_edit_protocol_lives_in_trajectories_only():
    """annotate/ and devices/ call the protocol; none of them locks, versions or undoes itself."""
    found = []
    for package in ("annotate", "devices"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            for needle in NOT_OUTSIDE_THE_PROTOCOL:
                if needle in text:
                    found.append(f"{path.relative_to(ROOT)}: {needle}")
    assert found == []


def test_evidence_from_the_console_is_checked_like_any_other():
    marked = {"bounds": [0, 0, 10, 10], "source": "box", "screen": 3, "node": {"text": "42"}}
    assert edits.check_evidence(marked) == marked
    with pytest.raises(InvalidData, match="evidence.screen: must be a screen number, got -1"):
        edits.check_evidence({**marked, "screen": -1})
    with pytest.raises(InvalidData, match="evidence.node: must be an object, got str"):
        edits.check_evidence({**marked, "node": "42"})
    with pytest.raises(InvalidData, match="evidence.colour: is not one of bounds"):
        edits.check_evidence({**marked, "colour": "red"})
