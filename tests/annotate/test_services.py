"""Every label edit: its rule, its audit event, version checks, undo and redo."""

from __future__ import annotations

import pytest

from annotate import services as s
from annotate.models import Assignment, ReviewComment
from trajectories.labels import edits, protocol
from trajectories.labels.parts import all_labels
from trajectories.models import AuditEvent, Step, Subgoal, Trajectory
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db


def ranges(trajectory) -> list[tuple[int, int]]:
    return list(trajectory.subgoals.order_by("start").values_list("start", "end"))


def split_in_three(t, actor):
    edits.do_split_subgoal(t, actor, t.version, 2)
    edits.do_split_subgoal(t, actor, t.version, 4)


# ---------------------------------------------------------------- subgoals


def test_split_an_unlabelled_trajectory_covers_it(blank, bob):
    edits.do_split_subgoal(blank, bob, 1, 2)
    assert ranges(blank) == [(0, 1), (2, 5)]
    assert blank.version == 2
    edits.do_split_subgoal(blank, bob, 2, 4)
    assert ranges(blank) == [(0, 1), (2, 3), (4, 5)]
    assert Trajectory.objects.get(pk=blank.pk).version == 3


def test_split_at_step_zero_makes_one_subgoal_of_the_uncovered_run(blank, bob):
    edits.do_split_subgoal(blank, bob, 1, 0)
    assert ranges(blank) == [(0, 5)]


def test_split_keeps_the_fields_on_the_first_part(blank, bob):
    edits.do_split_subgoal(blank, bob, 1, 0)
    g = blank.subgoals.get()
    edits.do_update_subgoal(blank, bob, blank.version, g.pk, {"text": "Buy", "success": "yes"})
    edits.do_split_subgoal(blank, bob, blank.version, 3)
    first, second = blank.subgoals.order_by("start")
    assert (first.text, first.success, second.text, second.success) == ("Buy", "yes", "", "")


def test_split_refuses_an_existing_boundary_and_bad_steps(blank, bob):
    edits.do_split_subgoal(blank, bob, 1, 2)
    with pytest.raises(InvalidData, match=r"^step: step 2 already starts subgoal 2–5$"):
        edits.do_split_subgoal(blank, bob, 2, 2)
    with pytest.raises(InvalidData, match=r"step 6 does not exist \(the trajectory has 6 steps\)"):
        edits.do_split_subgoal(blank, bob, 2, 6)
    assert Trajectory.objects.get(pk=blank.pk).version == 2


def test_merge_joins_neighbours_and_keeps_success_only_when_equal(blank, bob):
    split_in_three(blank, bob)
    a, b, c = blank.subgoals.order_by("start")
    edits.do_update_subgoal(blank, bob, blank.version, a.pk, {"success": "yes"})
    edits.do_update_subgoal(blank, bob, blank.version, b.pk, {"text": "second", "success": "no"})
    merged = edits.do_merge_subgoals(blank, bob, blank.version, a.pk)
    assert ranges(blank) == [(0, 3), (4, 5)]
    assert (merged.text, merged.success) == ("second", "")
    with pytest.raises(InvalidData, match="is the last: nothing follows"):
        edits.do_merge_subgoals(blank, bob, blank.version, c.pk)


def test_move_boundary_makes_the_neighbour_give_way(blank, bob):
    split_in_three(blank, bob)
    _, middle, _ = blank.subgoals.order_by("start")
    edits.do_move_boundary(blank, bob, blank.version, middle.pk, start=1)
    assert ranges(blank) == [(0, 0), (1, 3), (4, 5)]
    edits.do_move_boundary(blank, bob, blank.version, middle.pk, end=2)
    assert ranges(blank) == [(0, 0), (1, 2), (4, 5)]
    with pytest.raises(InvalidData, match=r"would leave subgoal 0–0 empty: merge them instead"):
        edits.do_move_boundary(blank, bob, blank.version, middle.pk, start=0)
    with pytest.raises(InvalidData, match=r"^start: start 3 is after end 2$"):
        edits.do_move_boundary(blank, bob, blank.version, middle.pk, start=3)


