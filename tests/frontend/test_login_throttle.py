"""Logins are throttled per account and per address, on the login page and the token endpoint."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from core.login_throttle import client_ip

pytestmark = pytest.mark.django_db

BLOCKED = (
    "Too many failed logins for this account or from this address: logging in is blocked for "
    "15 minutes after the last failed attempt. Try again later, or ask an admin to unblock you."
)


def log_in(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def get_token(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post(
        "/api/v1/auth/token/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def cool_off_passes() -> None:
    """Move every counted failure back past the cool-off (instead of waiting 15 minutes)."""
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(seconds=901))


def test_twenty_wrong_passwords_then_the_right_one_is_refused_on_the_page(client, alice):
    for _ in range(20):
        log_in(client, "alice", "wrong")
    response = log_in(client, "alice", "alice-password")
    assert response.status_code == 429
    assert BLOCKED in response.content.decode()
    assert response["Retry-After"] == "900"
    assert "_auth_user_id" not in client.session
    cool_off_passes()
    response = log_in(client, "alice", "alice-password")
    assert response.status_code == 302 and response["Location"] == reverse("project-list")


def test_the_limit_counts_failures_for_the_account(client, alice, settings):
    settings.WAYPOINT_LOGIN_FAILURE_LIMIT = 3
    log_in(client, "alice", "wrong", "10.0.0.1")
    log_in(client, "alice", "wrong", "10.0.0.2")
    assert log_in(client, "alice", "alice-password", "10.0.0.3").status_code == 302
    log_in(Client(), "alice", "wrong", "10.0.0.4")
    # The third failure, from yet another address, blocks the account everywhere.
    assert log_in(Client(), "alice", "alice-password", "10.0.0.5").status_code == 429


def test_the_limit_counts_failures_from_an_address(client, alice, bob, settings):
    settings.WAYPOINT_LOGIN_FAILURE_LIMIT = 3
    for name in ("x", "y", "z"):
        log_in(client, name, "guess", "10.9.9.9")
    assert log_in(Client(), "bob", "bob-password", "10.9.9.9").status_code == 429
    assert log_in(Client(), "bob", "bob-password", "10.0.0.8").status_code == 302


def test_the_token_endpoint_is_throttled_with_json(client, alice):
    for _ in range(20):
        response = get_token(client, "alice", "wrong")
    response = get_token(client, "alice", "alice-password")
    assert response.status_code == 429
    assert response.json() == {"detail": BLOCKED}
    assert response["Retry-After"] == "900"
    cool_off_passes()
    response = get_token(client, "alice", "alice-password")
    assert response.status_code == 200 and response.json()["token"]


def test_a_wrong_password_below_the_limit_says_so(client, alice):
    response = log_in(client, "alice", "wrong")
    assert response.status_code == 200 and b"didn't match" in response.content
    response = get_token(client, "alice", "wrong")
    assert response.status_code == 401  # wrong credentials (a missing field is a 400)


class FakeRequest:
    def __init__(self, remote: str, forwarded: str = ""):
        self.META = {"REMOTE_ADDR": remote, "HTTP_X_FORWARDED_FOR": forwarded}


def test_the_client_address_behind_proxies(settings):
    spoofed = FakeRequest("172.18.0.5", "6.6.6.6, 203.0.113.7")
    settings.WAYPOINT_PROXY_HOPS = 0
    assert client_ip(spoofed) == "172.18.0.5"
    settings.WAYPOINT_PROXY_HOPS = 1
    # Only what the proxy appended counts: the client wrote 6.6.6.6 itself.
    assert client_ip(spoofed) == "203.0.113.7"
    settings.WAYPOINT_PROXY_HOPS = 2
    two_proxies = FakeRequest("10.0.0.2", "6.6.6.6, 198.51.100.4, 10.0.0.1")
    assert client_ip(two_proxies) == "198.51.100.4"
    assert client_ip(FakeRequest("10.0.0.2")) == "10.0.0.2"
