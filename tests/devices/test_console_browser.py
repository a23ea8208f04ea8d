"""End to end in Chromium: take the virtual device, record a shop trajectory, finish."""

from __future__ import annotations

import pytest

from tests.conftest import shot
from tests.devices.console_pages import start_recording
from trajectories.models import Status, Trajectory
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task
from trajectories.uixml import parse_ui_xml


@pytest.fixture
def browser_page(browser):
    return browser.new_page(viewport={"width": 1280, "height": 900})


def centre_of(device, resource_id):
    for el in parse_ui_xml(device.dump_hierarchy()).elements:
        if el.resource_id == resource_id:
            return el.center
    raise AssertionError(resource_id)


def screen_point(page, x, y):
    box = page.locator("#screen").bounding_box()
    return box["x"] + x * box["width"] / 540, box["y"] + y * box["height"] / 1200


def wait_steps(page, count):
    page.wait_for_selector(f"#filmstrip .frame:nth-child({count})", timeout=20_000)
    page.wait_for_function(
        "!document.querySelector('#busy') || document.querySelector('#busy').hidden"
    )


def test_record_a_shop_trajectory_in_the_browser(
    transactional_db, live_server, adb_servers, device, project_device, alice, project, browser_page
):
    task = get_or_create_task(project, TaskRecord(uid="kettle", goal="Find the kettle's price"))
    page = browser_page
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit]")
    page.click("nav >> text=Devices")
    row = page.locator("tr", has_text=device.serial)
    assert "Waypoint Virtual" in row.inner_text() and "540×1200" in row.inner_text()
    shot(page, "1-devices")
    row.locator("button", has_text="Take").click()

    page.select_option("#task", str(task.pk))
    page.click("text=Start recording")
    page.wait_for_function("document.querySelector('#screen').naturalWidth === 540")
    shot(page, "2-console")

    page.select_option("#open-package", "com.waypoint.freshcart")
    page.click("#open-form button")
    wait_steps(page, 1)

    page.mouse.click(*screen_point(page, *centre_of(device, "com.waypoint.freshcart:id/search")))
    wait_steps(page, 2)
    page.fill("#type-text", "kettle")
    page.press("#type-text", "Enter")
    wait_steps(page, 3)

    page.mouse.move(*screen_point(page, 270, 900))
    page.mouse.down()
    page.mouse.move(*screen_point(page, 270, 600), steps=5)
    page.mouse.up()
    wait_steps(page, 4)

    kettle = centre_of(device, "com.waypoint.freshcart:id/product_kettle")
    page.mouse.click(*screen_point(page, *kettle))
    wait_steps(page, 5)
    page.wait_for_function("document.querySelector('#live').dataset.steps === '5'")
    shot(page, "3-product")

    page.keyboard.press("b")  # Back
    wait_steps(page, 6)
    page.fill("#answer", "42")
    page.click("text=Finish: failure")
    page.wait_for_selector("#finished")
    shot(page, "4-finished")

    trajectory = Trajectory.objects.get(task=task)
    assert trajectory.status == Status.ANNOTATING and trajectory.outcome == "failure"
    steps = list(trajectory.steps.order_by("index"))
    assert [s.action_type for s in steps] == [
        "open_app", "click", "type", "swipe", "click", "back", "answer", "terminate"
    ]  # fmt: skip
    assert steps[0].action == {"package": "com.waypoint.freshcart", "app_label": "FreshCart"}
    assert steps[1].target["resource_id"] == "com.waypoint.freshcart:id/search"
    assert steps[2].action == {"text": "kettle"}
    swipe = steps[3].action
    assert swipe["y"] > swipe["y2"] + 200 and abs(swipe["x"] - 270) <= 3
    assert steps[4].target["resource_id"] == "com.waypoint.freshcart:id/product_kettle"
    assert abs(steps[4].action["x"] - kettle[0]) <= 3
    assert steps[5].screen.package == "com.waypoint.freshcart"
    assert any(v["ref"] == "freshcart.price_kettle" for v in steps[5].screen.visible_memory)
    assert steps[2].screen != steps[3].screen and trajectory.final_screen is not None
    assert all(s.action_sent_at and s.settled_at for s in steps[:6])


