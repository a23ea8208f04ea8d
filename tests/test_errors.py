"""One error path: domain errors answer their status everywhere, the API always in JSON.

alice is the project's admin, bob an annotator, dave a reviewer, charlie an outsider.
"""

from __future__ import annotations

import pytest
from django.db import InterfaceError, OperationalError, connection
from django.test import Client
from rest_framework.authtoken.models import Token

from annotate.services import do_assign
from tests.annotate.conftest import blank_record
from tests.devices.conftest import grant
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
XSS = "<img src=x onerror=alert(1)>"


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def trajectory(project, alice, bob):
    trajectory, _ = do_import_trajectory(project, blank_record(steps=3))
    do_assign(trajectory, bob, alice)
    return trajectory


# -------------------------------------------------------------------------------- HTML pages


def test_a_reviewer_importing_the_virtual_devices_tasks_gets_a_403_page(project, dave):
    grant("emulator-5554", project)
    response = client_of(dave).post("/devices/emulator-5554/tasks/", {"project": project.pk})
    assert response.status_code == 403
    page = response.content.decode()
    assert "This needs one of the roles: admin, annotator" in page
    # The styled page with the site's navigation, not a bare line of text.
    assert '<nav class="topnav">' in page and 'href="/devices/"' in page
    assert "<h1>Not allowed</h1>" in page


def test_a_missing_role_on_any_page_is_the_same_styled_403(project, bob):
    response = client_of(bob).post(
        f"/projects/{project.pk}/members/", {"username": "bob", "role": "admin"}
    )
    assert response.status_code == 403
    assert '<nav class="topnav">' in response.content.decode()


def test_htmx_gets_the_403_message_alone(project, dave):
    grant("emulator-5554", project)
    response = client_of(dave).post("/devices/emulator-5554/tasks/", {"project": project.pk}, **HX)
    assert response.status_code == 403
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode() == "This needs one of the roles: admin, annotator"


def test_an_unknown_page_is_a_styled_404(project, charlie):
    response = client_of(charlie).get(f"/projects/{project.pk}/trajectories/")
    assert response.status_code == 404
    page = response.content.decode()
    assert "<h1>Not found</h1>" in page and '<nav class="topnav">' in page


def test_an_unknown_workspace_operation_is_not_echoed_as_html(trajectory, bob):
    response = client_of(bob).post(
        f"/trajectories/{trajectory.pk}/workspace/{XSS}/", {"version": 1}, **HX
    )
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": f"No such operation: {XSS}"}


# --------------------------------------------------------------------------------------- API


def test_unknown_api_paths_answer_json_404_for_every_method(alice):
    for client in (Client(), client_of(alice)):
        for method in ("get", "post", "put", "delete"):
            response = getattr(client, method)("/api/v1/no-such-thing/")
            assert response.status_code == 404, method
            assert response["Content-Type"] == "application/json"
            assert response.json() == {"detail": "No API endpoint at /api/v1/no-such-thing/"}


def test_a_missing_slash_is_named(alice):
    response = client_of(alice).get("/api/v1/projects")
    assert response.status_code == 404
    assert response.json() == {
        "detail": "No API endpoint at /api/v1/projects; did you mean /api/v1/projects/ ?"
    }