def test_a_shared_boundary_moves_both_subgoals_and_leaves_no_gap(blank, bob):
    split_in_three(blank, bob)  # 0–1, 2–3, 4–5
    first, middle, last = blank.subgoals.order_by("start")
    edits.do_move_boundary(blank, bob, blank.version, middle.pk, end=2, shared=True)
    assert ranges(blank) == [(0, 1), (2, 2), (3, 5)]
    edits.do_move_boundary(blank, bob, blank.version, first.pk, end=0, shared=True)
    assert ranges(blank) == [(0, 0), (1, 2), (3, 5)]
    edits.do_move_boundary(blank, bob, blank.version, last.pk, start=4, shared=True)
    assert ranges(blank) == [(0, 0), (1, 3), (4, 5)]
    # One edit: one undo puts both edges back.
    protocol.do_undo(blank, bob, blank.version)
    assert ranges(blank) == [(0, 0), (1, 2), (3, 5)]


def test_one_earlier_change_is_reverted_when_nothing_changed_it_since(blank, bob):
    split_in_three(blank, bob)  # 0–1, 2–3, 4–5
    edits.do_update_step(blank, bob, blank.version, 1, {"memory": "price 12.50"})
    first_split = AuditEvent.objects.filter(trajectory=blank, kind="subgoal.split").earliest("id")
    memory_edit = AuditEvent.objects.filter(trajectory=blank, kind="step.updated").get()

    # The subgoals were split again after the first split: that one cannot be put back alone.
    with pytest.raises(InvalidData, match=r"^revert: the subgoals changed again since; "):
        protocol.do_revert(blank, bob, blank.version, first_split.pk)
    # The memory text was not touched since: it goes back, and the subgoals stay.
    protocol.do_revert(blank, bob, blank.version, memory_edit.pk)
    assert blank.steps.get(index=1).memory == ""
    assert ranges(blank) == [(0, 1), (2, 3), (4, 5)]
    reverted = AuditEvent.objects.filter(trajectory=blank).latest("id")
    assert (reverted.kind, reverted.object_id) == ("labels.reverted", str(memory_edit.pk))
    # A revert is an edit like any other: undo brings the text back.
    protocol.do_undo(blank, bob, blank.version)
    assert blank.steps.get(index=1).memory == "price 12.50"
    assignment = AuditEvent.objects.filter(trajectory=blank, kind="assignment.added").get()
    with pytest.raises(InvalidData, match=rf"^event: {assignment.pk} is not a label change"):
        protocol.do_revert(blank, bob, blank.version, assignment.pk)


def test_subgoal_fields_are_checked(blank, bob):
    edits.do_split_subgoal(blank, bob, 1, 0)
    g = blank.subgoals.get()
    with pytest.raises(
        InvalidData, match=r"^success: must be one of yes, no, uncertain, got 'maybe'$"
    ):
        edits.do_update_subgoal(blank, bob, blank.version, g.pk, {"success": "maybe"})
    with pytest.raises(
        InvalidData, match=r"^origin: is not one of text, effect, behaviour, success$"
    ):
        edits.do_update_subgoal(blank, bob, blank.version, g.pk, {"origin": "x"})
    with pytest.raises(InvalidData, match=r"^subgoal 999 is not a subgoal of this trajectory$"):
        edits.do_update_subgoal(blank, bob, blank.version, 999, {"text": "x"})


def test_an_edit_records_the_part_before_and_after(blank, bob):
    edits.do_split_subgoal(blank, bob, 1, 3)
    event = AuditEvent.objects.filter(trajectory=blank).first()
    assert (event.kind, event.actor, event.object_type) == ("subgoal.split", bob, "Subgoal")
    assert event.before == {"subgoals": []}
    assert [(g["start"], g["end"]) for g in event.after["subgoals"]] == [(0, 2), (3, 5)]


def test_an_edit_that_changes_nothing_keeps_the_version(blank, bob):
    edits.do_split_subgoal(blank, bob, 1, 0)
    g = blank.subgoals.get()
    edits.do_update_subgoal(blank, bob, 2, g.pk, {"text": "Buy"})
    events = AuditEvent.objects.filter(trajectory=blank).count()
    edits.do_update_subgoal(blank, bob, 3, g.pk, {"text": "Buy"})
    assert blank.version == 3
    assert AuditEvent.objects.filter(trajectory=blank).count() == events


# ---------------------------------------------------------------- steps, memory, anchors


