"""The virtual device's launcher: "Swipe up for all apps" opens the drawer of every app."""

from __future__ import annotations

from tests.conftest import shot
from tests.devices.console_pages import start_recording
from tests.devices.test_console_browser import screen_point, wait_steps
from trajectories.models import Trajectory
from trajectories.uixml import parse_ui_xml


def drawer_labels(xml: str) -> list[str]:
    tree = parse_ui_xml(xml)
    drawer = [el for el in tree.elements if el.resource_id.endswith(":id/apps_list_view")]
    if not drawer:
        return []
    x1, y1, x2, y2 = drawer[0].bounds
    return [
        el.content_desc
        for el in tree.elements
        if el.resource_id.endswith(":id/icon")
        and x1 <= el.center[0] <= x2
        and y1 <= el.center[1] <= y2
    ]


def test_it_opens_the_drawer_on_a_swipe_up_and_closes_it_with_back(device):
    assert drawer_labels(device.dump_hierarchy()) == []
    device.swipe(270, 1000, 270, 300, 0.2)
    labels = drawer_labels(device.dump_hierarchy())
    assert labels == sorted(labels, key=str.lower) and "FreshCart" in labels
    assert device.app_current().package == "com.android.launcher3"
    device.keyevent("BACK")
    assert drawer_labels(device.dump_hierarchy()) == []


def test_a_short_drag_on_the_launcher_is_no_swipe(device):
    device.swipe(270, 700, 270, 680, 0.2)  # 20 px: a tap, as on a phone
    assert drawer_labels(device.dump_hierarchy()) == []


def test_dragging_up_on_the_launcher_in_the_console_records_the_drawer(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project, "Open the app drawer")
    page.mouse.move(*screen_point(page, 270, 1000))
    page.mouse.down()
    page.mouse.move(*screen_point(page, 270, 400), steps=8)
    page.mouse.up()
    wait_steps(page, 1)
    shot(page, "console-app-drawer")

    trajectory = Trajectory.objects.get(task=task)
    step = trajectory.steps.get()
    assert step.action_type == "swipe"
    from trajectories.blobs import read_blob

    labels = drawer_labels(read_blob(trajectory.final_screen.ui_xml).decode())
    assert "FreshCart" in labels and labels == sorted(labels, key=str.lower)
