"""Who may use the environment server: the API's tokens of the project's members (those who may
see its gold, when it hides it: the rewards tell the gold); how many sessions at once."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from rest_framework.authtoken.models import Token

from rl.client import WaypointEnv
from rl.server import NO_HTTP_SESSION
from trajectories.services import do_update_project

from .conftest import TASKS, WEATHER


def http(url: str, path: str, token: str | None = None, data: bytes | None = None):
    """(status, JSON body) of a request to the server."""
    headers = {"Authorization": f"Token {token}"} if token else {}
    if data is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def refusal(url: str, token: str) -> str:
    with pytest.raises(ConnectionError) as refused:
        WaypointEnv(url, token).connect()
    return str(refused.value).split("refused the session: ", 1)[1]


@pytest.mark.django_db(transaction=True)
def test_a_session_needs_a_token_of_a_member(serve, token, bob, charlie):
    url = serve()
    assert refusal(url, "") == (
        "HTTP 401: send one of the API's tokens as the header Authorization: Token <token>"
    )
    assert refusal(url, "0" * 40) == (
        "HTTP 401: the token is not valid: send one of the API's tokens as the header "
        "Authorization: Token <token>"
    )
    outsider = Token.objects.create(user=charlie).key
    assert refusal(url, outsider).startswith("HTTP 403: charlie is not a member of project ")
    member = Token.objects.create(user=bob).key
    with WaypointEnv(url, member) as env:
        assert env.state().step_count == 0  # bob, an annotator of the project, may train


@pytest.mark.django_db(transaction=True)
def test_a_project_that_hides_its_gold_serves_only_those_who_may_see_it(
    serve, token, project, alice, bob
):
    do_update_project(project, alice, hide_gold=True)
    url = serve()
    annotator = Token.objects.create(user=bob).key
    assert refusal(url, annotator) == (
        "HTTP 403: this project hides gold answers: only its admins can train on its tasks (the "
        "rewards tell its gold)"
    )
    with WaypointEnv(url, token) as env:  # alice, its admin
        assert env.state().step_count == 0


@pytest.mark.django_db(transaction=True)
def test_the_server_says_what_it_poses_and_keeps_no_session_over_plain_http(serve, token):
    url = serve()
    assert http(url, "/health") == (200, {"status": "healthy"})
    assert http(url, "/info")[0] == 401
    status, info = http(url, "/info", token)
    assert status == 200
    assert info["tasks"] == list(TASKS)
    assert info["screen"] == {"width": 540, "height": 1200}
    assert (info["devices"], info["stored"]) == (1, True)
    assert info["rewards"] == {
        "parts": {"task": 1.0, "format": -0.3, "memory": 0.3},
        "memory_by": "rules",
        "delay": "step",
    }
    assert info["formats"] == [
        "waypoint",
        "mobile_use",
        "androtmem-v1",
        "androtmem-v2",
        "androtmem-v3",
    ]
    reset = json.dumps({"seed": 1, "task": WEATHER}).encode()
    assert http(url, "/reset", token, reset) == (409, {"detail": NO_HTTP_SESSION})


@pytest.mark.django_db(transaction=True)
def test_sessions_past_the_servers_limit_are_refused(serve, token):
    url = serve(max_sessions=1)
    with WaypointEnv(url, token) as first:
        first.state()
        with WaypointEnv(url, token) as second, pytest.raises(RuntimeError) as refused:
            second.state()
    assert str(refused.value) == (
        "Server error: Server at capacity: 1/1 sessions active. Cannot accept new connections. "
        "(code: CAPACITY_REACHED)"
    )
