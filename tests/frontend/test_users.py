"""Site admins create accounts and hand out one-time set-password links; nobody else can.

alice is a project admin and (where it says so) a site admin; bob a member; charlie an outsider.
"""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from trajectories import events
from trajectories.models import AuditEvent

pytestmark = pytest.mark.django_db

USERS = "/users/"


@pytest.fixture
def site_admin(alice):
    alice.is_staff = True
    alice.save(update_fields=["is_staff"])
    return alice


def as_user(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def link_in(page: str) -> str:
    found = re.search(r'id="password-link" readonly value="http://testserver([^"]+)"', page)
    assert found, page
    return html.unescape(found.group(1))


def logs_in(username: str, password: str) -> bool:
    response = Client().post(reverse("login"), {"username": username, "password": password})
    return response.status_code == 302


def set_password(link: str, password: str) -> Client:
    """Follow a set-password link as its user and choose ``password``; the client after."""
    client = Client()
    # The token is in the link's query string, which the access logs leave out.
    uid, token = token_of(link)
    assert urlsplit(link).path == "/set-password/"
    response = client.get(link)
    assert response.status_code == 302  # the token is moved into the session
    form = response["Location"]
    assert form == f"/set-password/{uid}/set/"
    page = client.get(form).content.decode()
    assert "Set your password" in page and token not in page
    response = client.post(form, {"new_password1": password, "new_password2": password})
    assert response["Location"] == reverse("set-password-done")
    done = client.get(response["Location"])
    assert token not in done.content.decode()
    return client


def token_of(link: str) -> tuple[str, str]:
    query = parse_qs(urlsplit(link).query)
    assert set(query) == {"uid", "token"}, link
    return query["uid"][0], query["token"][0]


def test_a_site_admin_creates_a_user_who_sets_a_password(site_admin):
    page = as_user(site_admin).get(USERS).content.decode()
    assert '<tr data-user="alice">' in page and "New user" in page
    response = as_user(site_admin).post(
        USERS, {"username": "erin", "first_name": "Erin", "email": "erin@example.org"}
    )
    page = response.content.decode()
    assert "Created erin" in page and "It works once" in page
    erin = get_user_model().objects.get(username="erin")
    assert (erin.first_name, erin.email, erin.has_usable_password()) == (
        "Erin",
        "erin@example.org",
        False,
    )
    kinds = list(AuditEvent.objects.filter(object_id=str(erin.pk)).values_list("kind", "actor"))
    assert sorted(kinds) == [
        (events.USER_CREATED, site_admin.pk),
        (events.PASSWORD_LINK_CREATED, site_admin.pk),
    ]
    link = link_in(page)
    assert not logs_in("erin", "a long Erin password 7")
    set_password(link, "a long Erin password 7")
    assert logs_in("erin", "a long Erin password 7")
    # Once used, the link is spent.
    spent = Client().get(link, follow=True).content.decode()
    assert "This link no longer works" in spent


def test_the_users_list_shows_the_new_account_without_a_password(site_admin):
    as_user(site_admin).post(USERS, {"username": "erin"})
    page = as_user(site_admin).get(USERS, {"q": "eri"}).content.decode()
    row = page.split('<tr data-user="erin">')[1].split("</tr>")[0]
    assert "no password yet" in row and "never" in row
    assert '<tr data-user="alice">' not in page


def test_a_new_link_replaces_a_forgotten_password(site_admin, bob):
    response = as_user(site_admin).post(reverse("user-password-link", args=[bob.pk]))
    page = response.content.decode()
    assert "A new link for bob" in page
    bob.refresh_from_db()
    assert bob.check_password("bob-password")  # nothing changes until bob uses it
    set_password(link_in(page), "bob's new long password")
    assert logs_in("bob", "bob's new long password")
    assert not logs_in("bob", "bob-password")


def test_a_deactivated_account_gets_no_link(site_admin):
    eve = get_user_model().objects.create_user("eve", is_active=False)
    response = as_user(site_admin).post(reverse("user-password-link", args=[eve.pk]))
    assert "eve&#x27;s account is deactivated" in response.content.decode()
    assert not AuditEvent.objects.filter(kind=events.PASSWORD_LINK_CREATED).exists()


@pytest.mark.parametrize(
    "data, message",
    [
        ({"username": "Bob"}, "there is already a user named &#x27;bob&#x27;"),
        ({"username": "two words"}, "Enter a valid username"),
        ({"username": ""}, "This field is required."),
        ({"username": "erin", "email": "not an email"}, "Enter a valid email address."),
    ],
)
def test_it_refuses_bad_accounts(site_admin, bob, data, message):
    response = as_user(site_admin).post(USERS, data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert set(get_user_model().objects.values_list("username", flat=True)) == {"alice", "bob"}


@pytest.mark.parametrize(
    "link",
    ["/set-password/?uid=Mg&token=abc-123", "/set-password/?uid=%2F&token=", "/set-password/"],
)
def test_a_bad_link_is_refused_at_an_address_without_its_token(bob, link):
    response = Client().get(link, follow=True)
    assert response.redirect_chain in ([], [("/set-password/", 302)])
    page = response.content.decode()
    assert "This link no longer works" in page
    assert 'name="new_password1"' not in page


def test_the_form_needs_the_token_in_the_session(bob):
    """The form's address alone (no link followed in this browser) sets nothing."""
    from django.utils.http import urlsafe_base64_encode

    form = f"/set-password/{urlsafe_base64_encode(str(bob.pk).encode())}/set/"
    page = Client().get(form).content.decode()
    assert "This link no longer works" in page
    response = Client().post(form, {"new_password1": "x" * 20, "new_password2": "x" * 20})
    assert "This link no longer works" in response.content.decode()
    bob.refresh_from_db()
    assert bob.check_password("bob-password")


def test_a_token_in_the_path_is_no_link(site_admin, bob):
    """The old shape, which put the token in every access log line: no longer a route."""
    page = as_user(site_admin).post(reverse("user-password-link", args=[bob.pk])).content
    uid, token = token_of(link_in(page.decode()))
    assert Client().get(f"/set-password/{uid}/{token}/").status_code == 404


def test_project_admins_and_members_who_are_not_site_admins_cannot(project, alice, bob, charlie):
    for user in (alice, bob, charlie):
        client = as_user(user)
        assert client.get(USERS).status_code == 403
        assert client.post(USERS, {"username": "mallory"}).status_code == 403
        assert client.post(reverse("user-password-link", args=[bob.pk])).status_code == 403
    assert not get_user_model().objects.filter(username="mallory").exists()
    assert Client().get(USERS)["Location"].startswith(reverse("login"))


def test_only_site_admins_see_users_in_the_top_bar(site_admin, bob):
    assert 'href="/users/">Users</a>' in as_user(site_admin).get("/").content.decode()
    assert 'href="/users/">Users</a>' not in as_user(bob).get("/").content.decode()


def test_a_user_created_from_the_members_page_joins_the_project(project, site_admin):
    page = as_user(site_admin).get(
        USERS, {"username": "erin", "project": project.pk, "role": "reviewer"}
    )
    html = page.content.decode()
    assert 'value="erin"' in html and "Joins Shops as" in html
    assert '<option value="reviewer" selected>' in html
    response = as_user(site_admin).post(
        USERS, {"username": "erin", "project": project.pk, "role": "reviewer"}
    )
    assert "erin is now reviewer of" in response.content.decode()
    assert project.memberships.get(user__username="erin").role == "reviewer"
    assert AuditEvent.objects.filter(kind=events.MEMBERSHIP_SET, project=project).exists()


def test_a_site_admin_cannot_add_a_new_user_to_someone_elses_project(site_admin, charlie):
    from trajectories.services import do_create_project

    theirs = do_create_project("Theirs", charlie)
    response = as_user(site_admin).post(USERS, {"username": "erin", "project": theirs.pk})
    assert response.status_code == 404
    assert not get_user_model().objects.filter(username="erin").exists()
