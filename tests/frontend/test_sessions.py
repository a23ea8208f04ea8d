"""Who is asking: sessions and API tokens (config/sessions.py, config/auth.py) still mean
what Django's mean, though they are read by prepared queries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

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
