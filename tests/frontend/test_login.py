from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_it_renders_the_login_page(client):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert b'name="username"' in response.content
    assert b'name="password"' in response.content


def test_it_logs_in_and_lands_on_the_projects(client, alice):
    response = client.post(
        reverse("login"), {"username": "alice", "password": "alice-password"}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("project-list")
    assert b"Projects" in response.content
    assert b"alice" in response.content


def test_it_rejects_a_wrong_password(client, alice):
    response = client.post(reverse("login"), {"username": "alice", "password": "nope"})
    assert response.status_code == 200
    assert b"didn't match" in response.content


def test_it_logs_out(client, alice):
    client.force_login(alice)
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert response["Location"] == reverse("login")
    assert client.get(reverse("project-list")).status_code == 302


def test_it_sends_anonymous_users_to_login(client):
    response = client.get(reverse("project-list"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
