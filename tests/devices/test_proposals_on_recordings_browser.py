"""Proposals on a recording of the virtual device, as an annotator sees them in the workspace:
the app opened from the drawer is one subgoal named for it, and no app name is a value to
remember."""

from __future__ import annotations

import pytest

from annotate.models import Proposal
from annotate.services import do_assign
from devices.services import do_finish_recording, do_start_recording, do_take_device, record_step
from tests.annotate.test_workspace_browser import page_as
from tests.conftest import shot
from tests.devices.test_recording import current, element
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task

SHOPMATE, NOTES = "com.waypoint.shopmate", "com.waypoint.notes"


def tap(trajectory, alice, **attrs):
    x, y = element(current(trajectory), **attrs).center
    record_step(trajectory, {"type": "click", "x": x, "y": y}, alice)


def record_keyboard_lookup(lease, project, alice):
    """From the drawer to ShopMate, search, read a price, write it in a note, answer."""
    goal = "Look up the Lumen Keyboard's price in ShopMate, note it in Notes and tell me."
    task = get_or_create_task(project, TaskRecord(uid="lumen", goal=goal))
    trajectory = do_start_recording(lease, task, alice, reset_seed=7)
    swipe = {"type": "swipe", "x": 270, "y": 1000, "x2": 270, "y2": 350, "duration_ms": 350}
    record_step(trajectory, swipe, alice)
    record_step(trajectory, {**swipe, "y": 900, "y2": 500}, alice)  # a look through the drawer
    tap(trajectory, alice, resource_id="com.android.launcher3:id/icon", content_desc="ShopMate")
    tap(trajectory, alice, resource_id=f"{SHOPMATE}:id/search_box")
    record_step(trajectory, {"type": "type", "text": "keyboard"}, alice)
    record_step(trajectory, {"type": "key", "keycode": "KEYCODE_ENTER"}, alice)
    tap(trajectory, alice, resource_id=f"{SHOPMATE}:id/product_lumen_keyboard")
    record_step(trajectory, {"type": "home"}, alice)
    tap(trajectory, alice, resource_id="com.android.launcher3:id/icon", content_desc="Notes")
    tap(trajectory, alice, resource_id=f"{NOTES}:id/new_note")
    tap(trajectory, alice, resource_id=f"{NOTES}:id/note_body")
    record_step(trajectory, {"type": "type", "text": "Lumen Keyboard $52.66 at ShopMate"}, alice)
    tap(trajectory, alice, resource_id=f"{NOTES}:id/save_note")
    do_finish_recording(trajectory, alice, answer="$52.66")
    return trajectory


@pytest.mark.django_db(transaction=True)
def test_the_workspace_proposes_opening_shopmate_and_its_price_to_remember(
    browser, live_server, settings, adb_servers, device, project_device, project, alice, bob
):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the proposal job runs in the request
    lease = do_take_device(device.serial, adb_servers[0], alice)
    trajectory = record_keyboard_lookup(lease, project, alice)
    do_assign(trajectory, bob, alice)

    page = page_as(browser, live_server, bob, size=(1440, 900))
    page.goto(f"{live_server.url}/trajectories/{trajectory.pk}/workspace/")
    page.focus("#pr-ask")
    page.keyboard.press("Enter")
    page.wait_for_selector("#ws-proposed .ws-track.proposed")
    shot(page, "proposals-virtual-recording")

    proposal = Proposal.objects.get(trajectory=trajectory)
    assert proposal.prompt_version == "h2"
    firsts = page.locator("#ws-proposed .cell.first")
    titles = [firsts.nth(i).get_attribute("title") for i in range(firsts.count())]
    assert titles[:4] == [
        "Proposed: Open ShopMate [0–2]",  # the drawer, a swipe in it and the icon: one subgoal
        "Proposed: Enter “keyboard” [3–5]",
        "Proposed: Find $52.66 [6–6]",
        "Proposed: Open Notes [7–8]",  # Home and the icon
    ]
    labels = page.locator("#ws-proposals .proposal-item .label").all_inner_texts()
    assert not any("launcher" in text.casefold() for text in titles + labels)
    values = [m["value"] for m in proposal.payload["memory_targets"]]
    assert values == ["$52.66"]  # "ShopMate", typed into the note, is an app's name
