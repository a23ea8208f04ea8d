"""Agreement numbers against values computed by hand."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotate import agreement as ag
from annotate import services as s
from trajectories.labels import edits
from trajectories.models import Trajectory
from trajectories.services import do_set_membership

A = [(0, 2), (3, 5), (6, 9)]  # boundaries {3, 6}
B = [(0, 3), (4, 4), (5, 9)]  # boundaries {4, 5}


def test_boundaries_are_the_cuts_inside_the_trajectory():
    assert ag.boundaries(A, 10) == {3, 6}
    assert ag.boundaries(B, 10) == {4, 5}
    assert ag.boundaries([(2, 4)], 10) == {2, 5}  # uncovered steps around it
    assert ag.boundaries([(0, 9)], 10) == set()


def test_boundary_f1_with_a_tolerance():
    assert ag.boundary_f1({3, 6}, {4, 5}, k=1) == 1.0  # 3~4, 6~5
    assert ag.boundary_f1({3, 6}, {4, 5}, k=0) == 0.0
    assert ag.boundary_f1({3, 6}, {4}, k=1) == pytest.approx(2 / 3)  # P 1/2, R 1/1
    # One-to-one: 4 can match 3 or 5 but only once; 3~4 (d 1) and 5~6 (d 1).
    assert ag.match_boundaries({3, 5}, {4, 6}, k=1) == 2
    assert ag.match_boundaries({3, 5}, {4}, k=1) == 1
    assert ag.boundary_f1(set(), set(), k=1) == 1.0


def test_subgoals_match_when_both_ends_are_within_k():
    assert ag.match_subgoals(A, B, k=1) == [(0, 0), (2, 2), (1, 1)]
    assert ag.match_subgoals(A, B, k=0) == []


def test_cohen_kappa():
    pairs = [("yes", "yes"), ("yes", "no"), ("no", "no"), ("uncertain", "yes"), ("yes", "yes")]
    # p_o = 3/5; p_e = (3*3 + 1*2 + 1*0) / 25 = 11/25; kappa = (0.6 - 0.44) / 0.56
    assert ag.cohen_kappa(pairs) == pytest.approx(0.16 / 0.56)
    assert ag.cohen_kappa([("yes", "yes"), ("yes", "yes")]) == 1.0
    assert ag.cohen_kappa([("yes", "no"), ("no", "yes")]) == pytest.approx(-1.0)
    assert ag.cohen_kappa([]) is None


def test_anchor_type_agreement():
    a = {(1, "subgoal"), (4, "state_change"), (9, "finish")}
    b = {(1, "subgoal"), (4, "dependency"), (9, "finish"), (7, "exception")}
    assert ag.anchor_agreement(a, b) == pytest.approx(2 / 5)
    assert ag.anchor_agreement(set(), set()) is None


@pytest.mark.django_db
def test_project_agreement_pools_the_pairs(project, blank, alice, bob):
    dave = get_user_model().objects.create_user("dave")
    do_set_membership(project, dave, "annotator", alice)
    copy = s.do_assign_double(blank, bob, dave, alice)
    # bob: 0–1 yes, 2–3 no, 4–5 yes; dave: 0–2 yes, 3–5 yes (6 steps)
    for t, cuts, labels in ((blank, [2, 4], "yny"), (copy, [3], "yy")):
        edits.do_split_subgoal(t, alice, t.version, 0)
        for cut in cuts:
            edits.do_split_subgoal(t, alice, t.version, cut)
        for g, label in zip(t.subgoals.order_by("start"), labels, strict=True):
            success = {"y": "yes", "n": "no"}[label]
            edits.do_update_subgoal(t, alice, t.version, g.pk, {"success": success, "text": "x"})
    edits.do_add_anchor(blank, alice, blank.version, step=1, type="context_info", content="x")
    edits.do_add_anchor(copy, alice, copy.version, step=1, type="context_info", content="x")
    edits.do_add_anchor(copy, alice, copy.version, step=5, type="finish", content="done")
    s.do_submit(blank, bob, blank.version)
    s.do_submit(copy, dave, copy.version)

    result = ag.project_agreement(project, k=1)
    assert result.waiting == 0
    (row,) = result.rows
    assert row.annotators == ("bob", "dave")
    # boundaries {2, 4} vs {3}: 2~3 matched (d 1, before 4~3 by the tie rule) → F1 2·1/3
    assert row.counts.boundary_f1 == pytest.approx(2 / 3)
    # subgoals: 0–1~0–2 (cost 1) and 4–5~3–5 (cost 1); 2–3 vs 3–5 is taken → yes/yes, yes/yes
    assert row.counts.label_pairs == [("yes", "yes"), ("yes", "yes")]
    assert row.counts.kappa == 1.0
    assert row.counts.anchor_agreement == pytest.approx(1 / 2)
    assert list(result.by_pair) == [("bob", "dave")]
    assert result.overall.boundary_f1 == pytest.approx(2 / 3)


@pytest.fixture
def double(project, labelled, alice, bob):
    """bob labels ``labelled`` (it has every kind of label), erin its copy."""
    erin = get_user_model().objects.create_user("erin")
    do_set_membership(project, erin, "annotator", alice)
    return labelled, s.do_assign_double(labelled, bob, erin, alice)


@pytest.mark.django_db
def test_a_pair_nobody_has_worked_on_is_not_compared(project, double):
    # The original's labels are not the copy's: nothing agrees perfectly by construction.
    result = ag.project_agreement(project)
    assert (result.rows, result.by_pair, result.overall.trajectories) == ([], {}, 0)
    assert result.waiting == 1


@pytest.mark.django_db
def test_a_pair_is_compared_once_both_have_submitted(project, double):
    original, copy = double
    Trajectory.objects.filter(pk=original.pk).update(status="in_review")
    assert (ag.project_agreement(project).rows, ag.project_agreement(project).waiting) == ([], 1)
    for status in ("in_review", "approved", "rejected"):
        Trajectory.objects.filter(pk=copy.pk).update(status=status)
        result = ag.project_agreement(project)
        assert [(r.trajectory, r.copy) for r in result.rows] == [(original, copy)], status
        assert result.waiting == 0
    # Sent back to its annotator: not handed on any more.
    Trajectory.objects.filter(pk=original.pk).update(status="annotating")
    assert ag.project_agreement(project).waiting == 1
