"""Model endpoints are configured objects: a spec names one (``endpoint=NAME``) and never a URL,
so no member can send the server's key, its screenshots or its requests where they like; a site
admin registers endpoints (a project's admin too where the site allows it), each key goes to its
own URL only, and no answer, page, audit event or log line shows a key again."""

from __future__ import annotations

import io
import json
import logging

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from agents.models import ModelEndpoint
from agents.registry import build_agent, check_agent, parse_agent_spec
from tests.agents.builders import finished_run, register_endpoint
from tests.agents.test_chat import observation, owl
from tests.annotate.llm_server import Server
from tests.core.test_llm_destinations import Listener
from trajectories.models import AuditEvent

pytestmark = pytest.mark.django_db
KEY = "sk-registered-5f1c9e"
SERVER_KEY = "sk-server-env-8d2a"


@pytest.fixture
def listener():
    found = Listener()
    yield found
    found.close()


@pytest.fixture
def model_server(settings):
    settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]
    servers = []

    def start(answers):
        servers.append(Server([(200, a, 0) for a in answers]))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.fixture
def site_admin(db):
    return get_user_model().objects.create_user("sam", "sam@example.org", "sam-pw", is_staff=True)


def api_as(user) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/v1",
        "file:///proc/self/environ#/chat/completions",
        "http://169.254.169.254/latest",
    ],
)
def test_a_member_cannot_name_a_url_for_the_server_s_key(project, bob, listener, settings, url):
    settings.LLM_API_KEY = SERVER_KEY
    body = {
        "agent": f"openai:mobile_use,url={url.format(port=listener.port)}",
        "tasks": ["ava-door-code"],
        "seeds": "1",
    }
    answer = api_as(bob).post(f"/api/v1/projects/{project.pk}/runs/", body, format="json")
    assert answer.status_code == 422
    assert answer.json()["detail"] == (
        "agent: a spec names no URL: a site admin registers the model endpoint, and the spec "
        "names it with endpoint=NAME (without it, LLM_BASE_URL)"
    )
    assert listener.received == []


