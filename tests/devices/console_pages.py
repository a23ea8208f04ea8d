"""Driving the recording console in Chromium: log in, take the virtual device, start recording."""

from __future__ import annotations

from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task


def start_recording(
    page,
    live_server,
    device,
    project,
    goal: str = "Find the kettle's price",
    *,
    task=None,
    reset: bool = True,
):
    """Log in as alice, take the device and start recording ``task`` (by default one of
    ``goal``), with the device's apps reset or not; returns the task."""
    task = task or get_or_create_task(project, TaskRecord(uid=goal[:20], goal=goal))
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/devices/")
    page.locator("tr", has_text=device.serial).locator("button", has_text="Take").click()
    page.select_option("#task", str(task.pk))
    if not reset:
        page.uncheck("#reset")
    page.click("text=Start recording")
    page.wait_for_function("document.querySelector('#screen')?.naturalWidth === 540")
    return task


def open_shop(page, steps: int = 1) -> None:
    """Record an open_app step of FreshCart (the ``steps``-th step)."""
    from tests.devices.test_console_browser import wait_steps

    page.select_option("#open-package", "com.waypoint.freshcart")
    page.click("#open-form button")
    wait_steps(page, steps)
