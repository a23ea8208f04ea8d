"""Memory targets marked in the console: an in-page editor (no browser prompt), the element's
text when the value is left empty, and edit and delete of what was marked."""

from __future__ import annotations

from tests.conftest import shot
from tests.devices.console_pages import open_shop, start_recording
from tests.devices.test_console_browser import screen_point
from trajectories import events
from trajectories.models import AuditEvent, MemoryTarget, Trajectory
from trajectories.uixml import parse_ui_xml


def element(device, text):
    for el in parse_ui_xml(device.dump_hierarchy()).elements:
        if el.text.startswith(text):
            return el
    raise AssertionError(text)


def draw_box(page, bounds):
    x1, y1, x2, y2 = bounds
    page.mouse.move(*screen_point(page, x1 - 4, y1 - 4))
    page.mouse.down()
    page.mouse.move(*screen_point(page, x2 + 4, y2 + 4), steps=5)
    page.mouse.up()


def test_marking_a_value_opens_an_editor_and_takes_the_text_in_the_box(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    task = start_recording(page, live_server, device, project)
    open_shop(page)
    banner = element(device, "Free delivery")

    page.keyboard.press("m")
    draw_box(page, banner.bounds)
    page.wait_for_selector("#mark-form:not([hidden])")
    assert page.evaluate("document.activeElement.id") == "mark-key"
    assert page.is_visible("#box")
    shot(page, "console-mark-editor")
    page.set_viewport_size({"width": 1920, "height": 1080})
    shot(page, "console-mark-editor-1920")
    page.set_viewport_size({"width": 1440, "height": 900})
    page.keyboard.type("promo")
    page.keyboard.press("Enter")  # the value is left empty
    page.wait_for_selector("#memory-target-1, #memory-targets li")
    assert dialogs == []

    trajectory = Trajectory.objects.get(task=task)
    target = MemoryTarget.objects.get(trajectory=trajectory)
    assert target.key == "promo" and target.value == banner.text
    assert page.input_value("#memory-targets input[name=value]") == banner.text
    assert page.is_hidden("#mark-form") and page.is_hidden("#box")

    # Escape closes the editor without marking anything.
    draw_box(page, banner.bounds)
    page.wait_for_selector("#mark-form:not([hidden])")
    page.keyboard.press("Escape")
    page.wait_for_selector("#mark-form", state="hidden")
    assert MemoryTarget.objects.filter(trajectory=trajectory).count() == 1


def test_a_second_mark_of_a_key_replaces_it_and_targets_can_be_edited_and_deleted(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project)
    open_shop(page)
    banner = element(device, "Free delivery")
    page.keyboard.press("m")
    for value in ("first try", "second try"):
        draw_box(page, banner.bounds)
        page.wait_for_selector("#mark-form:not([hidden])")
        page.fill("#mark-key", "deal")
        page.fill("#mark-value", value)
        page.click("text=Save memory target")
        page.wait_for_function(
            f"[...document.querySelectorAll('#memory-targets input[name=value]')]"
            f".some(i => i.value === '{value}')"
        )
    trajectory = Trajectory.objects.get(task=task)
    assert list(MemoryTarget.objects.filter(trajectory=trajectory).values_list("key", "value")) == [
        ("deal", "second try")
    ]
    assert page.locator("#memory-targets li").count() == 1

    row = page.locator("#memory-targets li").first
    row.locator("input[name=key]").fill("weekend_deal")
    row.locator("input[name=value]").fill("")  # empty: the text it was marked on
    row.locator("button", has_text="Save").click()
    page.wait_for_selector("#memory-targets input[name=key][value=weekend_deal]")
    target = MemoryTarget.objects.get(trajectory=trajectory)
    assert (target.key, target.value) == ("weekend_deal", banner.text)
    shot(page, "console-memory-targets")
    page.set_viewport_size({"width": 1920, "height": 1080})
    shot(page, "console-memory-targets-1920", full_page=True)

    page.locator("#memory-targets li").first.locator("button", has_text="Delete").click()
    page.wait_for_selector("#memory-targets", state="detached")
    assert not MemoryTarget.objects.filter(trajectory=trajectory).exists()
    kinds = list(
        AuditEvent.objects.filter(trajectory=trajectory)
        .order_by("id")
        .values_list("kind", flat=True)
    )
    assert kinds[-4:] == [
        events.MEMORY_TARGET_ADDED,
        events.MEMORY_TARGET_UPDATED,
        events.MEMORY_TARGET_UPDATED,
        events.MEMORY_TARGET_DELETED,
    ]
