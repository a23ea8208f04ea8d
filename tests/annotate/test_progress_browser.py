"""In Chromium: the progress page's bars are drawn to scale and fit the window."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotate.services import do_assign
from tests.annotate.test_progress import _trajectories, _work
from tests.annotate.test_workspace_browser import page_as
from tests.conftest import shot
from trajectories import events
from trajectories.services import do_create_project, do_set_membership


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width, height", [(1440, 900), (1920, 1080)])
def test_the_progress_chart_is_to_scale_and_in_view(browser, live_server, width, height):
    users = get_user_model().objects
    alice = users.create_user("alice", password="alice-password")
    bob = users.create_user("bob", password="bob-password")
    project = do_create_project("Shops", alice)
    do_set_membership(project, bob, "annotator", alice)
    made = _trajectories(project, ["annotating"] * 3 + ["approved"])
    for trajectory in made:
        do_assign(trajectory, bob, alice)
    for minutes in (0, 4, 9):
        _work(bob, made[0], minutes)
    _work(alice, made[3], 20, events.REVIEW_APPROVED)

    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/projects/{project.pk}/trajectories/")
    strip = page.inner_text("#project-progress")
    assert "25% approved" in strip and "annotating 3" in strip
    page.click("#project-progress")
    page.wait_for_selector("#status-bar")
    bar = page.locator("#status-bar").bounding_box()
    annotating = page.locator("#status-bar .status-annotating").bounding_box()
    approved = page.locator("#status-bar .status-approved").bounding_box()
    assert annotating["width"] == pytest.approx(bar["width"] * 0.75, abs=2)
    assert approved["width"] == pytest.approx(bar["width"] * 0.25, abs=2)
    assert page.inner_text("#approved-percent") == "25%"
    assert page.inner_text("#time-spent") == "9 min"
    bob_bar = page.locator('tr[data-person="bob"] .fill.changes').bounding_box()
    alice_bar = page.locator('tr[data-person="alice"] .fill.changes').bounding_box()
    assert bob_bar["width"] == pytest.approx(3 * alice_bar["width"], rel=0.05)
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1]
    people = page.locator("#people").bounding_box()
    assert people["y"] + people["height"] <= height  # the whole page is above the fold
    shot(page, f"lists-progress-{width}")


@pytest.mark.django_db(transaction=True)
def test_unassigned_work_is_credited_to_its_submitter(browser, live_server):
    from annotate.services import do_review, do_submit
    from tests.trajectories.builders import make_record
    from trajectories.services import do_import_trajectory

    users = get_user_model().objects
    alice = users.create_user("alice", password="alice-password")
    bob = users.create_user("bob", password="bob-password")
    project = do_create_project("Shops", alice)
    do_set_membership(project, bob, "annotator", alice)
    trajectory, _ = do_import_trajectory(project, make_record(steps=3, seed=71))  # labelled
    do_submit(trajectory, bob, trajectory.version)  # nobody assigned it
    trajectory.refresh_from_db()
    do_review(trajectory, alice, trajectory.version, "approve")

    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/projects/{project.pk}/progress/")
    cells = page.locator('tr[data-person="bob"] td.num').all_inner_texts()
    assert cells[:3] == ["0", "1", "1"]  # assigned, submitted, approved
    shot(page, "progress-unassigned-submitter")
