"""The recording console in Chromium: every input is done in order however fast, the device
stays leased across a reload, and text goes only into a focused field unless typed anyway."""

from __future__ import annotations

import time
from datetime import timedelta

from django.utils import timezone

from devices.models import Lease
from tests.conftest import shot
from tests.devices.console_pages import start_recording
from tests.devices.test_console_browser import drawn_point, wait_steps
from trajectories import events
from trajectories.models import AuditEvent, Trajectory

# Taps on the status bar: recorded as steps, and the screen stays the launcher.
STATUS_BAR = [(60, 12), (200, 12), (340, 12), (480, 12)]


def steps_shown(page) -> int:
    return int(page.evaluate("document.querySelector('#live').dataset.steps"))


def wait_idle(page) -> None:
    """Until no action runs and none waits."""
    page.wait_for_function(
        "document.querySelector('#busy').hidden && "
        "document.querySelector('#live').dataset.waiting === '0'",
        timeout=30_000,
    )


def test_two_taps_150_ms_apart_are_two_steps_in_order(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project, "Tap twice")
    first, second = STATUS_BAR[0], STATUS_BAR[3]
    page.mouse.click(*drawn_point(page, *first))
    time.sleep(0.15)
    page.mouse.click(*drawn_point(page, *second))
    # The second waits for the first: the page says so while it does.
    page.wait_for_function("document.querySelector('#busy').textContent.includes('waiting')")
    shot(page, "console-queue-waiting")
    wait_steps(page, 2)
    wait_idle(page)

    steps = Trajectory.objects.get(task=task).steps.order_by("index")
    assert [(s.action_type, s.action["x"], s.action["y"]) for s in steps] == [
        ("click", *first),
        ("click", *second),
    ]


def test_four_quick_u_undo_four_steps(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project, "Tap and undo")
    for count, point in enumerate(STATUS_BAR, start=1):
        page.mouse.click(*drawn_point(page, *point))
        wait_steps(page, count)
    wait_idle(page)
    assert steps_shown(page) == 4

    for _ in range(4):
        page.keyboard.press("u")
    page.wait_for_function("document.querySelector('#live').dataset.steps === '0'")
    wait_idle(page)
    shot(page, "console-queue-undone")

    trajectory = Trajectory.objects.get(task=task)
    assert trajectory.step_count == 0 and not trajectory.steps.exists()
    undone = AuditEvent.objects.filter(trajectory=trajectory, kind=events.STEP_UNDONE)
    assert sorted(e.before["index"] for e in undone) == [0, 1, 2, 3]
    assert "no step to undo" not in page.inner_text("#recording")


def test_a_reload_after_45_seconds_away_keeps_the_device(
    transactional_db, live_server, adb_servers, device, project_device, project, browser, settings
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project, "Come back later")
    page.goto("about:blank")  # away, e.g. on the trajectory's page
    # 45 s later: 15 s of the 60 s lease left, and the console's own renewal comes every 20 s.
    Lease.objects.filter(serial=device.serial).update(
        expires_at=timezone.now() + timedelta(seconds=15)
    )
    page.goto(f"{live_server.url}/devices/{device.serial}/")
    page.wait_for_selector("#controls")

    deadline = time.monotonic() + 5
    while Lease.objects.get(serial=device.serial).expires_at < timezone.now() + timedelta(
        seconds=settings.WAYPOINT_LEASE_SECONDS - 10
    ):
        assert time.monotonic() < deadline, "the page did not renew the lease when it loaded"
        time.sleep(0.2)
    lease = Lease.objects.get(serial=device.serial)
    assert lease.holder.get_username() == "alice" and lease.trajectory.task == task


def test_text_with_no_field_focused_is_refused_until_typed_anyway(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project, "Type on the launcher")
    page.fill("#type-text", "hello")
    page.press("#type-text", "Enter")
    page.wait_for_selector("#recording-error")
    wait_idle(page)
    shot(page, "console-type-no-focus")
    error = page.inner_text("#recording-error")
    assert "Nothing was typed: no text field on the device's screen has focus" in error
    assert page.input_value("#type-text") == "hello"  # kept, to type again once a field is tapped
    trajectory = Trajectory.objects.get(task=task)
    assert trajectory.step_count == 0

    page.click("#type-anyway")
    wait_steps(page, 1)
    step = trajectory.steps.get()
    assert (step.action_type, step.action) == ("type", {"text": "hello"})