def test_a_site_admin_registers_an_endpoint_and_the_key_is_never_shown(
    site_admin, project, alice, bob
):
    body = {"name": "lab", "url": "http://93.184.216.34/v1", "model": "owl-7b", "api_key": KEY}
    created = api_as(site_admin).post("/api/v1/endpoints/", body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json() == {
        "name": "lab",
        "scope": "site",
        "url": "http://93.184.216.34/v1",
        "model": "owl-7b",
        "has_key": True,
        "created_at": created.json()["created_at"],
    }
    listed = api_as(bob).get(f"/api/v1/projects/{project.pk}/endpoints/")
    assert [row["name"] for row in listed.json()] == ["lab"]
    for answer in (
        created,
        listed,
        api_as(site_admin).get("/api/v1/endpoints/"),
        api_as(alice).get("/api/v1/endpoints/"),
    ):
        assert KEY not in answer.content.decode()
    events = AuditEvent.objects.filter(kind="endpoint.registered")
    assert events.count() == 1 and KEY not in json.dumps(events.get().after)
    assert ModelEndpoint.objects.get(name="lab").api_key == KEY  # kept on the server


def test_only_site_admins_register_site_endpoints(alice, bob, charlie):
    body = {"name": "lab", "url": "http://93.184.216.34/v1", "model": "m", "api_key": "sk-x"}
    for user in (alice, bob, charlie):
        refused = api_as(user).post("/api/v1/endpoints/", body, format="json")
        assert refused.status_code == 403
        assert refused.json()["detail"] == "Only site admins register the site's model endpoints"
    assert not ModelEndpoint.objects.exists()


def test_a_project_s_admins_register_its_endpoints_only_where_the_site_allows_it(
    project, alice, bob, settings
):
    body = {"name": "ours", "url": "http://93.184.216.34/v1", "model": "m"}
    url = f"/api/v1/projects/{project.pk}/endpoints/"
    settings.WAYPOINT_PROJECT_ENDPOINTS = False
    refused = api_as(alice).post(url, body, format="json")
    assert (refused.status_code, refused.json()["detail"]) == (
        403,
        "Only site admins register model endpoints here (WAYPOINT_PROJECT_ENDPOINTS is off)",
    )
    settings.WAYPOINT_PROJECT_ENDPOINTS = True
    refused = api_as(bob).post(url, body, format="json")
    assert (refused.status_code, refused.json()["detail"]) == (
        403,
        "Only the project's admins register its model endpoints",
    )
    created = api_as(alice).post(url, body, format="json")
    assert created.status_code == 201 and created.json()["scope"] == "project"
    assert api_as(bob).delete(f"{url}ours/").status_code == 403
    assert api_as(alice).delete(f"{url}ours/").status_code == 204
    assert not ModelEndpoint.objects.exists()


@pytest.mark.parametrize(
    "url, message",
    [
        (
            "file:///etc/passwd",
            "url: refused file:///etc/passwd: only http and https URLs are asked",
        ),
        (
            "http://169.254.169.254/latest",
            "url: refused http://169.254.169.254/latest: 169.254.169.254 is at 169.254.169.254, "
            "not a public address (list it in WAYPOINT_ENDPOINT_ALLOWED_HOSTS to allow it)",
        ),
        (
            "http://127.0.0.1:8001/v1",
            "url: refused http://127.0.0.1:8001/v1: 127.0.0.1 is at 127.0.0.1, not a public "
            "address (list it in WAYPOINT_ENDPOINT_ALLOWED_HOSTS to allow it)",
        ),
        (
            "https://user:pw@models.example/v1",
            "url: refused https://user:pw@models.example/v1: credentials go in the endpoint's "
            "key, not the URL",
        ),
    ],
)
def test_a_registration_names_what_is_wrong_with_its_url(site_admin, settings, url, message):
    settings.LLM_BASE_URL = ""
    settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = []
    body = {"name": "lab", "url": url, "model": "m"}
    refused = api_as(site_admin).post("/api/v1/endpoints/", body, format="json")
    assert (refused.status_code, refused.json()["detail"]) == (422, message)


def test_a_name_is_registered_once_per_scope(site_admin):
    register_endpoint("http://93.184.216.34/v1", name="lab")
    body = {"name": "lab", "url": "http://93.184.216.34/v2", "model": "m"}
    again = api_as(site_admin).post("/api/v1/endpoints/", body, format="json")
    assert (again.status_code, again.json()["detail"]) == (
        422,
        "name: the site already has an endpoint 'lab' (remove it first to replace it)",
    )


def test_an_agent_asks_its_registered_endpoint_with_its_own_key_only(
    project, model_server, settings, caplog
):
    settings.LLM_API_KEY = SERVER_KEY
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    registered = model_server([owl({"action": "click", "coordinate": [500, 500]})])
    default = model_server([owl({"action": "click", "coordinate": [500, 500]})])
    settings.LLM_BASE_URL = default.url
    register_endpoint(registered.url, name="lab", model="owl-7b", key=KEY)
    caplog.set_level(logging.DEBUG)
    for text in ("openai:mobile_use,endpoint=lab", "openai:mobile_use"):
        spec = parse_agent_spec(text)
        check_agent(spec, project, [])
        agent = build_agent(spec, project, "ava-door-code", 1)
        agent.start("Find the door code")
        agent.act(observation())
    assert [r["auth"] for r in registered.requests] == [f"Bearer {KEY}"]
    assert registered.requests[0]["body"]["model"] == "owl-7b"
    assert [r["auth"] for r in default.requests] == [f"Bearer {SERVER_KEY}"]
    assert KEY not in caplog.text and SERVER_KEY not in caplog.text


def test_a_run_names_its_endpoint_and_no_answer_or_page_shows_the_key(project, alice, bob, client):
    register_endpoint("http://93.184.216.34/v1", name="lab", key=KEY)
    run = finished_run(
        project, alice, {("ava-door-code", 1): "ok"}, agent="openai:mobile_use,endpoint=lab"
    )
    client.force_login(bob)
    for url in (
        f"/api/v1/runs/{run.pk}/",
        f"/api/v1/projects/{project.pk}/runs/",
        f"/api/v1/projects/{project.pk}/endpoints/",
        f"/projects/{project.pk}/runs/",
        f"/runs/{run.pk}/",
    ):
        answer = client.get(url)
        assert answer.status_code == 200, url
        assert KEY not in answer.content.decode(), url


def test_an_unknown_endpoint_is_refused_naming_the_project_s(project):
    register_endpoint("http://93.184.216.34/v1", name="lab")
    spec = parse_agent_spec("openai:mobile_use,endpoint=elsewhere")
    with pytest.raises(
        Exception, match=r"no model endpoint named 'elsewhere' \(the project's: lab\)"
    ):
        check_agent(spec, project, [])


def test_the_command_registers_lists_and_removes_without_printing_the_key(site_admin, monkeypatch):
    monkeypatch.setenv("LAB_KEY", KEY)
    out = io.StringIO()
    call_command(
        "endpoints",
        "add",
        "lab",
        "--url",
        "http://93.184.216.34/v1",
        "--model",
        "m",
        "--key-env",
        "LAB_KEY",
        stdout=out,
    )
    call_command("endpoints", "list", stdout=out)
    assert out.getvalue() == (
        "Registered site endpoint lab\nlab\tsite\thttp://93.184.216.34/v1\tm\tkey\n"
    )
    assert ModelEndpoint.objects.get().api_key == KEY
    with pytest.raises(CommandError, match="url: refused file:///x: only http and https"):
        call_command("endpoints", "add", "bad", "--url", "file:///x", "--model", "m")
    call_command("endpoints", "remove", "lab", stdout=out)
    assert not ModelEndpoint.objects.exists()
