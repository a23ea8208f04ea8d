"""The console's live screen in Chromium: the controls beside it stay put, and it says
whether the picture is the device's screen now."""

from __future__ import annotations

import pytest

from tests.conftest import shot
from tests.devices.console_pages import open_shop, start_recording
from tests.devices.test_console_browser import drawn_point, wait_steps
from trajectories.models import Trajectory
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task


@pytest.mark.parametrize("size", [(1440, 900), (1920, 1080)])
def test_the_controls_stay_put_when_the_xml_overlay_is_on(
    transactional_db, live_server, adb_servers, device, project_device, project, browser, size
):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    start_recording(page, live_server, device, project)
    open_shop(page)
    controls = page.locator(".control-col").bounding_box()
    screen = page.locator("#live").bounding_box()

    page.keyboard.press("x")
    page.wait_for_selector("#xml-layer .xml-el")
    # The element with the longest description: its text shows under the screen.
    longest = page.evaluate(
        """() => [...document.querySelectorAll('#xml-layer .xml-el')]
            .map((el, i) => [el.title.length, i]).sort((a, b) => b[0] - a[0])[0][1]"""
    )
    page.locator("#xml-layer .xml-el").nth(longest).hover(force=True)
    page.wait_for_function("document.querySelector('#hover-info').textContent.length > 40")
    shot(page, f"console-xml-overlay-{size[0]}")
    assert page.locator(".control-col").bounding_box() == controls
    assert page.locator("#live").bounding_box() == screen

    page.keyboard.press("x")
    assert page.locator(".control-col").bounding_box() == controls


def test_it_says_whether_the_screen_is_live(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    start_recording(page, live_server, device, project)
    state = page.locator("#live-state")
    page.wait_for_selector("#live-state[data-state=live]")
    assert "live" in state.inner_text() and "s old" in state.inner_text()
    assert "frames/s" not in page.inner_text("body")

    # The server stops answering: the picture is no longer the device's screen.
    page.route("**/frame/", lambda route: route.abort())
    page.wait_for_selector("#live-state[data-state=disconnected]", timeout=10_000)
    shot(page, "console-live-disconnected")
    assert "disconnected" in state.inner_text()
    assert "cannot be fetched" in state.get_attribute("title")

    # Polls that never come back: the frame grows old.
    page.unroute("**/frame/")
    page.wait_for_selector("#live-state[data-state=live]", timeout=10_000)
    page.route("**/frame/", lambda route: None)  # held, never answered
    page.wait_for_selector("#live-state[data-state=stale]", timeout=15_000)
    shot(page, "console-live-stale")
    assert "stale" in state.inner_text()


def test_an_answer_is_shown_as_it_was_typed(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    start_recording(page, live_server, device, project)
    open_shop(page)
    page.fill("#answer", "Kettle £42 SKU-AB")
    page.click("text=Finish: failure")
    page.wait_for_selector("#finished")
    page.click("#finished a")
    caption = page.locator(".filmstrip .frame", has_text="answer").first
    assert "answer “Kettle £42 SKU-AB”" in caption.inner_text()
    assert "Kettle £42 SKU-AB" in page.locator(".filmstrip a[title*=answer]").first.get_attribute(
        "title"
    )
    assert "open FreshCart" in page.inner_text(".filmstrip")  # the name the device gave
    shot(page, "console-answer-caption")


def test_the_live_screen_fills_the_window_and_zooms(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project, "Zoom in and tap")
    screen = page.locator("#screen").bounding_box()
    info = page.locator(".screen-info").bounding_box()
    # As tall as the window allows (316 x 702 at 78% of the window before), all of it in view.
    assert screen["height"] >= 760 and info["y"] + info["height"] <= 900
    assert abs(screen["width"] / screen["height"] - 540 / 1200) < 0.01
    assert page.inner_text("#zoom-level") == "fit"
    shot(page, "console-screen-fit")

    page.keyboard.press("+")
    page.keyboard.press("+")
    zoomed = page.locator("#screen").bounding_box()
    assert abs(zoomed["height"] - screen["height"] * 1.25**2) < 3
    assert page.inner_text("#zoom-level") == f"{round(zoomed['height'] / 12)}%"
    frame = page.locator("#live-frame")
    assert frame.evaluate("f => f.scrollHeight > f.clientHeight")  # scrolls inside its frame
    assert frame.bounding_box()["y"] + frame.bounding_box()["height"] <= 900
    # A tap on the zoomed screen, scrolled to its middle, lands on the device pixel clicked.
    frame.evaluate("f => { f.scrollTop = (f.scrollHeight - f.clientHeight) / 2; }")
    shot(page, "console-screen-zoomed")
    x, y = 270, 600
    page.mouse.click(*drawn_point(page, x, y))
    wait_steps(page, 1)
    step = Trajectory.objects.get(task=task).steps.get()
    assert abs(step.action["x"] - x) <= 1 and abs(step.action["y"] - y) <= 1

    page.reload()  # the zoom is kept
    page.wait_for_function("document.querySelector('#screen')?.naturalWidth === 540")
    assert page.inner_text("#zoom-level") == f"{round(zoomed['height'] / 12)}%"
    page.click("#zoom-fit")
    assert page.inner_text("#zoom-level") == "fit"
    assert abs(page.locator("#screen").bounding_box()["height"] - screen["height"]) < 2


def test_the_task_is_shown_whole(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    goal = (
        "Open FreshCart, find the Brew Pro kettle and note its price; then open MegaMart, "
        "find the same kettle there, compare the two prices, and answer with the name of the "
        "shop that sells it for less, followed by the lower price."
    )
    assert len(goal) > 200
    task = get_or_create_task(project, TaskRecord(uid="long", goal=goal))
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    start_recording(page, live_server, device, project, task=task)
    assert page.inner_text("#rec-goal .goal-text") == goal
    shot(page, "console-task-whole")

    page.click("text=Release device")
    page.locator("tr", has_text=device.serial).locator("button", has_text="Take").click()
    page.select_option("#task", str(task.pk))
    assert page.inner_text("#task-goal") == goal  # the option shows its first 90 characters
    shot(page, "console-task-picked")
