"""Locating a screen on an app graph through the API: the node and its options, for members
only, with clear errors on bad input; alice, bob and charlie."""

from __future__ import annotations

import base64

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from fixtures.generate import NOTES, SHOP, generate_dataset
from graphs.models import AppGraph
from trajectories.blobs import read_blob
from trajectories.jobs import run_job
from trajectories.models import Screen

pytestmark = pytest.mark.django_db

API = "/api/v1"


def as_user(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def built(project, alice):
    generate_dataset(project, 3, steps=30, seed=9)
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/app-graphs/", {"app": SHOP}, format="json"
    )
    graph = AppGraph.objects.get(pk=response.json()["id"])
    run_job(graph.job_id)
    graph.refresh_from_db()
    return graph


def a_screen(activity: str, package: str = SHOP) -> tuple[bytes, str]:
    screen = (
        Screen.objects.filter(package=package, activity__endswith=activity)
        .select_related("screenshot", "ui_xml")
        .last()
    )
    return read_blob(screen.screenshot), read_blob(screen.ui_xml).decode()


def upload(png: bytes, name: str = "screen.png") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, png, "image/png")


def test_a_member_locates_a_screen_and_gets_its_options(built, bob):
    png, xml = a_screen("ProductActivity")
    url = f"{API}/app-graphs/{built.pk}/locate"
    response = as_user(bob).post(url, {"screenshot": upload(png), "xml": xml}, format="multipart")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["graph"], body["app"], body["located"], body["reason"]) == (
        built.pk,
        SHOP,
        True,
        "",
    )
    assert body["node"]["description"].startswith("product page showing ")
    assert body["node"]["activity"].endswith("ProductActivity")
    assert body["candidates"][0]["node"] == body["node"]["id"]
    options = body["options"]
    back = next(o for o in options["transitions"] if o["action_type"] == "back")
    assert back["target"]["description"].startswith("search page showing Results")
    assert back["effect"] == f"opens the {back['target']['description']}"
    assert options["task_completion"]["actions"] == ["answer", "terminate"]
    assert options["free_action"]["instruction"]
    # The same screen sent as JSON, the image in base64: the same answer.
    again = as_user(bob).post(
        url, {"screenshot": base64.b64encode(png).decode(), "xml": xml}, format="json"
    )
    assert again.status_code == 200 and again.json() == body


def test_a_screen_of_another_app_is_on_no_node(built, alice):
    png, xml = a_screen("ListActivity", NOTES)
    response = as_user(alice).post(
        f"{API}/app-graphs/{built.pk}/locate",
        {"screenshot": upload(png), "xml": xml},
        format="multipart",
    )
    body = response.json()
    assert response.status_code == 200
    assert (body["located"], body["node"]) == (False, None)
    assert body["reason"] == f"the screen shows {NOTES}, not this app"
    assert body["options"]["self_loops"] == body["options"]["transitions"] == []


def test_an_outsider_cannot_locate_and_nobody_anonymous(built, charlie):
    png, _ = a_screen("ProductActivity")
    url = f"{API}/app-graphs/{built.pk}/locate"
    response = as_user(charlie).post(url, {"screenshot": upload(png)}, format="multipart")
    assert response.status_code == 404
    response = APIClient().post(url, {"screenshot": upload(png)}, format="multipart")
    assert response.status_code == 401


@pytest.mark.parametrize(
    "body, form, status, message",
    [
        (
            {},
            "multipart",
            400,
            "screenshot: no file was uploaded (send it as multipart/form-data, "
            "or as base64 in JSON)",
        ),
        (
            {"screenshot": "bad"},
            "not-an-image",
            422,
            "screenshot: not an image (expected PNG, JPEG or WebP bytes)",
        ),
        ({"xml": "<hierarchy><node"}, "multipart", 422, "xml: not a UI dump ("),
        ({"screenshot": "%%%"}, "json", 422, "screenshot: not base64 image bytes"),
        ({}, "json", 400, "screenshot: This field is required."),
    ],
)
def test_bad_input_gets_a_clear_error(built, alice, body, form, status, message):
    png, _ = a_screen("ProductActivity")
    if form == "multipart":
        body = {"screenshot": upload(png), **body} if "xml" in body else body
    elif form == "not-an-image":
        body, form = {"screenshot": upload(b"hello", "screen.png")}, "multipart"
    response = as_user(alice).post(f"{API}/app-graphs/{built.pk}/locate", body, format=form)
    assert response.status_code == status
    assert response.json()["detail"].startswith(message)


def test_oversized_screenshots_are_refused_before_they_are_read(built, alice, settings):
    png, _ = a_screen("ProductActivity")
    settings.WAYPOINT_MAX_FILE_BYTES = 100
    url = f"{API}/app-graphs/{built.pk}/locate"
    response = as_user(alice).post(url, {"screenshot": upload(png)}, format="multipart")
    assert response.status_code == 422
    assert response.json()["detail"].startswith("screenshot: file is ")
    assert response.json()["detail"].endswith(
        "over the limit of 100 bytes (WAYPOINT_MAX_FILE_BYTES)"
    )
    response = as_user(alice).post(
        url, {"screenshot": base64.b64encode(png).decode()}, format="json"
    )
    assert response.status_code == 422
    assert "over the limit of 100 bytes" in response.json()["detail"]


def test_a_graph_still_building_cannot_locate(project, alice):
    generate_dataset(project, 1, steps=10, seed=2)
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/app-graphs/", {"app": SHOP}, format="json"
    )
    graph_id = response.json()["id"]
    png, _ = a_screen("HomeActivity")
    response = as_user(alice).post(
        f"{API}/app-graphs/{graph_id}/locate", {"screenshot": upload(png)}, format="multipart"
    )
    assert response.status_code == 422
    assert response.json() == {
        "detail": f"app graph {graph_id} is building: it can locate screens when ready"
    }
