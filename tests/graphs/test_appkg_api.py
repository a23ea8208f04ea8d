"""The app knowledge graph API: build as a job, export, import; alice, bob and charlie."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from fixtures.generate import SHOP, generate_dataset
from graphs.models import AppGraph
from trajectories.jobs import run_job
from trajectories.models import Job, JobStatus

pytestmark = pytest.mark.django_db

API = "/api/v1"


def as_user(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def built(project, bob):
    """A build queued by bob (a member) and run by the worker."""
    generate_dataset(project, 2, steps=25, seed=9)
    response = as_user(bob).post(
        f"{API}/projects/{project.pk}/app-graphs/",
        {"app": SHOP, "params": {"look_threshold": 0.6}},
        format="json",
    )
    assert response.status_code == 202, response.json()
    graph = AppGraph.objects.get(pk=response.json()["id"])
    run_job(graph.job_id)
    graph.refresh_from_db()
    return graph


def test_a_member_builds_an_app_graph_as_a_job(built, bob, project):
    assert built.status == "ready" and built.version == 1
    assert built.node_count >= 3 and built.edge_count > built.node_count
    job = Job.objects.get(pk=built.job_id)
    assert job.status == JobStatus.SUCCEEDED and job.kind == "app_graph"
    assert job.counts["nodes"] == built.node_count
    listed = as_user(bob).get(f"{API}/projects/{project.pk}/app-graphs/").json()["results"]
    assert [(g["app"], g["version"], g["status"]) for g in listed] == [(SHOP, 1, "ready")]
    assert listed[0]["export_url"].endswith(f"/app-graphs/{built.pk}/export")
    assert listed[0]["params"]["look_threshold"] == 0.6


def test_export_then_import_is_the_same_graph_as_a_new_version(built, alice, project):
    exported = as_user(alice).get(f"{API}/app-graphs/{built.pk}/export")
    assert exported.status_code == 200
    assert exported["Content-Disposition"].endswith(f'app-graph-{SHOP}-v1.json"')
    upload = SimpleUploadedFile("g.json", exported.content, "application/json")
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/app-graphs/import", {"file": upload}, format="multipart"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["version"] == 2 and response.json()["job_url"] is None
    again = as_user(alice).get(f"{API}/app-graphs/{response.json()['id']}/export")
    assert again.content == exported.content
    assert '"id"' not in json.dumps(json.loads(exported.content)["params"])


def test_an_outsider_sees_none_of_it(built, charlie, project):
    client = as_user(charlie)
    assert client.get(f"{API}/projects/{project.pk}/app-graphs/").status_code == 404
    assert client.get(f"{API}/app-graphs/{built.pk}/export").status_code == 404
    response = client.post(f"{API}/projects/{project.pk}/app-graphs/", {"app": SHOP}, format="json")
    assert response.status_code == 404


def test_bad_requests_get_clear_errors(project, alice):
    client = as_user(alice)
    url = f"{API}/projects/{project.pk}/app-graphs/"
    response = client.post(url, {"app": SHOP}, format="json")
    assert response.status_code == 422
    assert response.json() == {
        "detail": f"app: no trajectory of this project (with these filters) shows {SHOP}"
    }
    generate_dataset(project, 1, steps=10, seed=1)
    response = client.post(url, {"app": SHOP, "params": {"look_threshold": 3}}, format="json")
    assert response.json() == {"detail": "params.look_threshold: must be between 0 and 1, got 3"}
    response = client.post(url, {"params": {}}, format="json")
    assert response.status_code == 400 and response.json()["detail"].startswith("app:")
    bad = SimpleUploadedFile("g.json", b"[1, 2]", "application/json")
    response = client.post(f"{url}import", {"file": bad}, format="multipart")
    assert response.status_code == 422
    assert response.json() == {"detail": "app graph: must be a JSON object"}
    assert not AppGraph.objects.exists()


def test_a_graph_still_building_cannot_be_exported(project, alice):
    generate_dataset(project, 1, steps=10, seed=2)
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/app-graphs/", {"app": SHOP}, format="json"
    )
    graph_id = response.json()["id"]
    response = as_user(alice).get(f"{API}/app-graphs/{graph_id}/export")
    assert response.status_code == 422
    assert response.json() == {
        "detail": f"app graph {graph_id} is building: it can be exported when ready"
    }
