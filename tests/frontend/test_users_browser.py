"""In Chromium: an unknown name on Members says so; a site admin creates the account from
there, hands on the one-time link, and the new user sets a password with it and logs in."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model

from tests.annotate.test_workspace_browser import page_as
from tests.conftest import shot
from trajectories.services import do_create_project, do_set_membership


@pytest.mark.django_db(transaction=True)
def test_a_site_admin_creates_a_member_who_sets_a_password(browser, live_server):
    users = get_user_model().objects
    root = users.create_user("root", password="root-password", is_staff=True)
    alice = users.create_user("alice", password="alice-password")
    project = do_create_project("Shops", root)
    do_set_membership(project, alice, "admin", root)

    # A project admin who is no site admin: told plainly, and who can help.
    page = page_as(browser, live_server, alice, size=(1440, 900))
    page.goto(f"{live_server.url}/projects/{project.pk}/members/")
    page.fill("input[name=username]", "erin")
    page.click(".member-add button")
    box = page.wait_for_selector("#unknown-user")
    assert "There is no user named “erin”." in box.inner_text()
    assert "People get an account from a site admin" in box.inner_text()
    assert page.locator("nav.topnav >> text=Users").count() == 0
    shot(page, "users-members-unknown")

    # The site admin gets a button to create the account, already filled in.
    page = page_as(browser, live_server, root, size=(1440, 900))
    page.goto(f"{live_server.url}/projects/{project.pk}/members/")
    page.fill("input[name=username]", "erin")
    page.select_option(".member-add select[name=role]", "reviewer")
    page.click(".member-add button")
    page.click("#unknown-user >> text=Create the user erin")
    page.wait_for_selector("#new-user")
    assert page.input_value("#new-user input[name=username]") == "erin"
    assert page.input_value("#new-user select[name=role]") == "reviewer"
    page.fill("#new-user input[name=first_name]", "Erin")
    shot(page, "users-new")
    page.click("#new-user button[type=submit]")
    card = page.wait_for_selector("#password-link-card")
    assert "Created erin" in card.inner_text()
    assert "erin is now reviewer of Shops" in card.inner_text()
    link = page.input_value("#password-link")
    shot(page, "users-link")
    assert users.get(username="erin").memberships.get().role == "reviewer"

    # erin, signed out, follows the link, chooses a password and logs in with it.
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    erin = context.new_page()
    erin.goto(link)
    erin.wait_for_selector("text=Choose a password for erin")
    # The token was moved into the session: the address the form is at holds none of it.
    token = parse_qs(urlsplit(link).query)["token"][0]
    assert token not in erin.url and erin.url.endswith("/set/"), erin.url
    erin.fill("input[name=new_password1]", "Erin's own long password")
    erin.fill("input[name=new_password2]", "Erin's own long password")
    shot(erin, "users-set-password")
    erin.click("button:has-text('Set password')")
    erin.click("text=Log in")
    erin.fill("input[name=username]", "erin")
    erin.fill("input[name=password]", "Erin's own long password")
    erin.click("button:has-text('Log in')")
    erin.wait_for_selector("text=Shops")
    erin.goto(link)
    erin.wait_for_selector("text=This link no longer works")
    assert page.errors == []
