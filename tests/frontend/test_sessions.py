"""Who is asking: sessions and API tokens (config/sessions.py, config/auth.py) still mean
what Django's mean, though they are read by prepared queries."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

from config.sessions import SessionStore
from frontend.models import Session

pytestmark = pytest.mark.django_db


def test_a_signed_in_session_reaches_the_pages(client, alice):
    client.post(reverse("login"), {"username": "alice", "password": "alice-password"})
    response = client.get(reverse("project-list"))
    assert response.status_code == 200
    assert b'<span class="who">alice</span>' in response.content


def test_an_expired_session_signs_nobody_in(client, alice):
    client.force_login(alice)
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    response = client.get(reverse("project-list"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_deactivated_user_is_signed_out_of_their_session(client, alice):
    client.force_login(alice)
    alice.is_active = False
    alice.save()
    assert client.get(reverse("project-list")).status_code == 302


def test_a_changed_password_ends_the_other_sessions(client, alice):
    client.force_login(alice)
    alice.set_password("a-new-password")
    alice.save()
    assert client.get(reverse("project-list")).status_code == 302


def test_a_forged_session_key_signs_nobody_in(client, alice):
    client.cookies["sessionid"] = "x" * 32
    assert client.get(reverse("project-list")).status_code == 302


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


def test_a_session_is_stored_with_the_user_it_signs_in(client, alice, bob):
    client.post(reverse("login"), {"username": "alice", "password": "alice-password"})
    assert list(Session.objects.values_list("user__username", flat=True)) == ["alice"]
    client.post(reverse("logout"))
    assert not Session.objects.exists()
    client.post(reverse("login"), {"username": "bob", "password": "bob-password"})
    assert list(Session.objects.values_list("user__username", flat=True)) == ["bob"]


def test_a_request_reads_its_session_and_user_in_one_query(client, alice):
    client.force_login(alice)
    client.get(reverse("project-list"))
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("project-list")).status_code == 200
    first = captured[0]["sql"]
    assert '"frontend_session"' in first and '"auth_user"' in first
    assert not any('FROM "auth_user"' in q["sql"] for q in captured[1:])


def test_a_deleted_user_takes_their_sessions_along(client, alice, bob):
    client.force_login(alice)
    other = Client()
    other.force_login(bob)
    alice.delete()
    assert list(Session.objects.values_list("user__username", flat=True)) == ["bob"]
    assert client.get(reverse("project-list")).status_code == 302
    assert other.get(reverse("project-list")).status_code == 200


def test_the_upgrade_carries_signed_in_sessions_over(alice):
    from django.apps import apps
    from django.contrib.sessions.backends.db import SessionStore as DjangoSessionStore
    from django.contrib.sessions.models import Session as DjangoSession

    carry = importlib.import_module("frontend.migrations.0001_sessions").carry_sessions_over
    signed_in = DjangoSessionStore()
    signed_in.update({"_auth_user_id": str(alice.pk), "_auth_user_backend": "x", "k": 1})
    signed_in.create()
    anonymous = DjangoSessionStore()
    anonymous["cart"] = [1, 2]
    anonymous.create()
    expired = DjangoSessionStore()
    expired["_auth_user_id"] = str(alice.pk)
    expired.create()
    DjangoSession.objects.filter(session_key=expired.session_key).update(
        expire_date=timezone.now() - timedelta(days=1)
    )
    carry(apps, None)
    carried = {s.session_key: s for s in Session.objects.all()}
    assert set(carried) == {signed_in.session_key, anonymous.session_key}
    assert carried[signed_in.session_key].user_id == alice.pk
    assert carried[anonymous.session_key].user_id is None
    assert SessionStore(signed_in.session_key).load()["k"] == 1  # still signed, still read
