"""The REST API v1: every endpoint with alice (owner), bob (member) and charlie (outsider)."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from fixtures.generate import generate_record
from formats.archive import human_size
from formats.catalogue import EXPORTERS, IMPORTERS
from tests.trajectories.builders import make_record
from trajectories.models import Job, JobKind, JobStatus, Step
from trajectories.services import do_create_project, do_import_trajectory

pytestmark = pytest.mark.django_db

API = "/api/v1"


@pytest.fixture
def api():
    return APIClient()


def as_user(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def zip_bytes() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("export/manifest.json", "{}")
    return out.getvalue()


def upload(name: str = "data.zip", data: bytes | None = None) -> ContentFile:
    return ContentFile(zip_bytes() if data is None else data, name=name)


@pytest.fixture
def trajectory(project):
    trajectory, _ = do_import_trajectory(project, make_record(steps=3, seed=1))
    return trajectory


@pytest.fixture
def export_job(project, alice):
    return Job.objects.create(project=project, kind=JobKind.EXPORT, format="waypoint")


def every_url(project, trajectory, job) -> list[str]:
    task = trajectory.task
    return [
        f"{API}/projects/",
        f"{API}/projects/{project.pk}/",
        f"{API}/projects/{project.pk}/tasks/",
        f"{API}/tasks/{task.pk}/",
        f"{API}/projects/{project.pk}/trajectories/",
        f"{API}/trajectories/{trajectory.pk}/",
        f"{API}/trajectories/{trajectory.pk}/steps/",
        f"{API}/trajectories/{trajectory.pk}/steps/0/",
        f"{API}/projects/{project.pk}/jobs/",
        f"{API}/jobs/{job.pk}/",
        f"{API}/jobs/{job.pk}/download/",
    ]


# ---------------------------------------------------------------- authentication


def test_it_answers_401_without_credentials(api, project, trajectory, export_job):
    urls = every_url(project, trajectory, export_job)
    for url in urls:
        response = api.get(url)
        assert response.status_code == 401, url
        assert response["WWW-Authenticate"] == "Token", url
        assert response.json() == {"detail": "Authentication credentials were not provided."}
    for url in (f"{API}/projects/{project.pk}/imports/", f"{API}/projects/{project.pk}/exports/"):
        assert api.post(url).status_code == 401


def test_it_gives_a_token_for_a_password(api, alice):
    response = api.post(
        f"{API}/auth/token/", {"username": "alice", "password": "alice-password"}, format="json"
    )
    assert response.status_code == 200
    assert response.json() == {"token": Token.objects.get(user=alice).key}


def test_it_refuses_a_token_for_a_wrong_password(api, alice):
    response = api.post(f"{API}/auth/token/", {"username": "alice", "password": "nope"})
    assert response.status_code == 401
    # The API's one error shape, here too (config/errors.py).
    assert response.json() == {"detail": "Unable to log in with provided credentials."}


def test_it_accepts_a_token(api, project, bob):
    token = Token.objects.create(user=bob)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = api.get(f"{API}/projects/")
    assert response.status_code == 200
    assert [p["name"] for p in response.json()["results"]] == ["Shops"]


def test_it_rejects_a_bad_token(api, project):
    api.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = api.get(f"{API}/projects/")
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


def test_outsiders_get_404_everywhere(project, trajectory, export_job, charlie):
    client = as_user(charlie)
    expected = {
        "projects": "No such project",
        "tasks": "No such task",
        "trajectories": "No such trajectory",
        "jobs": "No such job",
    }
    for url in every_url(project, trajectory, export_job)[1:]:
        response = client.get(url)
        assert response.status_code == 404, url
        assert response.json() == {"detail": expected[url.split("/")[3]]}, url
    for kind in ("imports", "exports"):
        response = client.post(f"{API}/projects/{project.pk}/{kind}/", {}, format="json")
        assert response.status_code == 404
        assert response.json() == {"detail": "No such project"}
    assert not Job.objects.exclude(pk=export_job.pk).exists()


# ---------------------------------------------------------------- projects


def test_it_lists_the_users_projects_with_their_role(project, trajectory, alice, bob, charlie):
    do_create_project("Charlie's own", charlie)
    for user, role in ((alice, "admin"), (bob, "annotator")):
        response = as_user(user).get(f"{API}/projects/")
        assert response.status_code == 200
        body = response.json()
        assert body["count"] == 1
        [item] = body["results"]
        assert item["id"] == project.pk
        assert item["name"] == "Shops"
        assert item["created_by"] == "alice"
        assert item["role"] == role
        assert item["task_count"] == 1
        assert item["trajectory_count"] == 1
    response = as_user(charlie).get(f"{API}/projects/")
    assert [p["name"] for p in response.json()["results"]] == ["Charlie's own"]


def test_it_shows_a_project(project, trajectory, alice, bob):
    for user in (alice, bob):
        response = as_user(user).get(f"{API}/projects/{project.pk}/")
        assert response.status_code == 200
        assert response.json()["name"] == "Shops"
        assert response.json()["trajectory_count"] == 1


def test_it_creates_a_project(charlie):
    response = as_user(charlie).post(
        f"{API}/projects/", {"name": "  Notes ", "description": "d"}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert body["name"] == "Notes"
    assert body["role"] == "admin"
    assert body["created_by"] == "charlie"
    assert body["task_count"] == 0


def test_it_rejects_a_project_without_a_name(alice):
    client = as_user(alice)
    response = client.post(f"{API}/projects/", {"name": "   "}, format="json")
    assert response.status_code == 400
    assert response.json() == {"detail": "name: This field may not be blank."}
    response = client.post(f"{API}/projects/", {}, format="json")
    assert response.status_code == 400
    assert response.json() == {"detail": "name: This field is required."}


# ---------------------------------------------------------------- tasks


def test_it_lists_and_shows_tasks(project, trajectory, alice, bob):
    for user in (alice, bob):
        client = as_user(user)
        response = client.get(f"{API}/projects/{project.pk}/tasks/")
        assert response.status_code == 200
        [task] = response.json()["results"]
        assert task["uid"] == "task-1"
        assert task["intent"] == "purchase_order"
        assert task["memory_items"] == [{"key": "price", "description": "price of the headphones"}]
        response = client.get(f"{API}/tasks/{task['id']}/")
        assert response.status_code == 200
        assert response.json() == task


# ---------------------------------------------------------------- trajectories


@pytest.fixture
def three(project):
    """Three trajectories differing in every filtered field."""
    made = []
    for seed, fields in (
        (1, {"status": "annotating", "outcome": "success", "source": "recorded"}),
        (2, {"status": "approved", "outcome": "failure", "source": "imported"}),
        (3, {"status": "approved", "outcome": "success", "source": "generated"}),
    ):
        record = make_record(steps=2, seed=seed, recorded_by="bob" if seed == 3 else "alice")
        for name, value in fields.items():
            setattr(record, name, value)
        made.append(do_import_trajectory(project, record)[0])
    return made


def test_it_filters_trajectories(project, three, alice, bob):
    url = f"{API}/projects/{project.pk}/trajectories/"
    first, second, third = three
    cases = {
        "": {first, second, third},
        "?status=approved": {second, third},
        "?outcome=success": {first, third},
        "?source=imported": {second},
        "?task=task-3": {third},
        "?task=task-9": set(),
        "?recorder=bob": {third},
        "?recorder=alice": {first, second},
        "?status=approved&outcome=success": {third},
    }
    for user in (alice, bob):
        client = as_user(user)
        for query, expected in cases.items():
            response = client.get(url + query)
            assert response.status_code == 200, query
            ids = {item["id"] for item in response.json()["results"]}
            assert ids == {t.pk for t in expected}, query


def test_it_rejects_an_unknown_filter_value(project, three, alice):
    response = as_user(alice).get(f"{API}/projects/{project.pk}/trajectories/?status=done")
    assert response.status_code == 400
    assert response.json() == {
        "detail": "status: must be one of recording, interrupted, annotating, in_review, "
        "approved, rejected, got 'done'"
    }


def test_it_pages_trajectories(project, three, alice):
    client = as_user(alice)
    url = f"{API}/projects/{project.pk}/trajectories/"
    response = client.get(url + "?page_size=2")
    body = response.json()
    assert body["count"] == 3
    assert [item["id"] for item in body["results"]] == [three[2].pk, three[1].pk]
    assert body["next"].endswith("/trajectories/?page=2&page_size=2")
    body = client.get(body["next"]).json()
    assert [item["id"] for item in body["results"]] == [three[0].pk]
    assert body["next"] is None
    response = client.get(url + "?page=9")
    assert response.status_code == 404
    assert response.json() == {"detail": "Invalid page."}


def test_it_shows_a_trajectory_with_its_labels(trajectory, alice, bob):
    for user in (alice, bob):
        response = as_user(user).get(f"{API}/trajectories/{trajectory.pk}/")
        assert response.status_code == 200
        body = response.json()
        assert body["uid"] == str(trajectory.uid)
        assert body["device"] == {
            "serial": "emulator-5554",
            "model": "Pixel 8",
            "android_version": "14",
            "width": 120,
            "height": 240,
            "density": 420,
        }
        assert body["task"]["uid"] == "task-1"
        assert body["task"]["gold_answer"] == "12.50"
        assert body["counts"] == {
            "steps": 3,
            "subgoals": 2,
            "memory_targets": 1,
            "anchors": 2,
            "anchor_links": 1,
        }
        assert [(g["start"], g["end"], g["success"]) for g in body["subgoals"]] == [
            (0, 0, "yes"),
            (1, 2, "uncertain"),
        ]
        [target] = body["memory_targets"]
        assert (target["key"], target["encode_step"], target["retrieve_steps"]) == (
            "price",
            0,
            [2],
        )
        a1, a2 = body["anchors"]
        assert (a1["key"], a1["type"], a1["step_index"]) == ("a1", "context_info", 0)
        assert a1["links"] == [{"target": "a2", "relation": "enables", "critical": True}]
        assert a2["links"] == []
        assert body["recorded_by"] == "alice"
        assert body["metadata"] == {"note": "ünïcode ✓"}
        assert body["steps_url"] == f"http://testserver{API}/trajectories/{trajectory.pk}/steps/"
        assert body["final_screen"]["width"] == 120


# ---------------------------------------------------------------- steps

ACTIONS = [
    {"type": "click", "x": 60, "y": 120},
    {"type": "long_press", "x": 5, "y": 6, "duration_ms": 800},
    {"type": "swipe", "x": 60, "y": 200, "x2": 60, "y2": 40, "duration_ms": 300},
    {"type": "type", "text": "héllo wörld"},
    {"type": "key", "keycode": "KEYCODE_ENTER"},
    {"type": "back"},
    {"type": "home"},
    {"type": "enter"},
    {"type": "open_app", "package": "com.example.shop", "app_label": "Shop"},
    {"type": "wait", "duration_ms": 1000},
    {"type": "answer", "text": "12.50"},
    {"type": "terminate", "status": "success"},
]


@pytest.fixture
def every_action(project):
    record = make_record(steps=len(ACTIONS), seed=7)
    for step, action in zip(record.steps, ACTIONS, strict=True):
        step.action = action
    record.screens[1].ui_xml = None
    return do_import_trajectory(project, record)[0]


def test_it_lists_steps_with_their_actions_and_screens(every_action, alice, bob):
    for user in (alice, bob):
        response = as_user(user).get(f"{API}/trajectories/{every_action.pk}/steps/")
        assert response.status_code == 200
        steps = response.json()
        assert [s["index"] for s in steps] == list(range(len(ACTIONS)))
        assert [s["action"] for s in steps] == ACTIONS
        first, second = steps[0], steps[1]
        assert first["target"]["resource_id"] == "com.example.shop:id/buy"
        assert first["thought"] == "Press buy 0"
        assert first["summary"] == "Tap Buy 0"
        assert first["memory"] == "price is 12.50 €"
        assert first["trainable"] is True
        assert first["action_sent_at"] == "2026-11-01T12:00:00Z"
        assert first["settled_at"] == "2026-11-01T12:00:00.700000Z"
        assert first["settle_ms"] == 700
        screen = first["screen"]
        assert (screen["width"], screen["height"]) == (120, 240)
        assert (screen["package"], screen["activity"]) == ("com.example.shop", ".MainActivity")
        step = Step.objects.select_related("screen__screenshot", "screen__ui_xml").get(
            trajectory=every_action, index=0
        )
        base = "http://testserver/api/v1/blobs"
        assert screen["screenshot_url"] == f"{base}/{step.screen.screenshot.sha256}/"
        assert screen["ui_xml_url"] == f"{base}/{step.screen.ui_xml.sha256}/"
        assert second["screen"]["ui_xml_url"] is None


def test_the_screenshot_url_serves_the_image_to_a_token(every_action, alice, charlie):
    token = Token.objects.create(user=alice)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    [first] = client.get(f"{API}/trajectories/{every_action.pk}/steps/").json()[:1]
    response = client.get(first["screen"]["screenshot_url"])
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")
    response = as_user(charlie).get(first["screen"]["screenshot_url"])
    assert response.status_code == 404
    assert response.json() == {"detail": "No such blob"}


def test_it_shows_one_step(every_action, alice, bob):
    for user in (alice, bob):
        client = as_user(user)
        response = client.get(f"{API}/trajectories/{every_action.pk}/steps/2/")
        assert response.status_code == 200
        assert response.json()["action"] == ACTIONS[2]
        response = client.get(f"{API}/trajectories/{every_action.pk}/steps/12/")
        assert response.status_code == 404
        assert response.json() == {"detail": "No step 12 (the trajectory has 12 steps)"}


def count_queries(client: APIClient, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def test_trajectory_queries_do_not_grow_with_its_size(project, alice):
    short, _ = do_import_trajectory(project, generate_record(11, steps=5, size=(216, 480)))
    long, _ = do_import_trajectory(project, generate_record(12, steps=65, size=(216, 480)))
    assert long.anchors.exists() and long.subgoals.count() > short.subgoals.count()
    client = as_user(alice)
    for suffix in ("", "steps/"):
        short_count = count_queries(client, f"{API}/trajectories/{short.pk}/{suffix}")
        long_count = count_queries(client, f"{API}/trajectories/{long.pk}/{suffix}")
        assert short_count == long_count, suffix
    assert len(client.get(f"{API}/trajectories/{long.pk}/steps/").json()) == 65


# ---------------------------------------------------------------- imports


def test_members_queue_an_import(project, alice, bob):
    for user in (alice, bob):
        response = as_user(user).post(
            f"{API}/projects/{project.pk}/imports/",
            {"file": upload(), "format": "waypoint"},
            format="multipart",
        )
        assert response.status_code == 202
        body = response.json()
        job = Job.objects.get(pk=body["id"])
        assert (job.kind, job.status, job.created_by) == ("import", "queued", user)
        assert default_storage.exists(job.input_path)
        assert body["status"] == "queued"
        assert body["percent"] == 0
        assert body["download_url"] is None
        assert body["url"] == f"http://testserver{API}/jobs/{job.pk}/"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"format": "waypoint"}, "file: no file was uploaded (send it as multipart/form-data)"),
        (
            {"file": "x", "format": "waypoint"},
            "file: no file was uploaded (send it as multipart/form-data)",
        ),
        (
            {"file": "upload", "format": "nope"},
            f"format: unknown import format 'nope' (known: auto, {', '.join(sorted(IMPORTERS))})",
        ),
        (
            {"file": "notes.txt", "format": "waypoint"},
            "file: notes.txt is not a .zip or .tar archive",
        ),
    ],
)
def test_it_rejects_a_bad_import(project, alice, data, message):
    if data.get("file") == "upload":
        data["file"] = upload()
    elif data.get("file") == "notes.txt":
        data["file"] = upload("notes.txt", b"hello")
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/imports/", data, format="multipart"
    )
    # A missing file or an unknown format is a malformed request (400); a file that is not an
    # archive breaks a rule of the import (422).
    assert response.status_code == (422 if "archive" in message else 400)
    assert response.json() == {"detail": message}
    assert not Job.objects.exists()


def test_it_rejects_an_oversized_import(project, alice, settings):
    settings.WAYPOINT_MAX_UPLOAD_BYTES = 20
    data = zip_bytes()
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/imports/",
        {"file": upload("big.zip", data), "format": "waypoint"},
        format="multipart",
    )
    assert response.status_code == 422
    assert response.json() == {
        "detail": f"file: big.zip is {human_size(len(data))}, over the limit of 20 bytes "
        "(WAYPOINT_MAX_UPLOAD_BYTES)"
    }
    assert not Job.objects.exists()


def test_it_wants_multipart_for_an_import(project, alice):
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/imports/", {"format": "waypoint"}, format="json"
    )
    assert response.status_code == 415
    assert response.json() == {"detail": 'Unsupported media type "application/json" in request.'}


# ---------------------------------------------------------------- exports


def test_members_queue_an_export(project, alice, bob):
    for user in (alice, bob):
        response = as_user(user).post(
            f"{API}/projects/{project.pk}/exports/",
            {"format": "waypoint", "filters": {"status": "approved", "task": "task-1"}},
            format="json",
        )
        assert response.status_code == 202
        body = response.json()
        job = Job.objects.get(pk=body["id"])
        assert (job.kind, job.status, job.created_by) == ("export", "queued", user)
        assert job.params == {"filters": {"status": "approved", "task": "task-1"}}
        assert body["params"] == job.params


@pytest.mark.parametrize(
    "data, status, message",
    [
        (
            {"format": "nope"},
            400,
            f"format: unknown export format 'nope' (known: {', '.join(sorted(EXPORTERS))})",
        ),
        (
            {"filters": {"colour": "red"}},
            400,
            "filters: unknown filter 'colour' (known: status, outcome, source, task, tasks, "
            "recorder, app, apps, recorded_from, recorded_to, annotator, trajectories)",
        ),
        (
            {"filters": {"outcome": "great"}},
            400,
            "outcome: must be one of success, failure, uncertain, got 'great'",
        ),
        (
            {"format": "stamp-sft", "options": {"k": -1}},
            422,
            "options.k: -1 is out of range",
        ),
        (
            {"format": "androtmem", "split": {"by": "colour"}},
            422,
            "split.by: must be one of trajectory, task, app, got 'colour'",
        ),
        (
            {"filters": ["status"]},
            400,
            "filters: must be an object, got ['status']",
        ),
    ],
)
def test_it_rejects_a_bad_export(project, alice, data, status, message):
    response = as_user(alice).post(f"{API}/projects/{project.pk}/exports/", data, format="json")
    assert response.status_code == status
    assert response.json() == {"detail": message}
    assert not Job.objects.exists()


# ---------------------------------------------------------------- jobs


def test_it_lists_and_shows_jobs(project, export_job, alice, bob):
    for user in (alice, bob):
        client = as_user(user)
        response = client.get(f"{API}/projects/{project.pk}/jobs/")
        assert response.status_code == 200
        [item] = response.json()["results"]
        assert item["id"] == export_job.pk
        response = client.get(f"{API}/jobs/{export_job.pk}/")
        assert response.status_code == 200
        assert response.json() == item
        assert item["status"] == "queued"
        assert item["download_url"] is None
        for key in ("percent", "done", "total", "counts", "message", "created_at", "finished_at"):
            assert key in item


def test_download_is_409_until_the_export_succeeded(export_job, alice, bob):
    for user in (alice, bob):
        response = as_user(user).get(f"{API}/jobs/{export_job.pk}/download/")
        assert response.status_code == 409
        assert response.json() == {
            "detail": f"job {export_job.pk} is queued: its file can be downloaded once it has "
            "succeeded"
        }


def test_an_import_has_nothing_to_download(project, alice):
    job = Job.objects.create(project=project, kind=JobKind.IMPORT, status=JobStatus.SUCCEEDED)
    response = as_user(alice).get(f"{API}/jobs/{job.pk}/download/")
    assert response.status_code == 409
    assert response.json() == {"detail": f"job {job.pk} is an import: it has no file to download"}


def test_it_downloads_a_succeeded_export(export_job, alice, bob):
    path = default_storage.save(f"jobs/{export_job.pk}/out.zip", ContentFile(b"PK\x05\x06zip"))
    export_job.output_path = path
    export_job.status = JobStatus.SUCCEEDED
    export_job.save()
    for user in (alice, bob):
        client = as_user(user)
        body = client.get(f"{API}/jobs/{export_job.pk}/").json()
        assert body["percent"] == 100
        assert body["download_url"] == f"http://testserver{API}/jobs/{export_job.pk}/download/"
        response = client.get(body["download_url"])
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == b"PK\x05\x06zip"
        day = timezone.localdate(export_job.created_at).isoformat()
        assert response["Content-Disposition"] == (
            f'attachment; filename="shops-waypoint-{day}.zip"'
        )
    default_storage.delete(path)
    response = as_user(alice).get(f"{API}/jobs/{export_job.pk}/download/")
    assert response.status_code == 410
    assert response.json() == {
        "detail": f"job {export_job.pk}: its file {path} is no longer in storage"
    }


# ---------------------------------------------------------------- OpenAPI


PATHS = [
    "/api/v1/auth/token/",
    "/api/v1/projects/",
    "/api/v1/projects/{project_id}/",
    "/api/v1/projects/{project_id}/tasks/",
    "/api/v1/projects/{project_id}/trajectories/",
    "/api/v1/projects/{project_id}/imports/",
    "/api/v1/projects/{project_id}/exports/",
    "/api/v1/projects/{project_id}/jobs/",
    "/api/v1/tasks/{task_id}/",
    "/api/v1/trajectories/{trajectory_id}/",
    "/api/v1/trajectories/{trajectory_id}/steps/",
    "/api/v1/trajectories/{trajectory_id}/steps/{index}/",
    "/api/v1/jobs/{job_id}/",
    "/api/v1/jobs/{job_id}/download/",
]


def test_the_schema_is_valid_and_has_every_path(alice):
    response = as_user(alice).get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    validate_schema(schema)
    assert set(PATHS) <= set(schema["paths"])
    imports = schema["paths"]["/api/v1/projects/{project_id}/imports/"]["post"]
    assert "multipart/form-data" in imports["requestBody"]["content"]
    assert set(imports["responses"]) == {"202", "400", "401", "404", "406", "415", "422"}
    filters = schema["paths"]["/api/v1/projects/{project_id}/trajectories/"]["get"]["parameters"]
    assert {"status", "outcome", "task", "source", "recorder", "page", "page_size"} <= {
        p["name"] for p in filters
    }


def test_the_schema_is_generated_without_warnings():
    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        SchemaGenerator().get_schema(request=None, public=True)
    warnings = list(GENERATOR_STATS._warn_cache)
    errors = list(GENERATOR_STATS._error_cache)
    assert (warnings, errors) == ([], [])


def test_the_docs_render(alice):
    client = APIClient()
    client.force_login(alice)
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
    assert b"swagger-ui" in response.content
    assert reverse("api-schema").encode() in response.content


def test_a_username_of_spaces_alone_is_a_wrong_username(api, alice):
    for username in ("\n", "  "):
        response = api.post(
            f"{API}/auth/token/", {"username": username, "password": "x"}, format="json"
        )
        assert response.status_code == 401
        assert response.json() == {"detail": "Unable to log in with provided credentials."}
    response = api.post(
        f"{API}/auth/token/", {"username": " alice ", "password": "alice-password"}, format="json"
    )
    assert response.status_code == 200
