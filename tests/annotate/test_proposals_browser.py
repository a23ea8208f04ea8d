"""End to end in Chromium, by keyboard: ask for proposals, accept, reject, edit, accept all;
proposals that arrive while the page is open; which proposal y and x act on."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from annotate.models import Proposal, ProposalStatus
from annotate.services import do_assign
from annotate.services.proposals import do_request_proposal, run_job_here, run_proposal
from fixtures.generate import generate_record
from tests.annotate.test_proposals import PAYLOAD
from tests.annotate.test_workspace_browser import eventually, go_to, page_as, settled, synced
from tests.conftest import shot
from trajectories.labels.parts import all_labels
from trajectories.models import MemoryTarget, Trajectory
from trajectories.services import do_create_project, do_import_trajectory, do_set_membership


@pytest.mark.django_db(transaction=True)
def test_proposals_are_reviewed_by_keyboard(browser, live_server, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the proposal job runs in the request
    users = get_user_model().objects
    alice = users.create_user("alice", password="alice-password")
    bob = users.create_user("bob", password="bob-password")
    project = do_create_project("Shops", alice)
    do_set_membership(project, bob, "annotator", alice)
    record = generate_record(0, steps=20)
    record.status, record.subgoals, record.memory_targets = "annotating", [], []
    record.anchors, record.anchor_links = [], []
    trajectory, _ = do_import_trajectory(project, record)
    do_assign(trajectory, bob, alice)

    page = page_as(browser, live_server, bob)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/trajectories/{trajectory.pk}/workspace/")
    page.focus("#pr-ask")
    page.keyboard.press("Enter")
    page.wait_for_selector("#ws-proposed .ws-track.proposed")
    proposal = Proposal.objects.get(trajectory=trajectory)
    starts = [g["start"] for g in proposal.payload["subgoals"]]
    assert starts == [0, 1, 6, 14, 18]
    assert page.locator("#ws-proposed .cell.first").count() == 5
    shot(page, "proposals-1-proposed")

    # y accepts the proposed subgoal on this step; x rejects the one on another.
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("y")
    eventually(lambda: Trajectory.objects.get(pk=trajectory.pk).subgoals.count() == 1)
    synced(page, trajectory)
    # j then x at once: x waits for step 1's page (and for htmx to wire its buttons), then acts.
    page.keyboard.press("j")
    page.keyboard.press("x")
    eventually(lambda: "0" in Proposal.objects.get(pk=proposal.pk).decisions["subgoals"])
    eventually(lambda: len(Proposal.objects.get(pk=proposal.pk).decisions["subgoals"]) == 2)
    synced(page, trajectory)
    assert page.locator("#ws-proposed .cell.first").count() == 3

    # Accept with an edit: the field of the proposed subgoal on step 6, then Enter.
    go_to(page, 6)
    page.focus("#pr-edit-subgoals-2")
    page.keyboard.press("Control+a")
    page.keyboard.type("Look up the tent's price")
    page.keyboard.press("Enter")
    eventually(lambda: Trajectory.objects.get(pk=trajectory.pk).subgoals.filter(start=6).exists())
    synced(page, trajectory)
    assert trajectory.subgoals.get(start=6).text == "Look up the tent's price"
    shot(page, "proposals-2-decided")

    page.focus("#pr-accept-all")
    page.keyboard.press("Enter")
    eventually(lambda: Proposal.objects.get(pk=proposal.pk).status == ProposalStatus.EDITED)
    synced(page, trajectory)
    assert page.locator("#ws-proposed .ws-track.proposed").count() == 0
    origins = set(trajectory.subgoals.values_list("origin", flat=True))
    assert origins == {f"proposal:heuristic:{proposal.prompt_version}"}
    assert trajectory.subgoals.count() == 4  # one of five rejected
    assert trajectory.memory_targets.count() == len(proposal.payload["memory_targets"])
    shot(page, "proposals-3-accepted")
    assert page.errors == []

    page.goto(f"{live_server.url}/projects/{project.pk}/proposals/")
    row = page.locator("#proposal-figures tbody tr").first.inner_text()
    assert row.split("\t")[:2] == ["heuristic h2", "1"]
    shot(page, "proposals-4-figures")


def _bob_on(browser, live_server, trajectory, step=0):
    bob = get_user_model().objects.get(username="bob")
    page = page_as(browser, live_server, bob, size=(1440, 900))
    page.goto(f"{live_server.url}/trajectories/{trajectory.pk}/workspace/?step={step}")
    return page


@pytest.fixture
def shop(project, alice, bob):
    """The generated 20-step shop trajectory with its labels, being labelled by bob."""
    record = generate_record(0, steps=20)
    record.status = "annotating"
    trajectory, _ = do_import_trajectory(project, record)
    do_assign(trajectory, bob, alice)
    return trajectory


@pytest.mark.django_db(transaction=True)
def test_proposals_show_up_when_the_job_ends_while_the_tab_is_visible(
    browser, live_server, blank, monkeypatch
):
    from trajectories import jobs

    queued = []  # the job waits here, as in a busy broker, until the test runs it
    monkeypatch.setattr(jobs, "_send", queued.append)
    page = _bob_on(browser, live_server, blank)
    polls = []
    page.on("request", lambda r: "/workspace/proposals/" in r.url and polls.append(r.url))
    page.click("#pr-ask")
    page.wait_for_selector("#pr-waiting")
    page.evaluate("window.notReloaded = true")
    shot(page, "proposals-0-waiting")
    page.wait_for_timeout(2500)
    assert len(polls) >= 1  # it polls while the tab is visible...
    page.evaluate(
        "Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => "
        "'hidden'}); document.dispatchEvent(new Event('visibilitychange'))"
    )
    page.wait_for_timeout(1200)  # (a poll already on its way ends)
    hidden_from = len(polls)
    page.wait_for_timeout(2500)
    assert len(polls) == hidden_from  # ...and not while it is hidden
    (job_id,) = queued
    run_job_here(job_id)  # the job runs (a fraction of a second)
    page.evaluate("delete document.visibilityState")  # the tab is shown again
    page.wait_for_selector("#ws-proposed .ws-track.proposed", timeout=5000)
    page.wait_for_selector("#pr-accept-all")
    assert page.evaluate("window.notReloaded") is True  # no reload: the panel fetched them
    assert not page.locator("#pr-waiting").count()
    shot(page, "proposals-0-arrived")
    settled(page)
    count = len(polls)
    page.wait_for_timeout(2500)
    assert len(polls) == count  # polling stopped with the proposal there
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_accept_all_accepts_what_it_can_and_says_what_it_skipped(browser, live_server, shop):
    from annotate.services.proposals import copy_signature

    proposal, _ = do_request_proposal(shop, None)
    run_proposal(proposal)
    labels = all_labels(shop)
    for part in ("subgoals", "memory_targets", "anchors"):  # no copies of labels proposed
        there = {copy_signature(part, label) for label in labels[part]}
        assert not [i for i in proposal.payload[part] if copy_signature(part, i) in there]
    anchors_before = len(labels["anchors"])
    page = _bob_on(browser, live_server, shop)
    page.click("#pr-accept-all")
    page.wait_for_selector("#pr-skipped")
    synced(page, shop)
    notice = page.inner_text("#pr-skipped")
    proposed = proposal.payload["subgoals"]
    assert f"{len(proposed)} could not be and are still proposed" in notice
    assert "overlaps the accepted subgoal" in notice
    shot(page, "proposals-5-accept-all-skipped")
    # the proposed anchors and memory targets became labels; the subgoals wait for a person
    labels = all_labels(shop)
    assert len(labels["anchors"]) == anchors_before + len(proposal.payload["anchors"])
    assert page.locator("#ws-proposals .proposal-item").count() == len(proposed)
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_y_and_x_act_on_the_marked_proposal_and_o_marks_the_next(browser, live_server, blank):
    Proposal.objects.create(
        trajectory=blank, proposer="heuristic", prompt_version="h1", payload=PAYLOAD
    )
    page = _bob_on(browser, live_server, blank, step=1)
    marked = "#ws-proposals .proposal-item.marked"
    # on step 1: subgoal 0–2, the memory target encoded there, the anchor there
    assert page.locator("#ws-proposals .proposal-item.here").count() == 3
    assert page.get_attribute(marked, "id") == "pr-subgoals-0"
    assert page.is_visible(f"{marked} .pr-keys") and page.locator(".pr-keys:visible").count() == 1
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("o")
    assert page.get_attribute(marked, "id") == "pr-memory_targets-0"
    page.keyboard.press("o")
    assert page.get_attribute(marked, "id") == "pr-anchors-0"
    shot(page, "proposals-6-marked")
    # the mark a person chose holds while the page stays on the step, across a re-render
    page.keyboard.press("s")  # split here: the panels are drawn anew
    eventually(lambda: Trajectory.objects.get(pk=blank.pk).subgoals.count() == 2)
    synced(page, blank)
    settled(page)
    assert page.get_attribute(marked, "id") == "pr-anchors-0"
    page.keyboard.press("y")  # the anchor, not the subgoal listed first
    eventually(lambda: Trajectory.objects.get(pk=blank.pk).anchors.count() == 1)
    synced(page, blank)
    assert Trajectory.objects.get(pk=blank.pk).anchors.get().content == "price: $4.20"
    assert page.get_attribute(marked, "id") == "pr-subgoals-0"  # gone: the first again
    # a click marks the memory target; x rejects it
    page.click("#pr-memory_targets-0 .label")
    assert page.get_attribute(marked, "id") == "pr-memory_targets-0"
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("x")
    eventually(
        lambda: (
            Proposal.objects.get(trajectory=blank).decisions.get("memory_targets")
            == {"0": "rejected"}
        )
    )
    synced(page, blank)
    assert not MemoryTarget.objects.filter(trajectory=blank).exists()
    assert page.locator("#ws-proposals .proposal-item.here").count() == 1  # the subgoal
    # on another step the mark starts again from the first proposal there
    go_to(page, 5)
    assert page.get_attribute(marked, "id") == "pr-subgoals-1"
    page.keyboard.press("?")
    help_text = page.inner_text("#ws-help")
    assert "accept / reject the marked proposal of this step" in help_text
    assert "mark the next proposal of this step" in help_text
    shot(page, "proposals-7-help")
    assert page.errors == []