def test_step_fields(blank, bob):
    edits.do_update_step(blank, bob, 1, 2, {"memory": "price 12.50", "trainable": False})
    step = Step.objects.get(trajectory=blank, index=2)
    assert (step.memory, step.trainable) == ("price 12.50", False)
    with pytest.raises(InvalidData, match=r"^trainable: must be true or false, got 'no'$"):
        edits.do_update_step(blank, bob, 2, 2, {"trainable": "no"})
    with pytest.raises(InvalidData, match=r"^index: step 9 does not exist"):
        edits.do_update_step(blank, bob, 2, 9, {"memory": ""})


def test_memory_target_retrieve_steps_come_after_the_encode_step(blank, bob):
    target = edits.do_add_memory_target(
        blank,
        bob,
        1,
        key="price",
        value="12.50",
        encode_step=1,
        retrieve_steps=[4, 3, 4],
        evidence={"bounds": [10, 100, 110, 140], "text": "12.50"},
    )
    assert target.retrieve_steps == [3, 4]
    with pytest.raises(
        InvalidData, match=r"^retrieve_steps\[0\]: step 1 is not after the encode step 2$"
    ):
        edits.do_add_memory_target(
            blank, bob, 2, key="x", value="1", encode_step=2, retrieve_steps=[1]
        )
    with pytest.raises(InvalidData, match=r"^evidence.bounds: must have x2 >= x1"):
        edits.do_add_memory_target(
            blank, bob, 2, key="x", value="1", encode_step=2, evidence={"bounds": [5, 5, 1, 1]}
        )
    with pytest.raises(InvalidData, match=r"^key: must not be empty$"):
        edits.do_add_memory_target(blank, bob, 2, key=" ", value="1", encode_step=2)
    with pytest.raises(InvalidData, match=r"^retrieve_steps\[0\]: step 0 is not after"):
        edits.do_update_memory_target(blank, bob, 2, target.pk, {"retrieve_steps": [0]})
    edits.do_update_memory_target(
        blank, bob, 2, target.pk, {"encode_step": 0, "retrieve_steps": [5]}
    )
    target.refresh_from_db()
    assert (target.encode_step, target.retrieve_steps) == (0, [5])
    edits.do_delete_memory_target(blank, bob, 3, target.pk)
    assert not blank.memory_targets.exists()


def test_anchors_get_the_next_key_and_links_are_checked(blank, bob):
    a1 = edits.do_add_anchor(blank, bob, 1, step=0, type="context_info", content="price 12.50")
    a2 = edits.do_add_anchor(blank, bob, 2, step=5, type="finish", content="bought")
    assert (a1.key, a2.key) == ("a1", "a2")
    with pytest.raises(InvalidData, match=r"^type: unknown anchor type 'note'"):
        edits.do_add_anchor(blank, bob, 3, step=0, type="note", content="x")
    with pytest.raises(InvalidData, match=r"^content: must not be empty$"):
        edits.do_add_anchor(blank, bob, 3, step=0, type="finish", content="")
    link = edits.do_add_anchor_link(
        blank, bob, 3, source="a1", target="a2", relation="enables", critical=True
    )
    with pytest.raises(InvalidData, match=r"^the link a1 -enables-> a2 already exists$"):
        edits.do_add_anchor_link(blank, bob, 4, source="a1", target="a2", relation="enables")
    with pytest.raises(InvalidData, match=r"^anchor 'a1' links to itself$"):
        edits.do_add_anchor_link(blank, bob, 4, source="a1", target="a1", relation="blocks")
    with pytest.raises(InvalidData, match=r"^target: anchor 'a9' is not an anchor of this"):
        edits.do_add_anchor_link(blank, bob, 4, source="a1", target="a9", relation="blocks")
    with pytest.raises(InvalidData, match=r"^relation: unknown relation 'causes'"):
        edits.do_add_anchor_link(blank, bob, 4, source="a1", target="a2", relation="causes")
    edits.do_update_anchor(blank, bob, 4, "a2", {"description": "the order exists"})
    edits.do_delete_anchor(blank, bob, 5, "a1")
    assert list(blank.anchors.values_list("key", flat=True)) == ["a2"]
    assert not type(link).objects.filter(pk=link.pk).exists()
    assert edits.do_add_anchor(blank, bob, 6, step=1, type="exception", content="x").key == "a3"


# ---------------------------------------------------------------- concurrency


