"""Whose turn it is (annotate/queues.py): the next item the workspace offers after a submit or
a review, for alice (admin), bob (annotator), charlie (outsider) and a site admin."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from annotate.models import ReviewComment
from annotate.queues import next_item, review_queue_of, work_of
from annotate.services import do_assign
from tests.trajectories.builders import make_record
from trajectories.models import Status, Trajectory
from trajectories.services import do_create_project, do_import_trajectory, do_set_membership

pytestmark = pytest.mark.django_db


def trajectories(project, count: int, start: int = 0, **fields) -> list[Trajectory]:
    made = []
    for seed in range(start, start + count):
        trajectory, _ = do_import_trajectory(project, make_record(steps=2, seed=seed))
        made.append(trajectory)
    if fields:
        Trajectory.objects.filter(pk__in=[t.pk for t in made]).update(**fields)
    return made


def aged(trajectory: Trajectory, minutes: int) -> None:
    Trajectory.objects.filter(pk=trajectory.pk).update(
        updated_at=timezone.now() - timedelta(minutes=minutes)
    )


def test_a_reviewer_gets_the_oldest_in_review_of_the_projects_they_review(
    project, alice, bob, charlie
):
    first, second, third = trajectories(project, 3, status=Status.IN_REVIEW)
    for trajectory, age in ((first, 30), (second, 90), (third, 60)):
        aged(trajectory, age)
    elsewhere = do_create_project("Elsewhere", charlie)
    do_set_membership(elsewhere, alice, "annotator", charlie)  # alice only annotates there
    (foreign,) = trajectories(elsewhere, 1, start=10, status=Status.IN_REVIEW)
    aged(foreign, 500)
    assert next_item(alice, first, reviewing=True) == second
    assert next_item(alice, second, reviewing=True) == third
    assert list(review_queue_of(alice)) == [second, third, first]
    assert next_item(bob, first, reviewing=True) is None  # an annotator reviews nothing
    assert next_item(charlie, foreign, reviewing=True) is None  # nothing else there
    site_admin = get_user_model().objects.create_superuser("root", "root@example.org", "pw")
    assert next_item(site_admin, second, reviewing=True) == foreign


def test_an_annotator_gets_their_next_assigned_work_sent_back_first(project, alice, bob):
    current, plain, sent_back, submitted = trajectories(project, 4)
    (unassigned,) = trajectories(project, 1, start=9)
    for trajectory in (current, plain, sent_back, submitted):
        do_assign(trajectory, bob, alice)
    Trajectory.objects.filter(pk=submitted.pk).update(status=Status.IN_REVIEW)
    ReviewComment.objects.create(trajectory=sent_back, author=alice, text="Fix step 1")
    assert next_item(bob, current, reviewing=False) == sent_back
    assert next_item(bob, sent_back, reviewing=False) in (current, plain)
    assert set(work_of(bob)) == {current, plain, sent_back, submitted}
    assert unassigned not in work_of(bob)
    assert next_item(alice, current, reviewing=False) is None  # nothing assigned to alice


def test_the_workspace_offers_the_next_item_once_the_work_is_done(client, project, alice, bob):
    done, waiting = trajectories(project, 2)
    for trajectory in (done, waiting):
        do_assign(trajectory, bob, alice)
    Trajectory.objects.filter(pk=done.pk).update(status=Status.IN_REVIEW)
    client.force_login(bob)
    html = client.get(reverse("annotate-workspace", args=[done.pk])).content.decode()
    assert f'id="ws-next" href="{reverse("annotate-workspace", args=[waiting.pk])}"' in html
    html = client.get(reverse("annotate-workspace", args=[waiting.pk])).content.decode()
    assert 'id="ws-next"' not in html  # still to be done
