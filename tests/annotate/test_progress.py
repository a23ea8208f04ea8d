"""A project's progress page: statuses, shares annotated and approved, work and time per person."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate.progress import duration_text, project_progress
from annotate.services import do_assign
from tests.trajectories.builders import make_record
from trajectories import events
from trajectories.models import AuditEvent, Trajectory
from trajectories.services import do_import_trajectory, record_event

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def _work(actor, trajectory, minutes: float, kind: str = events.STEP_UPDATED) -> None:
    event = record_event(kind, actor=actor, trajectory=trajectory)
    AuditEvent.objects.filter(pk=event.pk).update(at=T0 + timedelta(minutes=minutes))


def _trajectories(project, statuses: list[str]) -> list[Trajectory]:
    made = []
    for seed, status in enumerate(statuses):
        trajectory, _ = do_import_trajectory(project, make_record(steps=1, seed=100 + seed))
        Trajectory.objects.filter(pk=trajectory.pk).update(status=status)
        made.append(trajectory)
    return made


@pytest.fixture
def busy(project, alice, bob):
    statuses = ["annotating", "annotating", "in_review", "approved", "approved", "rejected"]
    made = _trajectories(project, statuses)
    for trajectory in made[:4]:
        do_assign(trajectory, bob, alice)
    # bob: a session of 0, 2 and 5 minutes, a pause of an hour, a session of 3 minutes.
    for minutes in (0, 2, 5, 65, 68):
        _work(bob, made[0], minutes)
    _work(bob, made[2], 66, events.TRAJECTORY_SUBMITTED)
    # alice reviews: one change alone (a session of no length).
    _work(alice, made[2], 70, events.REVIEW_APPROVED)
    record_event(events.ASSIGNMENT_ADDED, actor=alice, trajectory=made[0])  # not labelling work
    return made


def test_it_counts_statuses_shares_and_each_persons_work(project, busy, alice, bob):
    progress = project_progress(project, gap_s=600)
    assert progress.total == 6
    assert [(s.status, s.count) for s in progress.by_status] == [
        ("annotating", 2),
        ("in_review", 1),
        ("approved", 2),
        ("rejected", 1),
    ]
    assert round(progress.annotated_percent) == 67  # in review, approved or rejected: 4 of 6
    assert round(progress.approved_percent) == 33
    bob_work, alice_work = progress.people
    assert (bob_work.username, bob_work.assigned, bob_work.submitted, bob_work.approved) == (
        "bob",
        4,
        2,
        1,
    )
    assert (bob_work.changes, bob_work.touched, bob_work.sessions) == (6, 2, 2)
    assert bob_work.time_spent == "8 min"  # 5 + 3, the hour's pause not counted
    assert (alice_work.changes, alice_work.sessions, alice_work.time_spent) == (1, 1, "0 s")
    assert progress.time_spent == "8 min"
    assert bob_work.changes_percent == 100 and round(alice_work.changes_percent) == 17


def test_a_longer_gap_joins_sessions(project, alice, bob):
    (trajectory,) = _trajectories(project, ["annotating"])
    for minutes in (0, 30, 80, 300):
        _work(bob, trajectory, minutes)
    (work,) = project_progress(project, gap_s=3600).people
    assert (work.sessions, work.time_spent) == (2, "1 h 20 min")  # 0–80, then 300 alone
    (work,) = project_progress(project, gap_s=600).people
    assert (work.sessions, work.time_spent) == (4, "0 s")
    assert duration_text(42) == "42 s"


def test_the_page_shows_the_figures_and_bars(client, project, busy, alice):
    client.force_login(alice)
    page = client.get(f"/projects/{project.pk}/progress/").content.decode()
    assert 'id="annotated-percent">67%' in page
    assert 'id="approved-percent">33%' in page
    assert 'class="status-annotating" style="width: 33.33%"' in page
    assert '<tr data-person="bob">' in page and "8 min · 2 sessions" in page


def test_its_query_count_does_not_grow_with_the_trajectories(client, project, alice, bob):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(f"/projects/{project.pk}/progress/").status_code == 200
        return len(captured)

    client.force_login(alice)
    made = _trajectories(project, ["annotating", "approved"])
    for trajectory in made:
        do_assign(trajectory, bob, alice)
        _work(bob, trajectory, 1)
    few = queries()
    made = _trajectories(project, ["in_review", "rejected"] * 10)
    for i, trajectory in enumerate(made):
        do_assign(trajectory, bob, alice)
        _work(bob, trajectory, 2 + i)
        _work(alice, trajectory, 3 + i, events.REVIEW_COMMENTED)
    assert queries() == few


def test_an_outsider_cannot_see_it(client, project, charlie):
    client.force_login(charlie)
    assert client.get(f"/projects/{project.pk}/progress/").status_code == 404


def test_the_submitter_is_credited_when_nobody_is_assigned(project, alice, bob, dave):
    """bob labels and submits work nobody assigned; alice approves one of the two."""
    approved, in_review, assigned_elsewhere = _trajectories(project, ["annotating"] * 3)
    for trajectory in (approved, in_review):
        record_event(events.TRAJECTORY_SUBMITTED, actor=bob, trajectory=trajectory)
    # Submitted by bob, but assigned to alice: hers.
    record_event(events.TRAJECTORY_SUBMITTED, actor=bob, trajectory=assigned_elsewhere)
    do_assign(assigned_elsewhere, alice, alice)
    Trajectory.objects.filter(pk=approved.pk).update(status="approved")
    Trajectory.objects.filter(pk__in=[in_review.pk, assigned_elsewhere.pk]).update(
        status="in_review"
    )
    people = {p.username: p for p in project_progress(project).people}
    bob_work = people["bob"]
    assert (bob_work.assigned, bob_work.submitted, bob_work.approved) == (0, 2, 1)
    alice_work = people["alice"]
    assert (alice_work.assigned, alice_work.submitted, alice_work.approved) == (1, 1, 0)


def test_the_last_submitter_is_credited(project, alice, bob, dave):
    (trajectory,) = _trajectories(project, ["approved"])
    _work(bob, trajectory, 0, events.TRAJECTORY_SUBMITTED)
    _work(dave, trajectory, 5, events.TRAJECTORY_SUBMITTED)
    people = {p.username: p for p in project_progress(project).people}
    assert (people["dave"].submitted, people["dave"].approved) == (1, 1)
    assert (people["bob"].submitted, people["bob"].approved) == (0, 0)


def test_the_page_shows_the_unassigned_submitter(client, project, alice, bob):
    (trajectory,) = _trajectories(project, ["approved"])
    _work(bob, trajectory, 0, events.TRAJECTORY_SUBMITTED)
    client.force_login(alice)
    page = client.get(f"/projects/{project.pk}/progress/").content.decode()
    row = page.split('<tr data-person="bob">')[1].split("</tr>")[0]
    assert [cell.split("<")[0] for cell in row.split('<td class="num">')[1:4]] == ["0", "1", "1"]
