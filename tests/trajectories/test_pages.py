"""The trajectory list, the trajectory page, step partials and blobs, for alice, bob, charlie."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from fixtures.generate import generate_record
from tests.trajectories.builders import make_record
from trajectories.models import Screen, Trajectory
from trajectories.services import do_create_project, do_import_trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def trajectory(project) -> Trajectory:
    trajectory, _ = do_import_trajectory(project, make_record(steps=3, seed=7))
    return trajectory


# ---------------------------------------------------------------------------- list


def test_it_lists_trajectories_for_members(client, project, trajectory, alice, bob):
    for user in (alice, bob):
        client.force_login(user)
        response = client.get(reverse("trajectory-list", args=[project.pk]))
        assert response.status_code == 200
        assert response.context["listed"] == [trajectory.pk]
        assert b"Buy the cheapest headphones" in response.content
        assert reverse("trajectory-detail", args=[trajectory.pk]).encode() in response.content


def test_it_hides_the_list_from_charlie(client, project, trajectory, charlie):
    client.force_login(charlie)
    assert client.get(reverse("trajectory-list", args=[project.pk])).status_code == 404


def test_it_filters_by_status_task_recorder_and_app(client, project, alice):
    first, _ = do_import_trajectory(project, make_record(steps=2, seed=1))
    second, _ = do_import_trajectory(project, make_record(steps=2, seed=2, status="approved"))
    generated, _ = do_import_trajectory(project, generate_record(3, steps=6))
    Trajectory.objects.filter(pk=second.pk).update(recorder_name="bob")
    url = reverse("trajectory-list", args=[project.pk])
    client.force_login(alice)

    def listed(**params) -> set[int]:
        response = client.get(url, params)
        assert response.status_code == 200
        return set(response.context["listed"])

    assert listed() == {first.pk, second.pk, generated.pk}
    assert listed(status="approved") == {second.pk}
    assert listed(task=first.task_id) == {first.pk}
    assert listed(recorder="bob") == {second.pk}
    # The app is named by the task or seen on a screen.
    assert listed(app="com.example.shop") == {first.pk, second.pk}
    assert listed(app="com.waypoint.notes") == {generated.pk}
    assert listed(app="com.nothing") == set()


def test_it_finds_an_app_seen_only_on_screens(client, project, alice):
    trajectory, _ = do_import_trajectory(project, make_record(steps=2, seed=1))
    Screen.objects.filter(trajectory=trajectory).update(package="org.only.onscreen")
    client.force_login(alice)
    response = client.get(
        reverse("trajectory-list", args=[project.pk]), {"app": "org.only.onscreen"}
    )
    assert response.context["listed"] == [trajectory.pk]


def test_it_pages_by_25(client, project, alice):
    for seed in range(27):
        do_import_trajectory(project, make_record(steps=1, seed=100 + seed))
    url = reverse("trajectory-list", args=[project.pk])
    client.force_login(alice)
    first = client.get(url)
    assert len(first.context["listed"]) == 25
    assert b"Page 1 of 2" in first.content
    second = client.get(url, {"page": 2})
    assert len(second.context["listed"]) == 2
    assert not set(first.context["listed"]) & set(second.context["listed"])


def test_it_keeps_filters_in_the_paging_links(client, project, alice):
    for seed in range(26):
        do_import_trajectory(project, make_record(steps=1, seed=200 + seed, status="approved"))
    client.force_login(alice)
    response = client.get(reverse("trajectory-list", args=[project.pk]), {"status": "approved"})
    assert b"?status=approved&amp;page=2" in response.content


def test_it_answers_htmx_with_the_table_only(client, project, trajectory, alice):
    client.force_login(alice)
    response = client.get(
        reverse("trajectory-list", args=[project.pk]),
        {"status": "annotating"},
        headers={"HX-Request": "true", "HX-Target": "trajectory-table"},
    )
    assert response.status_code == 200
    assert b"<html" not in response.content
    assert b"<table" in response.content
    assert "HX-Request" in response["Vary"]


def test_the_list_does_not_query_per_row(client, project, alice):
    url = reverse("trajectory-list", args=[project.pk])
    client.force_login(alice)
    do_import_trajectory(project, make_record(steps=1, seed=1))
    with CaptureQueriesContext(connection) as one:
        client.get(url)
    for seed in range(2, 12):
        do_import_trajectory(project, make_record(steps=1, seed=seed, recorded_by="bob"))
    with CaptureQueriesContext(connection) as many:
        client.get(url)
    assert len(many) == len(one)


# ---------------------------------------------------------------------------- trajectory page


def test_it_shows_the_trajectory_with_overlays(client, trajectory, alice, bob):
    url = reverse("trajectory-detail", args=[trajectory.pk])
    for user in (alice, bob):
        client.force_login(user)
        response = client.get(url)
        assert response.status_code == 200
        html = response.content.decode()
        assert "Buy the cheapest headphones" in html
        assert "Pixel 8" in html and "Android 14" in html
        # Three thumbnails and the large step 0, each with its overlay in screenshot pixels.
        assert html.count('viewBox="0 0 120 240"') == 4
        assert html.count('<circle class="tap" cx="60" cy="120"') == 4
        assert html.count('<rect class="target" x="10" y="100" width="100" height="40"') == 4
        assert html.count('loading="lazy"') == 4  # three steps and the final screen
        for index in range(3):
            assert reverse("step-detail", args=[trajectory.pk, index]) in html
        # Labels.
        assert "Open the item" in html and "Buy it" in html
        assert "12.50" in html
        assert "<code>a1</code>" in html


def test_it_hides_the_trajectory_from_charlie(client, trajectory, charlie):
    client.force_login(charlie)
    assert client.get(reverse("trajectory-detail", args=[trajectory.pk])).status_code == 404
    step = reverse("step-detail", args=[trajectory.pk, 0])
    assert client.get(step).status_code == 404


def test_it_draws_every_kind_of_action(client, project, alice):
    record = generate_record(11, steps=30)
    trajectory, _ = do_import_trajectory(project, record)
    client.force_login(alice)
    html = client.get(reverse("trajectory-detail", args=[trajectory.pk])).content.decode()
    kinds = {s.action["type"] for s in record.steps}
    assert {"open_app", "type", "answer", "terminate"} <= kinds
    assert 'class="badge"' in html  # open_app, answer, terminate ...
    assert 'class="typed"' in html
    if "swipe" in kinds:
        assert '<line class="swipe"' in html
    for step in record.steps:
        if step.action["type"] == "click":
            assert f'cx="{step.action["x"]}" cy="{step.action["y"]}"' in html


def test_it_shows_a_step_large_as_a_partial(client, trajectory, alice, bob):
    url = reverse("step-detail", args=[trajectory.pk, 1])
    for user in (alice, bob):
        client.force_login(user)
        partial = client.get(url, headers={"HX-Request": "true"})
        assert partial.status_code == 200
        html = partial.content.decode()
        assert "<html" not in html
        assert "Step 1" in html
        assert "Press buy 1" in html and "Tap Buy 1" in html
        assert "settled in 700 ms" in html
        assert '<circle class="tap" cx="60" cy="120"' in html
        page = client.get(url)
        assert b"<html" in page.content and b"Press buy 1" in page.content
    assert client.get(reverse("step-detail", args=[trajectory.pk, 9])).status_code == 404


def test_the_page_queries_do_not_grow_with_steps(client, project, alice):
    short, _ = do_import_trajectory(project, generate_record(1, steps=5))
    long, _ = do_import_trajectory(project, generate_record(2, steps=65))
    client.force_login(alice)
    client.get(reverse("trajectory-detail", args=[short.pk]))  # warm the session
    with CaptureQueriesContext(connection) as few:
        assert client.get(reverse("trajectory-detail", args=[short.pk])).status_code == 200
    with CaptureQueriesContext(connection) as many:
        response = client.get(reverse("trajectory-detail", args=[long.pk]))
    assert response.status_code == 200
    assert len(response.context["steps"]) == 65
    assert len(many) == len(few)


# ---------------------------------------------------------------------------- blobs


def test_it_serves_blobs_to_members(client, trajectory, alice, bob):
    screen = trajectory.screens.select_related("screenshot", "ui_xml").first()
    for user in (alice, bob):
        client.force_login(user)
        response = client.get(screen.screenshot.url)
        assert response.status_code == 200
        assert response["Content-Type"] == "image/png"
        assert b"".join(response.streaming_content).startswith(b"\x89PNG")
        assert "immutable" in response["Cache-Control"]
        assert "max-age=31536000" in response["Cache-Control"]
        xml = client.get(screen.ui_xml.url)
        assert xml.status_code == 200 and xml["Content-Type"] == "text/xml"
        assert b"<hierarchy" in b"".join(xml.streaming_content)
        assert "sandbox" in xml["Content-Security-Policy"]


def test_it_answers_304_to_a_known_etag(client, trajectory, alice):
    blob = trajectory.screens.first().screenshot
    client.force_login(alice)
    response = client.get(blob.url, headers={"If-None-Match": f'"{blob.sha256}"'})
    assert response.status_code == 304


def test_it_hides_blobs_from_charlie(client, trajectory, charlie, alice):
    blob = trajectory.screens.first().screenshot
    client.force_login(charlie)
    assert client.get(blob.url).status_code == 404
    # Even when charlie has projects of his own.
    do_create_project("Charlie's", charlie)
    assert client.get(blob.url).status_code == 404
    assert client.get(reverse("blob", args=["0" * 64])).status_code == 404


def test_the_blob_check_is_one_query(client, trajectory, alice):
    blob = trajectory.screens.first().screenshot
    client.force_login(alice)
    client.get(blob.url)
    with CaptureQueriesContext(connection) as queries:
        client.get(blob.url)
    blob_queries = [q for q in queries if re.search(r'"trajectories_blob"', q["sql"])]
    assert len(blob_queries) == 1
    assert "EXISTS" in blob_queries[0]["sql"].upper()


def test_it_opens_the_step_named_in_the_url(client, trajectory, alice):
    client.force_login(alice)
    response = client.get(reverse("trajectory-detail", args=[trajectory.pk]), {"step": 2})
    assert response.context["selected"].index == 2
    assert b'id="step-2"' in response.content
    assert b'class="frame selected" id="frame-2"' in response.content
    assert response.content.count(b"hx-push-url") == 3
