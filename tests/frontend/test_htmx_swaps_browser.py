"""In Chromium: a control htmx has just swapped in works at once (htmx wires it as it swaps it,
not after a settle delay), so a quick click right after an update is never lost."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from tests.annotate.test_workspace_browser import eventually, page_as
from trajectories.services import do_create_project, do_set_membership


@pytest.mark.django_db(transaction=True)
def test_a_select_swapped_in_a_moment_ago_sends_its_change(browser, live_server):
    users = get_user_model().objects
    alice = users.create_user("alice", password="alice-password")
    bob = users.create_user("bob", password="bob-password")
    users.create_user("charlie", password="charlie-pw")
    project = do_create_project("Shops", alice)
    do_set_membership(project, bob, "annotator", alice)

    page = page_as(browser, live_server, alice, (1440, 900))
    page.goto(f"{live_server.url}/projects/{project.pk}/members/")
    # As soon as adding charlie has swapped the member table in (the next task of the page's
    # event loop), bob's new role select is changed.
    page.evaluate(
        """() => document.body.addEventListener("htmx:afterSwap", () => setTimeout(() => {
            const role = document.querySelector('select[aria-label="Role of bob"]');
            role.value = "reviewer";
            role.dispatchEvent(new Event("change", { bubbles: true }));
        }, 0), { once: true })"""
    )
    page.fill("input[name=username]", "charlie")
    page.click(".member-add button")
    assert eventually(
        lambda: (
            dict(project.memberships.values_list("user__username", "role"))
            == {"alice": "admin", "bob": "reviewer", "charlie": "annotator"}
        )
    )
    assert page.errors == []
