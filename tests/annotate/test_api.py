"""The labels API with alice (admin), bob (assigned annotator), charlie (outsider), and
dave (unassigned annotator) and erin (reviewer) where roles matter."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from trajectories.models import Trajectory
from trajectories.services import do_set_membership

pytestmark = pytest.mark.django_db

API = "/api/v1"


def as_user(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def dave(project, alice):
    user = get_user_model().objects.create_user("dave")
    do_set_membership(project, user, "annotator", alice)
    return user


@pytest.fixture
def erin(project, alice):
    user = get_user_model().objects.create_user("erin")
    do_set_membership(project, user, "reviewer", alice)
    return user


def edits(t) -> list[tuple[str, str, dict]]:
    """One request per edit endpoint (valid for the blank trajectory at version 1)."""
    base = f"{API}/trajectories/{t.pk}"
    return [
        ("post", f"{base}/subgoals/split/", {"version": 1, "step": 2}),
        ("post", f"{base}/subgoals/1/merge/", {"version": 1}),
        ("patch", f"{base}/subgoals/1/", {"version": 1, "text": "x"}),
        ("delete", f"{base}/subgoals/1/?version=1", {}),
        ("patch", f"{base}/step-labels/0/", {"version": 1, "memory": "m"}),
        (
            "post",
            f"{base}/memory-targets/",
            {"version": 1, "key": "k", "value": "v", "encode_step": 0},
        ),
        ("patch", f"{base}/memory-targets/1/", {"version": 1, "value": "v"}),
        ("delete", f"{base}/memory-targets/1/?version=1", {}),
        ("post", f"{base}/anchors/", {"version": 1, "step": 0, "type": "finish", "content": "c"}),
        ("patch", f"{base}/anchors/a1/", {"version": 1, "content": "c"}),
        ("delete", f"{base}/anchors/a1/?version=1", {}),
        (
            "post",
            f"{base}/anchor-links/",
            {"version": 1, "source": "a1", "target": "a2", "relation": "enables"},
        ),
        ("delete", f"{base}/anchor-links/1/?version=1", {}),
        ("post", f"{base}/undo/", {"version": 1}),
        ("post", f"{base}/redo/", {"version": 1}),
        ("post", f"{base}/submit/", {"version": 1}),
    ]


def reads(t, project) -> list[str]:
    base = f"{API}/trajectories/{t.pk}"
    return [
        f"{base}/labels/",
        f"{base}/comments/",
        f"{base}/history/",
        f"{API}/projects/{project.pk}/agreement/",
    ]


def send(client, method, url, data):
    return getattr(client, method)(url, data, format="json")


def test_outsiders_see_nothing(blank, project, charlie):
    client = as_user(charlie)
    for method, url, data in edits(blank):
        assert send(client, method, url, data).status_code == 404, url
    for url in reads(blank, project):
        assert client.get(url).status_code == 404, url
    assert (
        send(
            client,
            "post",
            f"{API}/trajectories/{blank.pk}/review/",
            {"version": 1, "decision": "approve"},
        ).status_code
        == 404
    )
    assert client.get(f"{API}/projects/{project.pk}/assignments/").status_code == 404


def test_anonymous_users_are_asked_to_log_in(blank):
    assert APIClient().get(f"{API}/trajectories/{blank.pk}/labels/").status_code == 401


@pytest.mark.parametrize("who", ["dave", "erin"])
def test_members_who_are_not_assigned_cannot_edit(blank, project, who, request):
    client = as_user(request.getfixturevalue(who))
    for method, url, data in edits(blank):
        response = send(client, method, url, data)
        assert response.status_code == 403, url
        assert response.json() == {
            "detail": "Only the annotators assigned to this trajectory, and admins, can edit "
            "its labels"
        }
    for url in reads(blank, project):
        assert client.get(url).status_code == 200, url


def test_the_assigned_annotator_and_the_admin_can_edit(blank, alice, bob):
    url = f"{API}/trajectories/{blank.pk}/subgoals/split/"
    response = send(as_user(bob), "post", url, {"version": 1, "step": 2})
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 2
    assert [(g["start"], g["end"]) for g in body["subgoals"]] == [(0, 1), (2, 5)]
    assert body["can_undo"] is True
    assert send(as_user(alice), "post", url, {"version": 2, "step": 4}).status_code == 200


def test_a_stale_version_is_a_conflict_with_the_stored_version(blank, alice, bob):
    url = f"{API}/trajectories/{blank.pk}/subgoals/split/"
    send(as_user(alice), "post", url, {"version": 1, "step": 2})
    response = send(as_user(bob), "post", url, {"version": 1, "step": 4})
    assert response.status_code == 409
    body = response.json()
    assert body["version"] == 2
    assert body["detail"].startswith("alice changed this trajectory at ")


def test_rule_violations_are_bad_requests_naming_the_field(blank, bob):
    base = f"{API}/trajectories/{blank.pk}"
    response = send(
        as_user(bob),
        "post",
        f"{base}/memory-targets/",
        {"version": 1, "key": "price", "value": "1", "encode_step": 3, "retrieve_steps": [2]},
    )
    # Well-formed, but against a rule given the trajectory: 422; malformed requests are 400.
    assert response.status_code == 422
    assert response.json() == {"detail": "retrieve_steps[0]: step 2 is not after the encode step 3"}
    response = send(as_user(bob), "delete", f"{base}/anchors/a1/", {})
    assert response.status_code == 400
    assert response.json() == {"detail": "version: send ?version=<the version you edited>"}
    response = send(as_user(bob), "post", f"{base}/subgoals/split/", {"step": 1})
    assert response.status_code == 400
    assert response.json() == {"detail": "version: This field is required."}


def test_a_full_labelling_pass_through_the_api(blank, alice, bob, erin):
    client, base = as_user(bob), f"{API}/trajectories/{blank.pk}"
    version = 1

    def do(method, path, **data):
        nonlocal version
        if method == "delete":
            response = send(client, method, f"{base}/{path}?version={version}", {})
        else:
            response = send(client, method, f"{base}/{path}", {"version": version, **data})
        assert response.status_code == 200, response.json()
        version = response.json()["version"]
        return response.json()

    do("post", "subgoals/split/", step=2)
    labels = do("post", "subgoals/split/", step=4)
    for g, success in zip(labels["subgoals"], ["yes", "no", "uncertain"], strict=True):
        labels = do("patch", f"subgoals/{g['id']}/", text=f"part {g['start']}", success=success)
    labels = do("patch", f"subgoals/{labels['subgoals'][1]['id']}/", end=4)
    assert [(g["start"], g["end"]) for g in labels["subgoals"]] == [(0, 1), (2, 4), (5, 5)]
    do("patch", "step-labels/1/", memory="price is 12.50", trainable=False)
    do(
        "post",
        "memory-targets/",
        key="price",
        value="12.50",
        encode_step=1,
        retrieve_steps=[5],
        evidence={"bounds": [10, 100, 110, 140], "class": "Button"},
    )
    do("post", "anchors/", step=1, type="context_info", content="price 12.50")
    do("post", "anchors/", step=5, type="finish", content="bought", description="done")
    labels = do(
        "post", "anchor-links/", source="a1", target="a2", relation="enables", critical=True
    )
    assert labels["links"][0] | {"id": 0} == {
        "id": 0,
        "source": "a1",
        "target": "a2",
        "relation": "enables",
        "critical": True,
    }
    assert labels["memory_targets"][0]["evidence"] == {
        "bounds": [10, 100, 110, 140],
        "class": "Button",
    }
    labels = do("post", "undo/")
    assert labels["links"] == [] and labels["can_redo"]
    labels = do("post", "redo/")
    assert len(labels["links"]) == 1 and labels["problems"] == []
    labels = do("post", "submit/")
    assert labels["status"] == "in_review"

    review = as_user(erin)
    response = send(review, "post", f"{base}/comments/", {"step": 3, "text": "check this"})
    assert response.status_code == 201
    assert response.json()["author"] == "erin"
    response = send(review, "post", f"{base}/review/", {"version": version, "decision": "approve"})
    assert response.status_code == 200
    assert Trajectory.objects.get(pk=blank.pk).status == "approved"
    history = client.get(f"{base}/history/").json()
    assert history[0]["kind"] == "review.approve" and history[0]["actor"] == "erin"


def test_annotators_cannot_review(blank, bob):
    response = send(
        as_user(bob),
        "post",
        f"{API}/trajectories/{blank.pk}/review/",
        {"version": 1, "decision": "approve"},
    )
    assert response.status_code == 403
    assert response.json() == {"detail": "Only reviewers and admins can review"}


def test_assignments_are_for_admins(blank, project, alice, bob, dave):
    url = f"{API}/projects/{project.pk}/assignments/"
    assert as_user(bob).get(url).status_code == 403
    assert (
        send(
            as_user(bob), "post", url, {"trajectories": [blank.pk], "annotators": ["dave"]}
        ).status_code
        == 403
    )
    response = send(
        as_user(alice),
        "post",
        url,
        {"trajectories": [blank.pk], "annotators": ["bob", "dave"], "per_trajectory": 2},
    )
    assert response.status_code == 201, response.json()
    rows = sorted((a["annotator"], a["copy_of"] or 0) for a in as_user(alice).get(url).json())
    assert rows == [("bob", 0), ("dave", blank.pk)]
    response = send(
        as_user(alice), "post", url, {"trajectories": [blank.pk], "annotators": ["nobody"]}
    )
    assert response.json() == {"detail": "annotators: no such users ['nobody']"}
    agreement = as_user(bob).get(f"{API}/projects/{project.pk}/agreement/?k=0").json()
    assert (agreement["trajectories"], agreement["waiting"]) == ([], 1)
    Trajectory.objects.filter(project=project).update(status="in_review")
    agreement = as_user(bob).get(f"{API}/projects/{project.pk}/agreement/?k=0").json()
    assert (agreement["k"], agreement["waiting"]) == (0, 0)
    assert agreement["trajectories"][0]["annotators"] == ["bob", "dave"]
    assert agreement["trajectories"][0]["boundary_f1"] == 1.0
