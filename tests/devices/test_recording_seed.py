"""A recording on the virtual device starts from apps reset to a seed, and records that seed,
so its memory variables can be rebuilt (and the memory-world export says how)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from django.test import Client
from rest_framework.test import APIClient

from devices.services import (
    connect,
    do_finish_recording,
    do_import_virtual_tasks,
    do_start_recording,
    do_take_device,
    record_step,
)
from devices.virtual import load_apps
from formats.catalogue import export_trajectories
from tests.devices.conftest import tap_node
from trajectories import events
from trajectories.blobs import read_blob
from trajectories.models import AuditEvent, Trajectory
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db

SESSION_SEED = 7  # the session's virtual device (conftest)
APPS = [
    {"slug": a.slug, "package": a.package, "label": a.label, "version": a.version}
    for a in load_apps(SESSION_SEED).apps
]


@pytest.fixture
def lease(adb_servers, device, project_device, alice):
    lease = do_take_device(device.serial, adb_servers[0], alice)
    yield lease
    device.shell(["waypoint", "reset", "--seed", str(SESSION_SEED)])


@pytest.fixture
def task(project):
    return get_or_create_task(project, TaskRecord(uid="kettle", goal="Find the kettle's price"))


def add_to_cart(device) -> None:
    device.app_start("com.waypoint.freshcart")
    tap_node(device, resource_id="com.waypoint.freshcart:id/product_kettle")
    tap_node(device, resource_id="com.waypoint.freshcart:id/add_to_cart")


def open_kettle(trajectory, alice) -> list[dict]:
    """Record: open FreshCart, tap the kettle; the memory variables the product page shows."""
    record_step(trajectory, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    store = Trajectory.objects.get(pk=trajectory.pk).final_screen
    kettle = next(v for v in store.visible_memory if v["ref"] == "freshcart.price_kettle")
    x1, y1, x2, y2 = kettle["bounds"]
    record_step(trajectory, {"type": "click", "x": (x1 + x2) // 2, "y": (y1 + y2) // 2}, alice)
    return Trajectory.objects.get(pk=trajectory.pk).final_screen.visible_memory


def test_a_recording_with_a_reset_starts_from_fresh_apps_and_stores_the_seed(
    lease, device, alice, task
):
    add_to_cart(device)  # what an earlier recording leaves behind

    trajectory = do_start_recording(lease, task, alice, reset_seed="5")

    assert trajectory.metadata["virtual_device"] == {"seed": 5, "apps": APPS, "reset": True}
    assert trajectory.final_screen.package == "com.android.launcher3"
    shown = open_kettle(trajectory, alice)
    opened = trajectory.steps.get(index=0).action
    assert opened == {
        "package": "com.waypoint.freshcart",
        "app_label": "FreshCart",
    }
    price = load_apps(5).variable("freshcart.price_kettle").value
    assert [(v["ref"], v["value"]) for v in shown] == [("freshcart.price_kettle", price)]
    page = Trajectory.objects.get(pk=trajectory.pk).final_screen
    assert 'text="Cart 0"' in read_blob(page.ui_xml).decode()  # the old cart is gone
    started = AuditEvent.objects.get(trajectory=trajectory, kind=events.RECORDING_STARTED)
    assert started.after == {"serial": device.serial, "task": task.uid, "seed": 5, "reset": True}


def test_the_same_seed_gives_a_second_recording_the_same_memory_variables(
    lease, device, alice, task
):
    first = do_start_recording(lease, task, alice, reset_seed=11)
    first_shown = open_kettle(first, alice)
    do_finish_recording(first, alice)
    device.shell(["waypoint", "reset", "--seed", "12"])

    second = do_start_recording(lease, task, alice, reset_seed=11)
    assert open_kettle(second, alice) == first_shown
    assert first_shown[0]["value"] == load_apps(11).variable("freshcart.price_kettle").value


def test_without_a_reset_the_seed_the_device_is_at_is_recorded(lease, alice, task):
    trajectory = do_start_recording(lease, task, alice)
    assert trajectory.metadata["virtual_device"] == {
        "seed": SESSION_SEED,
        "apps": APPS,
        "reset": False,
    }


@pytest.mark.parametrize(
    "seed, message",
    [
        ("five", "reset_seed: the seed must be a whole number from 0 to 2147483647, got 'five'"),
        (-3, "reset_seed: the seed must be a whole number from 0 to 2147483647, got -3"),
        (2**31, "reset_seed: the seed must be a whole number from 0 to 2147483647, got 2147483648"),
    ],
)
def test_a_bad_seed_is_refused_before_anything_is_recorded(lease, alice, task, seed, message):
    with pytest.raises(InvalidData) as caught:
        do_start_recording(lease, task, alice, reset_seed=seed)
    assert str(caught.value) == message
    assert not Trajectory.objects.exists()


def test_only_the_virtual_device_can_be_reset(lease, device, alice, task):
    conn = connect(device.serial)
    phone = replace(conn, facts=replace(conn.facts, virtual=False))
    with pytest.raises(InvalidData) as caught:
        do_start_recording(lease, task, alice, conn=phone, reset_seed=1)
    assert str(caught.value) == (
        f"reset_seed: device {device.serial} is not the virtual device; only the virtual "
        "device's apps can be reset to a seed."
    )
    # A phone does not know a seed: nothing about one is recorded.
    trajectory = do_start_recording(lease, task, alice, conn=phone)
    assert "virtual_device" not in trajectory.metadata


def test_the_memory_world_export_names_the_app_and_the_seed(
    lease, device, alice, project, tmp_path
):
    tasks = do_import_virtual_tasks(project, connect(device.serial))
    task = next(t for t in tasks if t.uid.startswith("virtual:freshcart-order-number:"))
    trajectory = do_start_recording(lease, task, alice, reset_seed=9)
    gold = load_apps(9).task("freshcart-order-number").gold
    assert task.gold_answer != gold  # imported at seed 7: seed 9 has another order number
    assert (trajectory.task.goal, trajectory.task.gold_answer) == (task.goal, gold)
    do_finish_recording(trajectory, alice, answer=gold)
    assert trajectory.outcome == "success"  # the device graded it with seed 9's order number

    out = tmp_path / "mw"
    export_trajectories(Trajectory.objects.filter(project=project), out, "memory-world")
    [line] = (out / "test.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["gold_answer"] == gold
    assert record["environment"] == {
        "kind": "virtual",
        "virtual_task": "freshcart-order-number",
        "apps": ["freshcart"],
        "seed": 9,
        "reset": True,
        "device_apps": APPS,
    }
    card = (out / "README.md").read_text()
    assert "no recorded seed (their environment cannot be rebuilt exactly):\n  0." in card
    assert "a note of an earlier recording may have been there):\n  0." in card


def test_the_console_form_resets_to_the_seed_asked_for(lease, device, alice, task):
    page = Client()
    page.force_login(alice)
    form = page.get(f"/devices/{device.serial}/").content.decode()
    assert 'name="reset"' in form and 'name="seed"' in form
    assert f"The device is at seed {SESSION_SEED} now" in form

    response = page.post(
        f"/devices/{device.serial}/start/", {"task": task.pk, "reset": "1", "seed": "21"}
    )
    assert response.status_code == 302
    assert Trajectory.objects.get().metadata["virtual_device"]["seed"] == 21


def test_the_console_form_asks_for_a_seed_when_the_reset_is_ticked(lease, device, alice, task):
    page = Client()
    page.force_login(alice)
    response = page.post(
        f"/devices/{device.serial}/start/",
        {"task": task.pk, "reset": "1", "seed": " "},
        follow=True,
    )
    assert "Reset apps to seed: give the seed (a whole number)." in response.content.decode()
    assert not Trajectory.objects.exists()


def test_the_api_resets_to_reset_seed(lease, device, alice, task):
    api = APIClient()
    api.force_authenticate(alice)
    url = f"/api/v1/devices/{device.serial}/trajectories"
    response = api.post(url, {"task": task.pk, "reset_seed": 4}, format="json")
    assert response.status_code == 201, response.content
    assert Trajectory.objects.get().metadata["virtual_device"]["seed"] == 4

    bad = api.post(url, {"task": task.pk, "reset_seed": "x"}, format="json")
    assert bad.status_code == 400 and bad.json() == {
        "detail": "reset_seed: must be an integer, got 'x'"
    }
    resumed = api.post(url, {"resume": response.json()["id"], "reset_seed": 4}, format="json")
    assert resumed.status_code == 400
    assert resumed.json() == {
        "detail": "reset_seed: a resumed trajectory goes on from the device's current screen; "
        "its apps cannot be reset."
    }


def test_a_resumed_recording_notes_the_seed_the_device_is_at(lease, device, alice, task):
    from devices.services import do_interrupt, do_resume_recording

    trajectory = do_start_recording(lease, task, alice, reset_seed=6)
    do_interrupt(trajectory, "the recorder went for lunch")
    device.shell(["waypoint", "reset", "--seed", "8"])  # someone else reset it meanwhile
    trajectory.refresh_from_db()
    do_resume_recording(lease, trajectory, alice)
    trajectory.refresh_from_db()
    assert trajectory.metadata["virtual_device"]["seed"] == 6
    assert trajectory.metadata["resumes"][0]["seed"] == 8  # its later steps show seed 8's data
