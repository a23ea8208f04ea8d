"""Who is asking: Django's sessions (in the database, or in Redis in front of it where there is
one) and DRF's API tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db

SIGNED_IN = b'<span class="who">alice</span>'


@pytest.fixture(params=["db", "cached_db"])
def engine(request, settings) -> str:
    """Each session engine the settings choose from: the database alone, or the configured
    Redis in front of it (without one, a cache in this process stands in for it)."""
    if request.param == "cached_db":
        caches = dict(settings.CACHES)
        caches.setdefault(
            "sessions",
            {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "sessions"},
        )
        settings.CACHES = caches
        settings.SESSION_CACHE_ALIAS = "sessions"
        settings.SESSION_COOKIE_AGE = 300  # what a test leaves in a shared Redis soon expires
    settings.SESSION_ENGINE = f"django.contrib.sessions.backends.{request.param}"
    return request.param


def log_in(client: Client, username: str = "alice", password: str = "alice-password") -> None:
    response = client.post(reverse("login"), {"username": username, "password": password})
    assert response.status_code == 302


def signed_in(client: Client) -> bool:
    response = client.get(reverse("project-list"))
    if response.status_code == 302:
        assert response["Location"].startswith(reverse("login"))
        return False
    assert response.status_code == 200
    return SIGNED_IN in response.content


def test_a_signed_in_person_stays_signed_in_across_requests(client, alice, engine):
    log_in(client)
    assert [signed_in(client) for _ in range(3)] == [True, True, True]


def test_logging_out_ends_the_session_for_whoever_holds_its_cookie(client, alice, engine):
    log_in(client)
    cookie = client.cookies["sessionid"].value
    client.post(reverse("logout"))
    assert not signed_in(client)
    replay = Client()
    replay.cookies["sessionid"] = cookie
    assert not signed_in(replay)


def test_an_expired_session_signs_nobody_in(client, alice):
    client.force_login(alice)
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    assert not signed_in(client)


def test_a_deactivated_user_is_signed_out_of_their_session(client, alice, engine):
    log_in(client)
    alice.is_active = False
    alice.save()
    assert not signed_in(client)


def test_a_changed_password_ends_the_other_sessions(client, alice, engine):
    log_in(client)
    alice.set_password("a-new-password")
    alice.save()
    assert not signed_in(client)


def test_a_deleted_users_session_signs_nobody_in(client, alice, bob, engine):
    log_in(client)
    other = Client()
    log_in(other, "bob", "bob-password")
    alice.delete()
    assert not signed_in(client)
    assert other.get(reverse("project-list")).status_code == 200


def test_a_forged_session_key_signs_nobody_in(client, alice, engine):
    client.cookies["sessionid"] = "x" * 32
    assert not signed_in(client)


def test_a_request_reads_its_session_from_redis_when_there_is_one(client, alice, engine):
    log_in(client)
    signed_in(client)
    with CaptureQueriesContext(connection) as captured:
        assert signed_in(client)
    sessions = [q for q in captured if 'FROM "django_session"' in q["sql"]]
    users = [q for q in captured if 'FROM "auth_user"' in q["sql"]]
    assert (len(sessions), len(users)) == ((1, 1) if engine == "db" else (0, 1))


def test_a_token_signs_its_user_in(client, alice):
    token = Token.objects.create(user=alice)
    response = client.get(reverse("api-projects"), headers={"Authorization": f"Token {token.key}"})
    assert response.status_code == 200


def test_an_unknown_token_is_refused(client, alice):
    response = client.get(reverse("api-projects"), headers={"Authorization": "Token " + "0" * 40})
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


def test_the_token_of_a_deactivated_user_is_refused(client, alice):
    token = Token.objects.create(user=alice)
    alice.is_active = False
    alice.save()
    response = client.get(reverse("api-projects"), headers={"Authorization": f"Token {token.key}"})
    assert response.status_code == 401
    assert response.json() == {"detail": "User inactive or deleted."}


def test_a_deleted_users_token_is_refused(client, alice):
    token = Token.objects.create(user=alice)
    alice.delete()
    response = client.get(reverse("api-projects"), headers={"Authorization": f"Token {token.key}"})
    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}
