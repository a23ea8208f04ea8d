"""Every task of the demo project can be recorded on the virtual device: its apps are there,
and ShopMate shows the products and prices the generated trajectories were made with."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from lxml import etree

from devices.virtual import load_apps
from devices.virtual.apps import APPS_DIR
from fixtures.generate import (
    generate_record,
    price_of,
    refresh_shopmate_app,
    shopmate_catalogue,
)
from fixtures.management.commands.seed_demo import DEMO_PROJECT
from tests.conftest import shot
from tests.devices.conftest import tap_node
from tests.devices.console_pages import start_recording
from tests.devices.test_console_browser import centre_of, screen_point, wait_steps
from trajectories.models import Task, Trajectory
from trajectories.services import get_or_create_task

SHOP = "com.waypoint.shopmate"


@pytest.mark.django_db
def test_every_demo_task_uses_only_apps_the_virtual_device_has():
    call_command("seed_demo", trajectories=12, steps=6, stdout=io.StringIO())
    on_device = {app.package for app in load_apps().apps}
    tasks = list(Task.objects.filter(project__name=DEMO_PROJECT))
    assert len(tasks) >= 6
    for task in tasks:
        missing = set(task.apps) - on_device
        assert not missing, f"{task.goal!r} needs {missing}, not on the virtual device"


def test_the_shopmate_app_lists_the_generated_catalogue(tmp_path):
    page = APPS_DIR / "shopmate" / "index.html"
    copy = tmp_path / "index.html"
    copy.write_text(page.read_text())
    # fixtures.generate.refresh_shopmate_app(page) brings it up to date after a change.
    assert refresh_shopmate_app(copy) is False
    html = page.read_text()
    listed = json.loads(re.search(r"const CATALOGUE = (\[.*?\n\]);", html, re.S).group(1))
    assert listed == shopmate_catalogue()
    products = {p["name"] for p in listed}
    for seed in range(20):  # every product a generated goal names is for sale
        goal = generate_record(seed, steps=6).task.goal
        named = re.findall(r"the ([A-Z][a-z]+ [A-Z][A-Za-z ]+?)(?:,| and|;|$)", goal)
        assert named and set(named) <= products, goal


def _texts(device) -> list[str]:
    return [n.get("text") for n in etree.fromstring(device.dump_hierarchy().encode()).iter("node")]


def node_text(xml: str, resource_id: str) -> str:
    found = etree.fromstring(xml.encode()).iter("node")
    return next(n.get("text") for n in found if n.get("resource-id") == resource_id)


def test_a_generated_task_is_done_on_the_virtual_device(device):
    device.app_start(SHOP)
    assert device.app_current().package == SHOP
    tap_node(device, resource_id=f"{SHOP}:id/search_box")
    device.send_keys("Tent")
    tap_node(device, resource_id=f"{SHOP}:id/search_go")
    texts = _texts(device)
    assert "Nimbus Tent" in texts and price_of("Nimbus Tent") in texts
    tap_node(device, resource_id=f"{SHOP}:id/product_nimbus_tent")
    price = node_text(device.dump_hierarchy(), f"{SHOP}:id/price")
    assert price == price_of("Nimbus Tent")
    device.keyevent("BACK")
    device.keyevent("BACK")
    device.app_start("com.waypoint.notes")  # where the goal says to note the price
    assert device.app_current().package == "com.waypoint.notes"


def test_a_demo_task_is_recorded_in_the_console(
    transactional_db, live_server, adb_servers, device, project_device, alice, project, browser
):
    """In Chromium, through the recording console: the generated lookup task, start to end."""
    record = next(
        r
        for r in (generate_record(seed, steps=6) for seed in range(40))
        if r.task.intent == "lookup"
    )
    product = record.task.memory_items[0]["description"].removeprefix("Price of the ")
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(
        page, live_server, device, project, task=get_or_create_task(project, record.task)
    )

    page.select_option("#open-package", SHOP)  # the app the task names is on the device
    page.click("#open-form button")
    wait_steps(page, 1)
    page.mouse.click(*screen_point(page, *centre_of(device, f"{SHOP}:id/search_box")))
    wait_steps(page, 2)
    page.fill("#type-text", product)
    page.press("#type-text", "Enter")
    wait_steps(page, 3)
    page.mouse.click(*screen_point(page, *centre_of(device, f"{SHOP}:id/search_go")))
    wait_steps(page, 4)
    slug = re.sub(r"[^a-z0-9]+", "_", product.lower())
    page.mouse.click(*screen_point(page, *centre_of(device, f"{SHOP}:id/product_{slug}")))
    wait_steps(page, 5)
    price = node_text(device.dump_hierarchy(), f"{SHOP}:id/price")
    assert price == price_of(product) == record.task.gold_answer
    shot(page, "lists-demo-task-console")
    page.fill("#answer", price)
    page.click("text=Finish: success")
    page.wait_for_selector("#finished")

    trajectory = Trajectory.objects.get(task=task)
    steps = list(trajectory.steps.order_by("index"))
    assert steps[0].action == {"package": SHOP, "app_label": "ShopMate"}  # the device named it
    assert steps[4].target["resource_id"] == f"{SHOP}:id/product_{slug}"
    assert steps[-2].action_type == "answer" and steps[-2].action["text"] == price
