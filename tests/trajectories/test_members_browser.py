"""In Chromium: an admin adds a second annotator, changes a role and removes a member in place."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.annotate.test_workspace_browser import eventually, page_as, settled
from tests.conftest import shot
from trajectories.services import do_create_project, do_set_membership


@pytest.mark.django_db(transaction=True)
def test_an_admin_manages_members_on_the_page(browser, live_server):
    users = get_user_model().objects
    alice = users.create_user("alice", password="alice-password")
    bob = users.create_user("bob", password="bob-password")
    users.create_user("charlie", password="charlie-pw", first_name="Charlie", last_name="Chaplin")
    project = do_create_project("Shops", alice)
    do_set_membership(project, bob, "annotator", alice)

    def roles() -> dict[str, str]:
        return dict(project.memberships.values_list("user__username", "role"))

    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/projects/{project.pk}/trajectories/")
    page.click("text=Members >> nth=-1")
    page.wait_for_selector("#member-table")

    page.fill("input[name=username]", "charlie")
    page.select_option(".member-add select[name=role]", "annotator")
    page.click(".member-add button")
    page.wait_for_selector("#member-table >> text=charlie")
    assert eventually(
        lambda: roles() == {"alice": "admin", "bob": "annotator", "charlie": "annotator"}
    )

    settled(page)
    page.select_option('select[aria-label="Role of bob"]', "reviewer")
    assert eventually(lambda: roles()["bob"] == "reviewer")
    page.wait_for_selector(
        'select[aria-label="Role of bob"] >> option[value=reviewer][selected]', state="attached"
    )

    settled(page)
    page.select_option('select[aria-label="Role of alice"]', "annotator")
    page.wait_for_selector("text=alice is the project's last admin")
    assert roles()["alice"] == "admin"
    shot(page, "moving-members")

    settled(page)
    page.on("dialog", lambda dialog: dialog.accept())
    page.click(f"#member-{bob.pk} button:has-text('Remove')")
    page.wait_for_selector(f"#member-{bob.pk}", state="detached")
    assert roles() == {"alice": "admin", "charlie": "annotator"}
    assert page.errors == []

    charlie_page = page_as(browser, live_server, users.get(username="charlie"))
    charlie_page.set_viewport_size({"width": 1440, "height": 900})
    charlie_page.goto(f"{live_server.url}/projects/{project.pk}/members/")
    assert charlie_page.locator("#member-table select").count() == 0
    assert charlie_page.locator("input[name=username]").count() == 0
    charlie_page.wait_for_selector("text=Only the project's admins can add members")
    shot(charlie_page, "moving-members-annotator")
    charlie_page.goto(f"{live_server.url}/projects/{project.pk}/import/")
    charlie_page.wait_for_selector("text=Import as copies")
    shot(charlie_page, "moving-import")