def test_a_stale_edit_is_refused_naming_who_changed_what(blank, alice, bob):
    edits.do_split_subgoal(blank, alice, 1, 2)  # alice saves first
    stale = Trajectory.objects.get(pk=blank.pk)
    with pytest.raises(protocol.StaleVersion) as refused:
        edits.do_split_subgoal(stale, bob, 1, 4)  # bob still has version 1
    assert refused.value.version == 2
    assert str(refused.value).startswith("alice changed this trajectory at ")
    assert str(refused.value).endswith("(version 2); you edited version 1: reload to see it")
    assert ranges(blank) == [(0, 1), (2, 5)]


def test_the_version_is_required(blank, bob):
    with pytest.raises(InvalidData, match=r"^version: must be the integer version you edited"):
        edits.do_split_subgoal(blank, bob, None, 2)


def test_edits_wait_for_the_status(blank, alice, bob):
    Trajectory.objects.filter(pk=blank.pk).update(status="in_review")
    with pytest.raises(InvalidData, match=r"^this trajectory is in review: its labels can be"):
        edits.do_split_subgoal(blank, bob, 1, 2)


# ---------------------------------------------------------------- undo and redo


def test_undo_and_redo_restore_the_labels_as_new_edits(blank, alice, bob):
    split_in_three(blank, bob)
    first = blank.subgoals.order_by("start").first()
    edits.do_update_subgoal(blank, bob, blank.version, first.pk, {"text": "Open"})
    edits.do_update_step(blank, bob, blank.version, 1, {"thought": "look"})
    assert protocol.undo_state(blank) == {"can_undo": True, "can_redo": False}

    assert protocol.do_undo(blank, alice, blank.version)  # the step's thought
    assert Step.objects.get(trajectory=blank, index=1).thought == "Press buy 1"
    assert protocol.do_undo(blank, alice, blank.version)  # the subgoal text
    assert blank.subgoals.get(pk=first.pk).text == ""
    assert protocol.do_undo(blank, alice, blank.version)  # the second split
    assert ranges(blank) == [(0, 1), (2, 5)]
    assert protocol.undo_state(blank) == {"can_undo": True, "can_redo": True}

    assert protocol.do_redo(blank, alice, blank.version)
    assert ranges(blank) == [(0, 1), (2, 3), (4, 5)]
    assert protocol.do_redo(blank, alice, blank.version)
    assert blank.subgoals.get(pk=first.pk).text == "Open"  # ids survive undo and redo
    kinds = list(AuditEvent.objects.filter(trajectory=blank).values_list("kind", flat=True)[:5])
    assert kinds == [
        "labels.redone",
        "labels.redone",
        "labels.undone",
        "labels.undone",
        "labels.undone",
    ]
    assert blank.version == 10  # 4 edits, 3 undos, 2 redos


def test_a_new_edit_clears_the_redo_stack(blank, bob):
    edits.do_split_subgoal(blank, bob, 1, 2)
    protocol.do_undo(blank, bob, blank.version)
    assert ranges(blank) == []
    edits.do_split_subgoal(blank, bob, blank.version, 3)
    assert not protocol.do_redo(blank, bob, blank.version)
    assert ranges(blank) == [(0, 2), (3, 5)]


def test_undo_of_an_anchor_deletion_brings_its_links_back(labelled, bob):
    edits.do_delete_anchor(labelled, bob, 1, "a1")
    assert not labelled.anchors.filter(key="a1").exists()
    protocol.do_undo(labelled, bob, labelled.version)
    labels = all_labels(labelled)
    assert [a["key"] for a in labels["anchors"]] == ["a1", "a2"]
    assert [(x["source"], x["target"], x["critical"]) for x in labels["links"]] == [
        ("a1", "a2", True)
    ]


def test_nothing_to_undo(blank, bob):
    assert not protocol.do_undo(blank, bob, 1)
    assert blank.version == 1


# ---------------------------------------------------------------- submit and review


def label_completely(t, actor):
    split_in_three(t, actor)
    for g in t.subgoals.all():
        edits.do_update_subgoal(
            t, actor, t.version, g.pk, {"text": f"part {g.start}", "success": "yes"}
        )


