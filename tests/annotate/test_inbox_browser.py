"""In Chromium: the annotator finds sent-back work in the inbox and resolves comments one by one."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotate.models import ReviewComment
from annotate.services import do_assign
from tests.annotate.conftest import blank_record
from tests.annotate.test_inbox import send_back
from tests.annotate.test_workspace_browser import page_as
from tests.conftest import shot
from trajectories.models import Task
from trajectories.services import do_create_project, do_import_trajectory, do_set_membership

LONG_GOAL = "In ShopMate, compare the prices of " + ", ".join(f"the item {i}" for i in range(30))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width, height", [(1440, 900), (1920, 1080)])
def test_sent_back_work_is_in_the_inbox_and_comments_resolve_one_by_one(
    browser, live_server, width, height
):
    users = get_user_model().objects
    alice = users.create_user("alice", password="alice-password")
    bob = users.create_user("bob", password="bob-password")
    project = do_create_project("Shops", alice)
    do_set_membership(project, bob, "annotator", alice)
    trajectory, _ = do_import_trajectory(project, blank_record())
    Task.objects.filter(pk=trajectory.task_id).update(goal=LONG_GOAL)
    do_assign(trajectory, bob, alice)
    send_back(trajectory, bob, alice)
    early = ReviewComment.objects.get(trajectory=trajectory, step_index=1)
    overall = ReviewComment.objects.get(trajectory=trajectory, step_index=None)

    page = page_as(browser, live_server, bob)
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/")
    page.click("nav.topnav >> text=Inbox")
    item = page.locator(f"#sent-back-{trajectory.pk}")
    assert "the subgoal starts one step early" in item.inner_text()
    assert item.locator(".comment-row.open").count() == 2
    assert item.bounding_box()["width"] <= 1100  # a long goal is cut, not widening the card
    assert item.locator("h2").get_attribute("title") == LONG_GOAL
    shot(page, f"lists-inbox-{width}")

    item.locator(f'[data-comment="{early.pk}"] button:text("Resolve")').click()
    page.wait_for_selector(f'.comment-row.resolved[data-comment="{early.pk}"]')
    assert "by bob" in page.inner_text(f'[data-comment="{early.pk}"]')
    assert page.locator(f'.comment-row.open[data-comment="{overall.pk}"]').count() == 1
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1]

    # The workspace shows which are open, and resolves the other.
    page.click(f'[data-comment="{early.pk}"] a:text("step 1")')
    page.wait_for_selector("#ws-review")
    assert page.inner_text("#ws-comment-count") == "1 open · 2 in all"
    assert page.locator("#ws-review li.ws-comment.resolved").count() == 1
    page.locator(f'#ws-review li[data-comment="{overall.pk}"] button:text("Resolve")').click()
    page.wait_for_selector(f'#ws-review li.ws-comment.resolved[data-comment="{overall.pk}"]')
    assert page.inner_text("#ws-comment-count") == "0 open · 2 in all"
    shot(page, f"lists-inbox-workspace-{width}")
    overall.refresh_from_db()
    assert overall.resolved and overall.resolved_by == bob

    page.goto(f"{live_server.url}/inbox/")
    assert page.locator("#inbox-empty").is_visible()
