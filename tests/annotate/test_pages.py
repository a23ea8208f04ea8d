"""The workspace, review queue, assignment and agreement pages, with owner, member, outsider."""

from __future__ import annotations

from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotate import services as s
from tests.annotate.conftest import blank_record
from trajectories.labels import edits
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory, do_set_membership

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def edit(client, t, op, **data):
    return client.post(f"/trajectories/{t.pk}/workspace/{op}/", data, **HX)


def test_the_workspace_is_for_members(blank, alice, bob, charlie):
    url = f"/trajectories/{blank.pk}/workspace/"
    for user in (alice, bob):
        response = client_of(user).get(url + "?step=2")
        assert response.status_code == 200
        assert b'id="ws-main" class="ws-main" data-step="2"' in response.content
    assert client_of(charlie).get(url).status_code == 404
    assert Client().get(url).status_code == 302
    assert client_of(charlie).post(url + "split/", {"version": 1, "at": 2}).status_code == 404


def test_the_workspace_shows_the_xml_boxes_track_and_problems(labelled, bob):
    response = client_of(bob).get(f"/trajectories/{labelled.pk}/workspace/?step=0")
    html = response.content.decode()
    assert 'class="el act"' in html  # the Buy button of the step's UI XML
    assert "resource-id: com.example.shop:id/buy" in html
    assert html.count('class="cell') == 3
    assert 'id="ws-graph"' in html and 'data-key="a1"' in html
    assert "subgoal 1–2" not in html  # both subgoals are complete
    assert "Every step is in a subgoal" in html


def test_a_split_rerenders_the_panels_and_bumps_the_version(blank, bob):
    response = edit(client_of(bob), blank, "split", version=1, at=2, step=2)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="ws-main"' in html and 'data-version="2"' in html
    assert 'hx-swap-oob="true"' in html  # track and status out of band
    assert Trajectory.objects.get(pk=blank.pk).version == 2


def test_an_autosaved_field_answers_out_of_band_only(blank, bob):
    response = edit(
        client_of(bob),
        blank,
        "step",
        version=1,
        step=1,
        memory="price 12.50",
        trainable_present="1",
        trainable="on",
    )
    html = response.content.decode()
    assert 'id="ws-main"' not in html
    assert 'id="ws-problems" class="panel wide" hx-swap-oob="true"' in html
    assert blank.steps.get(index=1).memory == "price 12.50"


def test_a_stale_save_is_refused_and_the_newer_version_shown(blank, alice, bob):
    edit(client_of(alice), blank, "split", version=1, at=3)
    response = edit(client_of(bob), blank, "step", version=1, step=1, memory="mine")
    assert response.status_code == 409
    html = response.content.decode()
    assert "alice changed this trajectory at" in html and "(version 2)" in html
    assert "Your change was not saved: step 1: memory “mine”" in html
    assert 'id="ws-main" class="ws-main" data-step="1" hx-swap-oob="true"' in html
    assert 'data-version="2"' in html


def test_a_stale_subgoal_edit_names_the_subgoal_by_its_place_and_steps(labelled, alice, bob):
    second = labelled.subgoals.order_by("start")[1]
    edit(client_of(alice), labelled, "step", version=1, step=0, summary="theirs")
    response = edit(
        client_of(bob), labelled, "subgoal", version=1, step=2, subgoal=second.pk, text="Pay"
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert "Your change was not saved: subgoal 2 (steps 1–2): intent “Pay”" in html
    assert f"'{second.pk}'" not in unescape(html) and "subgoal =" not in html


def test_invalid_input_is_a_message(blank, bob):
    response = edit(
        client_of(bob),
        blank,
        "memory_add",
        version=1,
        step=3,
        key="k",
        value="v",
        retrieve_steps="1",
    )
    assert response.status_code == 400
    assert b"retrieve_steps[0]: step 1 is not after the encode step 3" in response.content


def test_unassigned_members_cannot_edit(blank, project, alice):
    dave = get_user_model().objects.create_user("dave")
    do_set_membership(project, dave, "annotator", alice)
    response = edit(client_of(dave), blank, "split", version=1, at=2)
    assert response.status_code == 403
    assert client_of(dave).get(f"/trajectories/{blank.pk}/workspace/").status_code == 200


def test_review_queue_and_returned_work(blank, project, alice, bob):
    edits.do_split_subgoal(blank, bob, 1, 0)
    g = blank.subgoals.get()
    edits.do_update_subgoal(blank, bob, 2, g.pk, {"text": "all", "success": "yes"})
    s.do_submit(blank, bob, 3)
    page = client_of(alice).get("/review/").content.decode()
    assert f'href="/trajectories/{blank.pk}/workspace/"' in page.split('id="my-work"')[0]
    edit(
        client_of(alice),
        blank,
        "review",
        version=4,
        step=0,
        decision="send_back",
        comment="too coarse",
    )
    page = client_of(bob).get("/review/").content.decode()
    assert "returned with comments" in page
    assert (
        client_of(bob)
        .post(f"/trajectories/{blank.pk}/workspace/review/", {"version": 5, "decision": "approve"})
        .status_code
        == 403
    )


def test_assignment_page_is_for_admins(blank, project, alice, bob, charlie):
    url = f"/projects/{project.pk}/assignments/"
    assert client_of(bob).get(url).status_code == 403
    assert client_of(charlie).get(url).status_code == 404
    other, _ = do_import_trajectory(project, blank_record(seed=9))
    response = client_of(alice).post(
        url,
        {
            "trajectories": [other.pk],
            "annotators": [bob.pk],
            "per_trajectory": "1",
            "mode": "spread",
        },
    )
    assert response.status_code == 302
    assert list(other.assignments.values_list("annotator__username", flat=True)) == ["bob"]
    assert b"bob" in client_of(alice).get(url).content


def test_agreement_page(blank, project, alice, bob, charlie):
    dave = get_user_model().objects.create_user("dave")
    do_set_membership(project, dave, "annotator", alice)
    other, _ = do_import_trajectory(project, blank_record(seed=5))
    copy = s.do_assign_double(other, bob, dave, alice)
    response = client_of(bob).get(f"/projects/{project.pk}/agreement/?k=2")
    assert response.status_code == 200
    page = response.content.decode()
    assert "1 trajectory labelled twice is not compared yet" in page
    assert "bob · dave" not in page
    Trajectory.objects.filter(pk__in=[other.pk, copy.pk]).update(status="in_review")
    page = client_of(bob).get(f"/projects/{project.pk}/agreement/?k=2").content.decode()
    assert "bob · dave" in page and "not compared yet" not in page
    assert client_of(charlie).get(f"/projects/{project.pk}/agreement/").status_code == 404


def test_the_workspace_queries_do_not_grow_with_steps(project, alice):
    counts = []
    for steps, seed in ((4, 21), (24, 22)):
        t, _ = do_import_trajectory(project, blank_record(steps=steps, seed=seed))
        client = client_of(alice)
        client.get(f"/trajectories/{t.pk}/workspace/")  # warm the session
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/trajectories/{t.pk}/workspace/?step=1").status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