def test_submit_lists_what_is_missing(blank, bob):
    edits.do_split_subgoal(blank, bob, 1, 2)
    edits.do_delete_subgoal(blank, bob, 2, blank.subgoals.get(start=0).pk)
    with pytest.raises(InvalidData) as refused:
        s.do_submit(blank, bob, 3)
    assert str(refused.value) == (
        "not ready for review: steps 0–1 not in any subgoal; subgoal 2–5 has no text; "
        "subgoal 2–5 has no success label"
    )


def test_submit_and_review(blank, alice, bob):
    label_completely(blank, bob)
    s.do_submit(blank, bob, blank.version)
    assert blank.status == "in_review"
    with pytest.raises(InvalidData, match=r"^comments: say why: a send back needs a comment$"):
        s.do_review(blank, alice, blank.version, "send_back")
    s.do_review(blank, alice, blank.version, "send_back", [{"step": 3, "text": "split later"}])
    assert Trajectory.objects.get(pk=blank.pk).status == "annotating"
    comment = ReviewComment.objects.get(trajectory=blank)
    assert (comment.step_index, comment.text, comment.author, comment.resolved) == (
        3,
        "split later",
        alice,
        False,
    )
    s.do_submit(blank, bob, blank.version)
    assert ReviewComment.objects.get(trajectory=blank).resolved
    s.do_review(blank, alice, blank.version, "approve")
    assert Trajectory.objects.get(pk=blank.pk).status == "approved"
    with pytest.raises(InvalidData, match=r"^this trajectory is approved, not in review$"):
        s.do_review(blank, alice, blank.version, "approve")
    kinds = set(AuditEvent.objects.filter(trajectory=blank).values_list("kind", flat=True))
    assert {"trajectory.submitted", "review.send_back", "review.approve"} <= kinds


# ---------------------------------------------------------------- assignment


def test_double_annotation_copies_the_recording_without_its_labels(labelled, alice, bob, project):
    from django.contrib.auth import get_user_model

    from trajectories.services import do_set_membership

    dave = get_user_model().objects.create_user("dave")
    do_set_membership(project, dave, "annotator", alice)
    edits.do_add_note(labelled, bob, labelled.version, "bob was here")
    copy = s.do_assign_double(labelled, bob, dave, alice)
    assert copy.copy_of == labelled and copy.uid != labelled.uid
    assert copy.steps.count() == 3 and copy.screens.count() == 4
    assert copy.final_screen.trajectory_id == copy.pk
    assert (
        copy.steps.get(index=0).screen.screenshot_id
        == labelled.steps.get(index=0).screen.screenshot_id
    )
    assert list(copy.steps.values_list("action", flat=True)) == list(
        labelled.steps.values_list("action", flat=True)
    )
    # Blind: dave starts from the recording, not from bob's labels.
    copied = all_labels(copy)
    assert (copied["subgoals"], copied["memory_targets"], copied["anchors"]) == ([], [], [])
    assert copied["links"] == []
    assert {(x["thought"], x["summary"], x["memory"]) for x in copied["steps"]} == {("", "", "")}
    assert all(x["trainable"] for x in copied["steps"])
    copy.refresh_from_db()
    assert "notes" not in copy.metadata and copy.metadata["note"] == "ünïcode ✓"
    original = all_labels(labelled)
    assert len(original["subgoals"]) == 2 and original["steps"][0]["memory"] == "price is 12.50 €"
    assert list(
        Assignment.objects.filter(trajectory=copy).values_list("annotator__username", flat=True)
    ) == ["dave"]


def test_spread_evenly(project, alice, bob):
    from django.contrib.auth import get_user_model

    from tests.annotate.conftest import blank_record
    from trajectories.services import do_import_trajectory, do_set_membership

    dave = get_user_model().objects.create_user("dave")
    do_set_membership(project, dave, "annotator", alice)
    made = [do_import_trajectory(project, blank_record(seed=i))[0] for i in range(5)]
    s.do_spread_assignments(project, made, [bob, dave], alice)
    counts = {u.username: Assignment.objects.filter(annotator=u).count() for u in (bob, dave)}
    assert counts == {"bob": 3, "dave": 2}
    with pytest.raises(InvalidData, match=r"^charlie is not an annotator of Shops$"):
        from django.contrib.auth import get_user_model as gum

        s.do_assign(made[0], gum().objects.create_user("charlie"), alice)


def test_subgoal_rows_stay_valid(blank, bob):
    split_in_three(blank, bob)
    assert Subgoal.objects.filter(trajectory=blank).count() == 3
