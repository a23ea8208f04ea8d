"""A project's members page and API: alice (admin) manages, bob (member) sees, charlie nothing."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from trajectories.models import AuditEvent, Membership
from trajectories.services import do_set_membership

pytestmark = pytest.mark.django_db

API = "/api/v1"


def roles(project) -> dict[str, str]:
    return dict(project.memberships.values_list("user__username", "role"))


def last_event(project) -> tuple[str, dict | None, dict | None]:
    event = AuditEvent.objects.filter(project=project).first()
    return event.kind, event.before, event.after


def as_user(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def page_urls(project, member) -> dict[str, str]:
    return {
        "add": reverse("project-members", args=[project.pk]),
        "role": reverse("project-member-role", args=[project.pk, member.pk]),
        "remove": reverse("project-member-remove", args=[project.pk, member.pk]),
    }


# ---------------------------------------------------------------- the page


def test_members_see_who_is_in_the_project(client, project, alice, bob):
    for user in (alice, bob):
        client.force_login(user)
        response = client.get(reverse("project-members", args=[project.pk]))
        assert response.status_code == 200
        rows = [(m.user.username, m.role) for m in response.context["memberships"]]
        assert rows == [("alice", "admin"), ("bob", "annotator")]


def test_only_admins_see_the_forms(client, project, alice, bob):
    client.force_login(bob)
    page = client.get(reverse("project-members", args=[project.pk])).content.decode()
    assert "Only the project's admins can add members" in page
    assert 'name="username"' not in page and "Remove</button>" not in page
    client.force_login(alice)
    page = client.get(reverse("project-members", args=[project.pk])).content.decode()
    assert 'name="username"' in page and 'aria-label="Role of bob"' in page


def test_the_project_page_links_to_its_members(client, project, bob):
    client.force_login(bob)
    page = client.get(reverse("trajectory-list", args=[project.pk])).content.decode()
    assert f'href="{reverse("project-members", args=[project.pk])}"' in page


def test_charlie_sees_and_changes_nothing(client, project, alice, charlie):
    client.force_login(charlie)
    assert client.get(reverse("project-members", args=[project.pk])).status_code == 404
    urls = page_urls(project, alice)
    assert client.post(urls["add"], {"username": "charlie", "role": "admin"}).status_code == 404
    assert client.post(urls["role"], {"role": "annotator"}).status_code == 404
    assert client.post(urls["remove"]).status_code == 404
    assert roles(project) == {"alice": "admin", "bob": "annotator"}


def test_bob_may_not_change_members(client, project, alice, bob, charlie):
    client.force_login(bob)
    urls = page_urls(project, alice)
    assert client.post(urls["add"], {"username": "charlie", "role": "admin"}).status_code == 403
    assert client.post(urls["role"], {"role": "annotator"}).status_code == 403
    assert client.post(urls["remove"]).status_code == 403
    assert roles(project) == {"alice": "admin", "bob": "annotator"}


def test_alice_adds_a_user_by_name(client, project, alice, charlie):
    client.force_login(alice)
    response = client.post(
        reverse("project-members", args=[project.pk]),
        {"username": "charlie", "role": "reviewer"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert b"<html" not in response.content  # the table, swapped in place
    assert b'id="member-%d"' % charlie.pk in response.content
    assert roles(project)["charlie"] == "reviewer"
    assert last_event(project) == ("membership.set", None, {"user": "charlie", "role": "reviewer"})


def test_a_new_annotator_can_be_assigned(client, project, alice, charlie):
    client.force_login(alice)
    client.post(
        reverse("project-members", args=[project.pk]), {"username": "charlie", "role": "annotator"}
    )
    page = client.get(reverse("annotate-assignments", args=[project.pk]))
    assert charlie in page.context["annotators"]


def test_it_refuses_to_add_a_member_twice(client, project, alice):
    client.force_login(alice)
    response = client.post(
        reverse("project-members", args=[project.pk]), {"username": "bob", "role": "reviewer"}
    )
    message = (
        "username: bob is already a member of this project (as annotator); "
        "change their role instead"
    )
    assert response.context["error"] == message
    assert message in response.content.decode()
    assert roles(project) == {"alice": "admin", "bob": "annotator"}


def unknown_user_box(page: str) -> str:
    return page.split('id="unknown-user">')[1].split("</div>")[0]


def test_an_unknown_name_says_so_and_who_can_create_the_account(client, project, alice):
    client.force_login(alice)
    response = client.post(
        reverse("project-members", args=[project.pk]), {"username": " dave ", "role": "annotator"}
    )
    box = unknown_user_box(response.content.decode())
    assert "There is no user named “dave”." in box
    assert "People get an account from a site admin" in box
    assert "/users/" not in box  # alice is no site admin: no link she cannot follow
    assert roles(project) == {"alice": "admin", "bob": "annotator"}


def test_a_site_admin_is_offered_to_create_the_unknown_user(client, project, alice):
    alice.is_staff = True
    alice.save(update_fields=["is_staff"])
    client.force_login(alice)
    response = client.post(
        reverse("project-members", args=[project.pk]),
        {"username": "dave", "role": "reviewer"},
        HTTP_HX_REQUEST="true",
    )
    box = unknown_user_box(response.content.decode())
    link = f'href="/users/?username=dave&amp;project={project.pk}&amp;role=reviewer"'
    assert link in box and "Create the user dave</a>" in box


def test_a_name_in_the_wrong_case_gets_a_suggestion(client, project, alice, charlie):
    client.force_login(alice)
    response = client.post(
        reverse("project-members", args=[project.pk]), {"username": "Charlie", "role": "annotator"}
    )
    box = unknown_user_box(response.content.decode())
    assert "There is no user named “Charlie”. User names are exact: did you mean “charlie”?" in box


def test_alice_changes_a_role(client, project, alice, bob):
    client.force_login(alice)
    response = client.post(
        reverse("project-member-role", args=[project.pk, bob.pk]), {"role": "reviewer"}
    )
    assert response["Location"] == reverse("project-members", args=[project.pk])
    assert roles(project)["bob"] == "reviewer"
    assert last_event(project) == (
        "membership.set",
        {"user": "bob", "role": "annotator"},
        {"user": "bob", "role": "reviewer"},
    )


def test_alice_removes_a_member(client, project, alice, bob):
    client.force_login(alice)
    client.post(reverse("project-member-remove", args=[project.pk, bob.pk]))
    assert roles(project) == {"alice": "admin"}
    assert last_event(project) == (
        "membership.removed",
        {"user": "bob", "role": "annotator"},
        None,
    )
    client.force_login(bob)
    assert client.get(reverse("trajectory-list", args=[project.pk])).status_code == 404


def test_the_last_admin_can_be_neither_demoted_nor_removed(client, project, alice):
    client.force_login(alice)
    response = client.post(
        reverse("project-member-role", args=[project.pk, alice.pk]), {"role": "annotator"}
    )
    assert response.context["error"] == (
        "alice is the project's last admin and cannot be made annotator: "
        "make another member admin first"
    )
    response = client.post(reverse("project-member-remove", args=[project.pk, alice.pk]))
    assert response.context["error"] == (
        "alice is the project's last admin and cannot be removed: make another member admin first"
    )
    assert roles(project) == {"alice": "admin", "bob": "annotator"}


def test_an_admin_who_leaves_goes_back_to_the_project_list(client, project, alice, bob):
    do_set_membership(project, bob, "admin", alice)
    client.force_login(alice)
    response = client.post(
        reverse("project-member-remove", args=[project.pk, alice.pk]), HTTP_HX_REQUEST="true"
    )
    assert response["HX-Redirect"] == reverse("project-list")
    assert roles(project) == {"bob": "admin"}


def test_it_answers_404_for_someone_who_is_not_a_member(client, project, alice, charlie):
    client.force_login(alice)
    response = client.post(reverse("project-member-remove", args=[project.pk, charlie.pk]))
    assert response.status_code == 404


# ---------------------------------------------------------------- the API


def test_the_api_lists_members_to_members_only(project, alice, bob, charlie):
    expected = [
        {"user": alice.pk, "username": "alice", "role": "admin"},
        {"user": bob.pk, "username": "bob", "role": "annotator"},
    ]
    for user in (alice, bob):
        response = as_user(user).get(f"{API}/projects/{project.pk}/members/")
        assert (response.status_code, response.json()) == (200, expected)
        response = as_user(user).get(f"{API}/projects/{project.pk}/members/{bob.pk}/")
        assert (response.status_code, response.json()) == (200, expected[1])
    assert as_user(charlie).get(f"{API}/projects/{project.pk}/members/").status_code == 404
    url = f"{API}/projects/{project.pk}/members/{bob.pk}/"
    assert as_user(charlie).get(url).status_code == 404
    assert APIClient().get(f"{API}/projects/{project.pk}/members/").status_code == 401


def test_the_api_adds_a_member(project, alice, bob, charlie):
    url = f"{API}/projects/{project.pk}/members/"
    body = {"username": "charlie", "role": "reviewer"}
    assert as_user(charlie).post(url, body, format="json").status_code == 404
    response = as_user(bob).post(url, body, format="json")
    assert response.status_code == 403
    assert response.json() == {"detail": "This needs one of the roles: admin"}
    response = as_user(alice).post(url, body, format="json")
    assert response.status_code == 201
    assert response.json() == {"user": charlie.pk, "username": "charlie", "role": "reviewer"}
    response = as_user(alice).post(url, {"username": "charlie"}, format="json")
    assert (response.status_code, response.json()["detail"]) == (
        422,
        "username: charlie is already a member of this project (as reviewer); "
        "change their role instead",
    )


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"username": "dave"}, 422, "username: no user named 'dave'"),
        ({"username": "charlie", "role": "boss"}, 400, 'role: "boss" is not a valid choice.'),
        ({"role": "annotator"}, 400, "username: This field is required."),
    ],
)
def test_the_api_refuses_bad_members(project, alice, charlie, body, status, message):
    response = as_user(alice).post(f"{API}/projects/{project.pk}/members/", body, format="json")
    assert (response.status_code, response.json()) == (status, {"detail": message})
    assert roles(project) == {"alice": "admin", "bob": "annotator"}


def test_the_api_changes_a_role(project, alice, bob, charlie):
    url = f"{API}/projects/{project.pk}/members/{bob.pk}/"
    assert as_user(charlie).patch(url, {"role": "admin"}, format="json").status_code == 404
    assert as_user(bob).patch(url, {"role": "admin"}, format="json").status_code == 403
    response = as_user(alice).patch(url, {"role": "reviewer"}, format="json")
    assert response.json() == {"user": bob.pk, "username": "bob", "role": "reviewer"}
    response = as_user(alice).patch(
        f"{API}/projects/{project.pk}/members/{alice.pk}/", {"role": "reviewer"}, format="json"
    )
    assert (response.status_code, response.json()["detail"]) == (
        422,
        "alice is the project's last admin and cannot be made reviewer: "
        "make another member admin first",
    )
    assert roles(project) == {"alice": "admin", "bob": "reviewer"}


def test_the_api_removes_a_member(project, alice, bob, charlie):
    url = f"{API}/projects/{project.pk}/members/{bob.pk}/"
    assert as_user(charlie).delete(url).status_code == 404
    assert as_user(bob).delete(url).status_code == 403
    response = as_user(alice).delete(f"{API}/projects/{project.pk}/members/{alice.pk}/")
    assert response.status_code == 422
    assert as_user(alice).delete(url).status_code == 204
    assert as_user(alice).delete(url).status_code == 404
    assert roles(project) == {"alice": "admin"}


def test_two_admins_cannot_both_step_down(project, alice, bob):
    do_set_membership(project, bob, "admin", alice)
    assert (
        as_user(alice).delete(f"{API}/projects/{project.pk}/members/{alice.pk}/").status_code == 204
    )
    response = as_user(bob).patch(
        f"{API}/projects/{project.pk}/members/{bob.pk}/", {"role": "annotator"}, format="json"
    )
    assert response.status_code == 422
    assert Membership.objects.filter(project=project, role="admin").count() == 1


def test_the_schema_documents_the_members_api():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    members = schema["paths"]["/api/v1/projects/{project_id}/members/"]
    member = schema["paths"]["/api/v1/projects/{project_id}/members/{user_id}/"]
    assert set(members) == {"get", "post"}
    assert set(member) == {"get", "patch", "delete"}
    assert set(members["post"]["responses"]) == {
        "201",
        "400",
        "401",
        "403",
        "404",
        "406",
        "415",
        "422",
    }
    assert set(member["delete"]["responses"]) == {"204", "400", "401", "403", "404", "406", "422"}
    role = schema["components"]["schemas"]["RoleEnum"]["enum"]
    assert role == ["annotator", "reviewer", "admin"]


def test_inactive_users_cannot_be_added(project, alice):
    get_user_model().objects.create_user("eve", is_active=False)
    response = as_user(alice).post(
        f"{API}/projects/{project.pk}/members/", {"username": "eve"}, format="json"
    )
    assert response.json() == {"detail": "username: no user named 'eve'"}
