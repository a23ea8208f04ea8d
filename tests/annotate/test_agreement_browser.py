"""In Chromium: double annotation is blind, and Agreement waits for both annotators."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotate.services import do_assign
from tests.annotate.test_workspace_browser import page_as
from tests.conftest import shot
from tests.trajectories.builders import make_record
from trajectories.models import Trajectory
from trajectories.services import do_create_project, do_import_trajectory, do_set_membership


@pytest.mark.django_db(transaction=True)
def test_the_second_annotator_starts_unlabelled_and_agreement_waits(browser, live_server):
    users = get_user_model().objects
    alice = users.create_user("alice", password="alice-password")
    bob = users.create_user("bob", password="bob-password")
    erin = users.create_user("erin", password="erin-password")
    project = do_create_project("Shops", alice)
    do_set_membership(project, bob, "annotator", alice)
    do_set_membership(project, erin, "annotator", alice)
    original, _ = do_import_trajectory(project, make_record(steps=3, seed=61))  # labelled
    do_assign(original, bob, alice)

    page = page_as(browser, live_server, alice, size=(1440, 900))
    page.goto(f"{live_server.url}/projects/{project.pk}/assignments/")
    page.check(f'input[name=annotators][value="{bob.pk}"]')
    page.check(f'input[name=annotators][value="{erin.pk}"]')
    page.check(f'input[name=trajectories][value="{original.pk}"]')
    page.check("input[name=per_trajectory][value='2']")
    page.click("#assign-form button[type=submit]:has-text('Assign')")
    page.wait_for_selector(f"text=copy of #{original.pk}")
    shot(page, "agreement-assignments")
    copy = Trajectory.objects.get(copy_of=original)

    erin_page = page_as(browser, live_server, erin, size=(1440, 900))
    erin_page.goto(f"{live_server.url}/trajectories/{copy.pk}/workspace/")
    erin_page.wait_for_selector("#ws-track")
    assert erin_page.locator("#ws-track .cell[data-subgoal]").count() == 0
    assert erin_page.locator("#ws-track .cell.uncovered").count() == 3
    assert erin_page.input_value("#st-memory") == ""
    shot(erin_page, "agreement-blind-copy")

    page.goto(f"{live_server.url}/projects/{project.pk}/agreement/")
    waiting = page.inner_text("#agreement-waiting")
    assert "1 trajectory labelled twice is not compared yet" in waiting
    assert "1.000" not in page.inner_text("#agreement-pairs")
    shot(page, "agreement-waiting")

    Trajectory.objects.filter(pk__in=[original.pk, copy.pk]).update(status="in_review")
    page.reload()
    assert page.locator("#agreement-waiting").count() == 0
    row = page.inner_text("#agreement-pairs tbody tr")
    assert "bob · erin" in row
    # bob's two subgoals against erin's none: one boundary of bob's, none of erin's → F1 0.
    assert "0.000" in row
    shot(page, "agreement-compared")
    assert page.errors == [] and erin_page.errors == []