def test_an_unknown_method_answers_json_405(alice):
    token = Token.objects.create(user=alice)
    response = Client().put("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 405
    assert response.json() == {"detail": 'Method "PUT" not allowed.'}


def test_an_unknown_object_answers_json_404(alice):
    response = client_of(alice).get("/api/v1/trajectories/999999/")
    assert response.status_code == 404
    assert response.json() == {"detail": "No such trajectory"}


def test_a_missing_role_answers_json_403(project, bob):
    response = client_of(bob).post(
        f"/api/v1/projects/{project.pk}/members/",
        {"username": "alice", "role": "reviewer"},
        content_type="application/json",
    )
    assert response.status_code == 403
    assert response.json() == {"detail": "This needs one of the roles: admin"}


def test_a_stale_edit_answers_409_with_the_stored_version(trajectory, bob):
    response = client_of(bob).post(
        f"/api/v1/trajectories/{trajectory.pk}/subgoals/split/",
        {"version": trajectory.version + 5, "step": 1},
        content_type="application/json",
    )
    assert response.status_code == 409
    assert response.json()["version"] == trajectory.version
    assert "reload to see it" in response.json()["detail"]


def test_no_view_maps_errors_itself():
    """The decorator and the per-view handlers are gone: config/errors.py is the one place."""
    from annotate.api import LabelsAPIView
    from devices.api import DeviceAPIView
    from trajectories import views
    from trajectories.api import WaypointAPIView

    assert not hasattr(views, "forbidden_on_access_denied")
    for view in (WaypointAPIView, DeviceAPIView, LabelsAPIView):
        assert "handle_exception" not in vars(view)


# --------------------------------------------------------------------------- schema and docs


def test_the_schema_and_docs_need_a_login(alice):
    response = Client().get("/api/v1/schema/")
    assert response.status_code == 401
    assert response.json() == {"detail": "Authentication credentials were not provided."}
    response = Client().get("/api/v1/docs/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/api/v1/docs/"
    assert client_of(alice).get("/api/v1/schema/").status_code == 200
    assert client_of(alice).get("/api/v1/docs/").status_code == 200
    token = Token.objects.create(user=alice)
    response = Client().get("/api/v1/schema/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200


def test_the_docs_page_answers_other_methods_in_json(alice):
    for client, status in ((Client(), 401), (client_of(alice), 405)):
        for method in ("post", "put", "delete"):
            response = getattr(client, method)("/api/v1/docs/")
            assert (response.status_code, response["Content-Type"]) == (
                status,
                "application/json",
            ), method


def test_a_setting_opens_the_schema_and_docs(settings):
    settings.WAYPOINT_PUBLIC_API_DOCS = True
    assert Client().get("/api/v1/schema/").status_code == 200
    assert Client().get("/api/v1/docs/").status_code == 200


# ------------------------------------------------------------------- what the schema promises


@pytest.mark.parametrize(
    "query, message",
    [
        ("page_size=0", "page_size: must be between 1 and 500, got 0"),
        ("page_size=501", "page_size: must be between 1 and 500, got 501"),
        ("page_size=true", "page_size: must be an integer, got 'true'"),
        ("page=abc", "page: must be an integer, got 'abc'"),
        ("page=0", "page: must be between 1 and 2147483647, got 0"),
    ],
)
def test_a_bad_page_or_page_size_is_refused(project, alice, query, message):
    response = client_of(alice).get(f"/api/v1/projects/?{query}")
    assert (response.status_code, response.json()) == (400, {"detail": message})


def test_a_page_past_the_last_is_a_404(project, alice):
    assert client_of(alice).get("/api/v1/projects/?page=1&page_size=1").status_code == 200
    response = client_of(alice).get("/api/v1/projects/?page=2&page_size=1")
    assert (response.status_code, response.json()) == (404, {"detail": "Invalid page."})


def test_a_number_too_large_for_the_database_is_a_400(project, alice):
    response = client_of(alice).post(
        f"/api/v1/projects/{project.pk}/assignments/",
        {"trajectories": [2**70], "annotators": ["bob"]},
        content_type="application/json",
    )
    assert response.status_code == 400
    # Refused by the request's own bounds, on every database (not left to SQLite's overflow).
    assert response.json() == {
        "detail": "trajectories.0: Ensure this value is less than or equal to 2147483647."
    }


def test_a_form_body_is_refused_as_an_unsupported_media_type(project, alice):
    response = client_of(alice).post(
        "/api/v1/projects/",
        {"name": "Forms"},  # the test client sends multipart
    )
    assert response.status_code == 415
    assert response.json()["detail"].startswith('Unsupported media type "multipart/form-data')


def test_the_schema_documents_the_shared_statuses_and_bounds():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    listing = schema["paths"]["/api/v1/projects/{project_id}/trajectories/"]["get"]
    assert set(listing["responses"]) == {"200", "400", "401", "404", "406", "422"}
    page_size = next(p for p in listing["parameters"] if p["name"] == "page_size")
    assert (page_size["schema"]["minimum"], page_size["schema"]["maximum"]) == (1, 500)
    token = schema["paths"]["/api/v1/auth/token/"]["post"]
    assert set(token["responses"]) == {"200", "400", "401", "406", "415", "429"}
    create = schema["paths"]["/api/v1/projects/"]["post"]
    assert list(create["requestBody"]["content"]) == ["application/json"]
    blob = schema["paths"]["/api/v1/blobs/{sha256}/"]["get"]["responses"]
    assert set(blob["200"]["content"]) == {"image/jpeg", "image/png", "image/webp", "text/xml"}
    export = schema["paths"]["/api/v1/projects/{project_id}/exports/"]["post"]["requestBody"]
    name = export["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    fmt = schema["components"]["schemas"][name]["properties"]["format"]
    enum = fmt["allOf"][0]["$ref"].rsplit("/", 1)[1]
    assert "waypoint" in schema["components"]["schemas"][enum]["enum"]


def test_the_schema_says_a_trimmed_text_needs_more_than_spaces(trajectory, bob):
    """DRF trims text fields: spaces alone are blank (a 400), and the schema says so."""
    import re

    from drf_spectacular.generators import SchemaGenerator

    components = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    key = components["MemoryTargetRequestRequest"]["properties"]["key"]
    assert not re.search(key["pattern"], "\t \u3000\x1f") and re.search(key["pattern"], " k ")
    response = client_of(bob).post(
        f"/api/v1/trajectories/{trajectory.pk}/memory-targets/",
        {"version": trajectory.version, "key": "\t ", "value": "v", "encode_step": 0},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json() == {"detail": "key: This field may not be blank."}
    # An action's text is typed as sent, a space included: no such pattern there.
    assert components["ActionRequest"]["properties"]["text"]["pattern"] == "^[^\\x00]*$"


def test_a_misspelt_query_parameter_is_refused(project, alice):
    response = client_of(alice).get(f"/api/v1/projects/{project.pk}/trajectories/?stauts=approved")
    assert response.status_code == 400
    assert response.json() == {
        "detail": "unknown query parameter 'stauts' (known: app, outcome, page, page_size, "
        "recorder, sort, source, status, task)"
    }


@pytest.mark.parametrize(
    "body, message",
    [
        ({"name": 12}, "name: must be a string, got 12"),
        ({"name": "Shops 2", "description": ["a"]}, "description: must be a string, got ['a']"),
    ],
)
def test_json_values_must_have_the_documented_type(alice, body, message):
    response = client_of(alice).post("/api/v1/projects/", body, content_type="application/json")
    assert (response.status_code, response.json()) == (400, {"detail": message})


def test_json_integers_and_booleans_are_not_strings(trajectory, bob):
    response = client_of(bob).post(
        f"/api/v1/trajectories/{trajectory.pk}/subgoals/split/",
        {"version": "1", "step": 1},
        content_type="application/json",
    )
    assert (response.status_code, response.json()) == (
        400,
        {"detail": "version: must be an integer, got '1'"},
    )
    response = client_of(bob).patch(
        f"/api/v1/trajectories/{trajectory.pk}/step-labels/0/",
        {"version": trajectory.version, "trainable": "yes"},
        content_type="application/json",
    )
    assert (response.status_code, response.json()) == (
        400,
        {"detail": "trainable: must be true or false, got 'yes'"},
    )


def test_a_server_error_under_the_api_is_json(alice, monkeypatch):
    from trajectories.api import ProjectListView

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(ProjectListView, "get", broken)
    client = client_of(alice)
    client.raise_request_exception = False
    response = client.get("/api/v1/projects/")
    assert response.status_code == 500
    assert response.json() == {"detail": "Server error."}


def test_a_multipart_import_reads_its_fields_as_text(project, alice):
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = client_of(alice).post(
        f"/api/v1/projects/{project.pk}/imports/",
        {"file": SimpleUploadedFile("x.zip", b"\x00"), "format": "waypoint", "as_copies": "true"},
    )
    assert response.status_code == 422  # not an archive: but as_copies=true was understood
    assert response.json() == {"detail": "file: x.zip is not a readable .zip archive"}


def test_an_empty_filter_filters_nothing_as_documented(trajectory, project, alice):
    response = client_of(alice).get(f"/api/v1/projects/{project.pk}/trajectories/?status=")
    assert response.status_code == 200 and response.json()["count"] == 1
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    listing = schema["paths"]["/api/v1/projects/{project_id}/trajectories/"]["get"]
    status = next(p for p in listing["parameters"] if p["name"] == "status")
    assert "" in status["schema"]["enum"]


def test_a_null_export_filter_is_no_filter_as_the_schema_allows(project, alice):
    response = client_of(alice).post(
        f"/api/v1/projects/{project.pk}/exports/",
        {"format": "waypoint", "filters": {"status": None}},
        content_type="application/json",
    )
    assert response.status_code == 202
    assert response.json()["params"]["filters"] == {}


# ---------------------------------------------------------------------- the database goes away

DOWN = "the database is not answering; try again shortly"


class DatabaseDown:
    """An ``execute_wrapper`` under which every query fails as a database that went away does
    (on SQLite and PostgreSQL alike: Django raises its own OperationalError for both); counts
    the queries asked, so that the answer is seen to ask no more."""

    def __init__(self, error: type[Exception] = OperationalError) -> None:
        self.error, self.asked = error, 0

    def __call__(self, execute, sql, params, many, context):
        self.asked += 1
        raise self.error('connection to server at "postgres" port 5432 failed: Connection refused')


@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_an_api_request_during_an_outage_is_a_503_to_retry(project, alice, error):
    token = Token.objects.create(user=alice)
    down = DatabaseDown(error)
    with connection.execute_wrapper(down):
        response = Client().get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert (response.status_code, response["Retry-After"], response.json()) == (
        503,
        "5",
        {"detail": DOWN},
    )
    assert down.asked == 1  # the token's lookup, and nothing after it


def test_an_api_request_with_a_session_during_an_outage_is_a_503(project, alice):
    client = client_of(alice)
    with connection.execute_wrapper(DatabaseDown()):
        response = client.post(
            "/api/v1/projects/", {"name": "Outage"}, content_type="application/json"
        )
    assert (response.status_code, response["Retry-After"]) == (503, "5")
    assert response.json() == {"detail": DOWN}


def test_a_page_during_an_outage_is_a_plain_503_that_asks_the_database_nothing(project, alice):
    client = client_of(alice)
    down = DatabaseDown()
    with connection.execute_wrapper(down):
        response = client.get(f"/projects/{project.pk}/trajectories/")
    assert (response.status_code, response["Retry-After"]) == (503, "5")
    assert response["Content-Type"] == "text/html; charset=utf-8"
    page = response.content.decode()
    assert "<h1>The database is not answering</h1>" in page
    assert "The database is not answering; try again shortly." in page
    assert "alice" not in page  # no user: finding them needs the database
    assert down.asked == 1  # the session's lookup; the page itself asked nothing


def test_htmx_during_an_outage_gets_the_message_alone(project, alice):
    client = client_of(alice)
    with connection.execute_wrapper(DatabaseDown()):
        response = client.get(f"/projects/{project.pk}/trajectories/", **HX)
    assert (response.status_code, response["Retry-After"]) == (503, "5")
    assert response["Content-Type"].startswith("text/plain")
    assert response.content.decode() == DOWN


@pytest.mark.parametrize("path", ["/api/v1/projects/", "/projects/"])
def test_an_outage_outside_any_view_is_the_same_503(path):
    """handler500 sees what went wrong: a middleware's query (saving the session) failing."""
    from django.test import RequestFactory

    from config.errors import server_error

    try:
        raise OperationalError("server closed the connection unexpectedly")
    except OperationalError:
        response = server_error(RequestFactory().get(path))
    assert (response.status_code, response["Retry-After"]) == (503, "5")
    assert "not answering; try again shortly" in response.content.decode()


def test_other_errors_are_still_a_plain_500():
    from django.test import RequestFactory

    from config.errors import server_error

    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        response = server_error(RequestFactory().get("/api/v1/projects/"))
    assert (response.status_code, response.content) == (500, b'{"detail": "Server error."}')
    assert not response.has_header("Retry-After")
