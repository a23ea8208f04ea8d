"""Work sent back reaches its annotators' inbox, and each review comment is resolved on its own."""

from __future__ import annotations

import pytest

from annotate import services as s
from annotate.models import ReviewComment
from annotate.queues import inbox_of
from tests.annotate.conftest import blank_record
from tests.annotate.test_services import label_completely
from trajectories import events
from trajectories.models import AuditEvent, Trajectory
from trajectories.services import do_import_trajectory, do_set_membership

pytestmark = pytest.mark.django_db


def send_back(trajectory, annotator, reviewer, comments=None) -> Trajectory:
    label_completely(trajectory, annotator)
    s.do_submit(trajectory, annotator, trajectory.version)
    comments = comments or [
        {"step": 1, "text": "the subgoal starts one step early"},
        {"step": None, "text": "the answer is missing its currency"},
    ]
    s.do_review(trajectory, reviewer, trajectory.version, "send_back", comments)
    return Trajectory.objects.get(pk=trajectory.pk)


@pytest.fixture
def returned(blank, alice, bob) -> Trajectory:
    """bob's assigned trajectory, sent back by alice with two comments."""
    return send_back(blank, bob, alice)


def test_the_assigned_annotator_finds_it_in_the_inbox_with_the_comments(
    returned, alice, bob, charlie
):
    (item,) = inbox_of(bob)
    assert item == returned
    assert [(c.step_index, c.text, c.author) for c in item.comments] == [
        (None, "the answer is missing its currency", alice),
        (1, "the subgoal starts one step early", alice),
    ]
    assert not inbox_of(alice).exists()  # the reviewer is not who it was sent back to
    assert not inbox_of(charlie).exists()


def test_an_unassigned_recording_goes_back_to_its_recorder(project, alice, bob):
    trajectory, _ = do_import_trajectory(project, blank_record(seed=9))
    Trajectory.objects.filter(pk=trajectory.pk).update(recorded_by=bob)
    trajectory.refresh_from_db()
    send_back(trajectory, bob, alice)
    assert list(inbox_of(bob)) == [trajectory]


def test_each_comment_is_resolved_on_its_own_with_who_and_when(returned, bob):
    early, currency = ReviewComment.objects.filter(trajectory=returned).order_by("id")
    assert s.do_resolve_comment(early, bob) is True
    early.refresh_from_db()
    currency.refresh_from_db()
    assert (early.resolved, early.resolved_by, early.resolved_at is not None) == (True, bob, True)
    assert (currency.resolved, currency.resolved_by) == (False, None)
    event = AuditEvent.objects.get(kind=events.REVIEW_COMMENT_RESOLVED)
    assert (event.actor, event.object_id, event.before, event.after) == (
        bob,
        str(early.pk),
        {"resolved": False},
        {"resolved": True, "step": 1, "text": "the subgoal starts one step early"},
    )
    assert s.do_resolve_comment(early, bob) is False  # already: nothing recorded
    assert AuditEvent.objects.filter(kind=events.REVIEW_COMMENT_RESOLVED).count() == 1
    assert list(inbox_of(bob)) == [returned]  # one comment is still open

    s.do_resolve_comment(currency, bob)
    assert not inbox_of(bob).exists()
    s.do_resolve_comment(currency, bob, resolved=False)
    currency.refresh_from_db()
    assert (currency.resolved, currency.resolved_by, currency.resolved_at) == (False, None, None)
    assert AuditEvent.objects.filter(kind=events.REVIEW_COMMENT_REOPENED).count() == 1
    assert list(inbox_of(bob)) == [returned]


def test_submitting_again_resolves_the_rest_in_the_submitters_name(returned, bob):
    s.do_submit(returned, bob, returned.version)
    assert set(ReviewComment.objects.values_list("resolved", "resolved_by")) == {(True, bob.pk)}
    assert not inbox_of(bob).exists()


def test_the_inbox_page_resolves_one_comment_and_comes_back(client, returned, bob):
    early = ReviewComment.objects.get(trajectory=returned, step_index=1)
    client.force_login(bob)
    page = client.get("/inbox/").content.decode()
    assert "the subgoal starts one step early" in page and "the answer is missing" in page
    response = client.post(
        f"/review/comments/{early.pk}/resolve/", {"resolved": "1", "next": "/inbox/"}
    )
    assert response.status_code == 302 and response["Location"] == "/inbox/"
    early.refresh_from_db()
    assert early.resolved and early.resolved_by == bob
    response = client.post(
        f"/review/comments/{early.pk}/resolve/", {"next": "https://elsewhere.example/"}
    )
    assert response["Location"] == "/inbox/"  # never sent off the site


def test_who_may_resolve(client, project, returned, alice, charlie, django_user_model):
    comment = ReviewComment.objects.filter(trajectory=returned).first()
    client.force_login(charlie)
    assert client.post(f"/review/comments/{comment.pk}/resolve/").status_code == 404
    dave = django_user_model.objects.create_user("dave", password="dave-password")
    do_set_membership(project, dave, "annotator", alice)
    client.force_login(dave)  # an annotator of the project, not of this trajectory
    response = client.post(f"/review/comments/{comment.pk}/resolve/")
    assert response.status_code == 403
    assert "resolve comments" in response.content.decode()
    comment.refresh_from_db()
    assert not comment.resolved
    client.force_login(alice)  # the reviewer may
    assert client.post(f"/review/comments/{comment.pk}/resolve/").status_code == 302
    assert client.post("/review/comments/999999/resolve/").status_code == 404


def test_the_workspace_resolves_a_comment_and_shows_open_and_resolved(client, returned, bob):
    early = ReviewComment.objects.get(trajectory=returned, step_index=1)
    client.force_login(bob)
    url = f"/trajectories/{returned.pk}/workspace/comment_resolve/"
    response = client.post(url, {"comment": early.pk, "resolved": "1", "step": 1})
    assert response.status_code == 200
    page = response.content.decode()
    assert "1 open · 2 in all" in page
    assert f'class="ws-comment resolved muted" data-comment="{early.pk}"' in page
    response = client.post(url, {"comment": "12345", "step": 1})
    assert response.status_code == 400
    assert "comment: no review comment 12345 on this trajectory" in response.content.decode()


def test_the_api_resolves_one_comment(returned, bob, charlie):
    from tests.trajectories.test_api import API, as_user

    early = ReviewComment.objects.get(trajectory=returned, step_index=1)
    url = f"{API}/trajectories/{returned.pk}/comments/{early.pk}/"
    response = as_user(bob).patch(url, {"resolved": True}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["resolved"], body["resolved_by"], body["step"]) == (True, "bob", 1)
    listed = as_user(bob).get(f"{API}/trajectories/{returned.pk}/comments/").json()
    assert [(c["step"], c["resolved"]) for c in listed] == [(1, True), (None, False)]
    response = as_user(bob).patch(url, {"resolved": "maybe"}, format="json")
    assert response.status_code == 400 and response.json()["detail"].startswith("resolved:")
    assert as_user(charlie).patch(url, {"resolved": False}, format="json").status_code == 404
    other = f"{API}/trajectories/{returned.pk}/comments/999999/"
    response = as_user(bob).patch(other, {"resolved": True}, format="json")
    assert response.status_code == 422
    assert response.json()["detail"] == "comment: no review comment 999999 on this trajectory"
