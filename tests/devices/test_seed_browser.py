"""In Chromium: reset the virtual device's apps to a seed from the start-recording form."""

from __future__ import annotations

import pytest

from tests.conftest import shot
from tests.devices.console_pages import start_recording
from trajectories.models import Trajectory
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task

SESSION_SEED = 7


@pytest.fixture
def page(browser, device):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    yield page
    device.shell(["waypoint", "reset", "--seed", str(SESSION_SEED)])


def test_the_start_form_resets_the_apps_to_a_seed(
    transactional_db, live_server, adb_servers, device, project_device, alice, project, page
):
    task = get_or_create_task(project, TaskRecord(uid="kettle", goal="Find the kettle's price"))
    device.app_start("com.waypoint.notes")  # an earlier recording left the notes app open
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/devices/")
    page.locator("tr", has_text=device.serial).locator("button", has_text="Take").click()

    reset = page.locator("#reset-seed")
    assert reset.is_visible()
    assert page.is_checked("#reset")  # reproducible unless the recorder says otherwise
    assert page.input_value("#seed") == str(SESSION_SEED)
    assert f"The device is at seed {SESSION_SEED} now" in reset.inner_text()
    page.select_option("#task", str(task.pk))
    page.fill("#seed", "5")
    page.wait_for_function("document.querySelector('#screen').naturalWidth === 540")
    shot(page, "seed-form")

    page.click("text=Start recording")
    page.wait_for_function("document.querySelector('#screen').naturalWidth === 540")
    trajectory = Trajectory.objects.get()
    assert trajectory.metadata["virtual_device"]["seed"] == 5
    assert trajectory.metadata["virtual_device"]["reset"] is True
    assert trajectory.final_screen.package == "com.android.launcher3"  # notes closed
    assert page.inner_text("#rec-seed") == "seed 5, apps reset"
    shot(page, "seed-recording")


def test_an_unticked_reset_keeps_the_apps_and_records_the_seed(
    transactional_db, live_server, adb_servers, device, project_device, alice, project, page
):
    device.app_start("com.waypoint.notes")
    start_recording(page, live_server, device, project, reset=False)
    trajectory = Trajectory.objects.get()
    assert trajectory.metadata["virtual_device"]["seed"] == SESSION_SEED
    assert trajectory.metadata["virtual_device"]["reset"] is False
    assert trajectory.final_screen.package == "com.waypoint.notes"
    assert page.inner_text("#rec-seed") == f"seed {SESSION_SEED}, apps not reset"
