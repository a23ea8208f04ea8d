"""The memory graph API: alice builds, bob (a member) reads and queries, charlie sees nothing."""

from __future__ import annotations

import base64
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from fixtures.generate import DEFAULT_SIZE, render, shop_product
from graphs.models import MemoryGraph
from tests.graphs.conftest import build_now
from trajectories.jobs import run_job
from trajectories.models import Trajectory

pytestmark = pytest.mark.django_db


def test_a_build_is_a_job_and_the_graph_is_listed_and_shown(
    client, project, alice, bob, charlie, generated, django_capture_on_commit_callbacks
):
    url = f"/api/v1/projects/{project.pk}/graphs/"
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=False):
        answer = client.post(
            url,
            {"params": {"tau": 0.9, "k": 2}, "filters": {"app": "com.waypoint.notes"}},
            content_type="application/json",
        )
    assert answer.status_code == 202, answer.content
    body = answer.json()
    assert (body["version"], body["status"], body["job"]["kind"]) == (1, "building", "memory_graph")
    assert body["params"]["k"] == 2 and body["params"]["granularity"] == "subgoal"
    assert body["inputs"]["filters"] == {"app": "com.waypoint.notes"}
    run_job(body["job"]["id"])
    client.force_login(bob)
    shown = client.get(f"/api/v1/graphs/{body['id']}/").json()
    assert shown["status"] == "ready" and shown["node_count"] > 0 and shown["edge_count"] > 0
    assert shown["job"]["status"] == "succeeded" and shown["job"]["percent"] == 100
    listed = client.get(url).json()
    assert [g["version"] for g in listed["results"]] == [1]
    client.force_login(charlie)
    assert client.get(url).status_code == 404
    assert client.get(f"/api/v1/graphs/{body['id']}/").status_code == 404
    assert client.get(f"/api/v1/graphs/{body['id']}/export").status_code == 404


def test_bad_build_requests_are_refused_with_the_reason(client, project, alice, generated):
    url = f"/api/v1/projects/{project.pk}/graphs/"
    client.force_login(alice)
    answer = client.post(url, {"params": {"tau": 2}}, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json() == {"detail": "params.tau: Ensure this value is less than or equal to 1."}
    Trajectory.objects.filter(project=project).update(status="annotating")  # none approved
    answer = client.post(url, {"approved_only": True}, content_type="application/json")
    assert answer.status_code == 422
    assert answer.json()["detail"] == (
        "the project has no labelled trajectories (with subgoals) matching status=approved"
    )
    answer = client.post(url, {"params": {"embedder": "clip"}}, content_type="application/json")
    assert answer.status_code == 400 and "embedder" in answer.json()["detail"]


def test_export_then_import_then_export_gives_the_same_json(
    client, project, alice, generated, django_capture_on_commit_callbacks
):
    graph = build_now(project, alice, django_capture_on_commit_callbacks, {"k": 3})
    client.force_login(alice)
    exported = client.get(f"/api/v1/graphs/{graph.pk}/export").json()
    assert exported["format"] == "waypoint.memory_graph"
    assert exported["params"]["k"] == 3 and exported["embedder"]["name"] == "structure"
    member = exported["nodes"][0]["members"][0]
    assert set(member) == {"trajectory", "step", "screenshot"}
    assert member["trajectory"] in {str(t.uid) for t in generated}
    text = json.dumps(exported)
    assert f'"id": {graph.pk}' not in text and "project" not in exported
    imported = client.post(
        f"/api/v1/projects/{project.pk}/graphs/import", exported, content_type="application/json"
    )
    assert imported.status_code == 201, imported.content
    assert imported.json()["version"] == 2 and imported.json()["status"] == "ready"
    again = client.get(f"/api/v1/graphs/{imported.json()['id']}/export").json()
    assert again == exported
    # As a file upload too; and a broken one names its fault.
    upload = SimpleUploadedFile("graph.json", json.dumps(exported).encode())
    assert (
        client.post(f"/api/v1/projects/{project.pk}/graphs/import", {"file": upload}).status_code
        == 201
    )
    exported["edges"][0]["source"] = 10**6
    broken = client.post(
        f"/api/v1/projects/{project.pk}/graphs/import", exported, content_type="application/json"
    )
    assert broken.status_code == 422
    assert broken.json() == {"detail": "edges[0].source: no node 1000000"}
    wrong = client.post(
        f"/api/v1/projects/{project.pk}/graphs/import", {"a": 1}, content_type="application/json"
    )
    assert wrong.json() == {
        "detail": "format: not a memory graph export (expected 'waypoint.memory_graph')"
    }
    assert MemoryGraph.objects.filter(project=project).count() == 3


def test_retrieve_takes_a_multipart_upload_or_base64_json(
    client, project, alice, bob, generated, django_capture_on_commit_callbacks
):
    graph = build_now(project, alice, django_capture_on_commit_callbacks)
    screen = render(shop_product("Solace Tent", DEFAULT_SIZE))
    url = f"/api/v1/graphs/{graph.pk}/retrieve"
    client.force_login(bob)
    answer = client.post(
        url,
        {"screenshot": io.BytesIO(screen.png), "xml": screen.xml.decode(), "k": "2"},
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["k"] == 2 and len(body["nodes"]) == 2
    assert body["memory_block"].startswith("Experience: ")
    assert body["nodes"][0]["subgoals"] and "search" in body["timing_ms"]
    as_json = client.post(
        url,
        {"screenshot": base64.b64encode(screen.png).decode(), "xml": screen.xml.decode()},
        content_type="application/json",
    )
    assert as_json.status_code == 200
    assert as_json.json()["nodes"][0]["node"] == body["nodes"][0]["node"]
    not_image = client.post(url, {"screenshot": io.BytesIO(b"hello, not a png")})
    assert not_image.status_code == 422
    assert not_image.json() == {
        "detail": "screenshot: not an image (expected PNG, JPEG or WebP bytes)"
    }
    not_base64 = client.post(url, {"screenshot": "***"}, content_type="application/json")
    assert not_base64.status_code == 422
    assert not_base64.json() == {"detail": "screenshot: not base64 image bytes"}
    missing = client.post(url, {"k": "1"})
    assert missing.status_code == 400
    assert missing.json() == {"detail": "screenshot: no file was uploaded"}
    # A lone surrogate (no database stores one) is refused with DRF's words, wherever it is.
    for field in ("screenshot", "xml"):
        body = {"screenshot": base64.b64encode(screen.png).decode(), field: "AAAA\ud800AAAA"}
        surrogate = client.post(url, json.dumps(body), content_type="application/json")
        assert surrogate.status_code == 400
        assert surrogate.json() == {
            "detail": f"{field}: Surrogate characters are not allowed: U+D800."
        }


def test_a_graph_still_building_cannot_be_queried_or_exported_yet(
    client, project, alice, generated, django_capture_on_commit_callbacks
):
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=False):
        body = client.post(
            f"/api/v1/projects/{project.pk}/graphs/", {}, content_type="application/json"
        ).json()
    png = render(shop_product("Solace Tent", DEFAULT_SIZE)).png
    answer = client.post(f"/api/v1/graphs/{body['id']}/retrieve", {"screenshot": io.BytesIO(png)})
    assert answer.status_code == 422
    assert answer.json() == {"detail": "graph v1 is building: it cannot be queried yet"}
    exported = client.get(f"/api/v1/graphs/{body['id']}/export")
    assert exported.status_code == 422
    assert exported.json() == {"detail": "graph v1 is building: nothing to export yet"}