def drawn_point(page, x, y):
    """Where device pixel (x, y) is drawn: the screenshot is fitted into its box (contain)."""
    box = page.locator("#screen").bounding_box()
    scale = min(box["width"] / 540, box["height"] / 1200)
    left = box["x"] + (box["width"] - 540 * scale) / 2
    top = box["y"] + (box["height"] - 1200 * scale) / 2
    return left + (x + 0.5) * scale, top + (y + 0.5) * scale


def test_a_click_on_the_live_view_lands_where_it_was_clicked(
    transactional_db, live_server, adb_servers, device, project_device, alice, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project, "Tap near the edges")
    # The status bar, the middle, and the navigation bar's Home: near the top and the bottom
    # is where a stretched mapping is furthest off.
    wanted = [(500, 12), (30, 600), (270, 1170)]
    for count, point in enumerate(wanted, start=1):
        page.mouse.click(*drawn_point(page, *point))
        wait_steps(page, count)
    shot(page, "screens-live-taps")

    # The UI XML overlay sits on the picture: its boxes are where the elements are drawn.
    page.select_option("#open-package", "com.waypoint.freshcart")
    page.click("#open-form button")
    wait_steps(page, len(wanted) + 1)
    page.check("#toggle-xml")
    page.wait_for_selector("#xml-layer .xml-el")
    layer = page.locator("#xml-layer").bounding_box()
    left, top = drawn_point(page, -0.5, -0.5)
    right, bottom = drawn_point(page, 539.5, 1199.5)
    assert abs(layer["x"] - left) < 1 and abs(layer["y"] - top) < 1
    assert abs(layer["x"] + layer["width"] - right) < 1
    assert abs(layer["y"] + layer["height"] - bottom) < 1
    shot(page, "screens-live-xml")

    steps = Trajectory.objects.get(task=task).steps.order_by("index")[: len(wanted)]
    recorded = [(s.action["x"], s.action["y"]) for s in steps]
    assert all(s.action_type == "click" for s in steps)
    for (x, y), (rx, ry) in zip(wanted, recorded, strict=True):
        assert abs(rx - x) <= 1 and abs(ry - y) <= 1, (wanted, recorded)


def test_labels_notes_and_marks_from_the_console_carry_the_version_they_edited(
    transactional_db, live_server, adb_servers, device, project_device, alice, project, browser_page
):
    from trajectories import events
    from trajectories.models import AuditEvent, MemoryTarget

    page = browser_page
    page.set_viewport_size({"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project)
    page.select_option("#open-package", "com.waypoint.freshcart")
    page.click("#open-form button")
    wait_steps(page, 1)

    page.fill("#recording textarea[name=thought]", "Open the shop")
    page.click("text=Save labels")
    page.wait_for_selector("#recording .rec[data-version='2']")
    page.fill("#recording input[name=text]", "The shop opened slowly")
    page.click("text=Add note")
    page.wait_for_selector("#recording .rec[data-version='3']")
    page.check("#toggle-mark")
    x1, y1, x2, y2 = 40, 300, 500, 420
    page.mouse.move(*screen_point(page, x1, y1))
    page.mouse.down()
    page.mouse.move(*screen_point(page, x2, y2), steps=5)
    page.mouse.up()
    page.fill("#mark-key", "kettle_price")
    page.press("#mark-key", "Enter")
    page.wait_for_selector("#memory-targets")
    shot(page, "protocol-console-labels")

    trajectory = Trajectory.objects.get(task=task)
    assert trajectory.version == 4
    assert trajectory.steps.get(index=0).thought == "Open the shop"
    assert trajectory.metadata["notes"][0]["text"] == "The shop opened slowly"
    assert MemoryTarget.objects.get(trajectory=trajectory).key == "kettle_price"
    assert list(
        AuditEvent.objects.filter(trajectory=trajectory)
        .order_by("-id")
        .values_list("kind", flat=True)[:3]
    ) == [events.MEMORY_TARGET_ADDED, events.NOTE_ADDED, events.STEP_UPDATED]
