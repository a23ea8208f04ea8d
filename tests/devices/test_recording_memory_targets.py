"""Memory targets marked while recording: the value an empty field stands for, a key marked
again on the same screen, edits and deletes through the workspace's label edits, and who may
make them (the driver only)."""

from __future__ import annotations

import pytest
from django.test import Client

from devices.services import (
    do_delete_recorded_memory_target,
    do_edit_memory_target,
    do_mark_memory_target,
    do_start_recording,
    do_take_device,
    record_step,
)
from devices.services.recording import ui_tree_of
from tests.devices.test_recording import current
from trajectories import events
from trajectories.labels.protocol import StaleVersion
from trajectories.models import AuditEvent, MemoryTarget
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop(adb_servers, device, project_device, alice, project):
    task = get_or_create_task(project, TaskRecord(uid="kettle", goal="Find the kettle"))
    lease = do_take_device(device.serial, adb_servers[0], alice)
    trajectory = do_start_recording(lease, task, alice)
    record_step(trajectory, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    return trajectory


def banner(trajectory):
    screen = current(trajectory)
    for el in ui_tree_of(screen).elements:
        if el.text.startswith("Free delivery"):
            return el
    raise AssertionError("no promo banner")


def test_an_empty_value_is_the_text_in_the_box(shop, alice):
    text = banner(shop)
    x1, y1, x2, y2 = text.bounds
    target = do_mark_memory_target(
        shop, alice, shop.version, key="deal", value="", bounds=[x1 - 5, y1 - 5, x2 + 5, y2 + 5]
    )
    assert target.value == text.text
    assert "node" not in target.evidence  # a box, not an element


def test_a_key_marked_again_on_the_same_screen_replaces_the_first_mark(shop, alice):
    bounds = list(banner(shop).bounds)
    do_mark_memory_target(shop, alice, shop.version, key="deal", value="oops", bounds=bounds)
    do_mark_memory_target(shop, alice, shop.version, key="deal", value="", bounds=bounds)
    assert list(MemoryTarget.objects.filter(trajectory=shop).values_list("key", "value")) == [
        ("deal", banner(shop).text)
    ]
    record_step(shop, {"type": "wait", "duration_ms": 10}, alice)
    # On the next screen the same key is another value to remember.
    do_mark_memory_target(shop, alice, shop.version, key="deal", value="later", bounds=bounds)
    assert MemoryTarget.objects.filter(trajectory=shop, key="deal").count() == 2


def test_edit_and_delete_are_versioned_label_edits(shop, alice):
    bounds = list(banner(shop).bounds)
    target = do_mark_memory_target(shop, alice, shop.version, key="deal", value="x", bounds=bounds)
    do_edit_memory_target(shop, alice, shop.version, target.pk, key="weekend_deal", value="")
    target.refresh_from_db()
    assert (target.key, target.value) == ("weekend_deal", banner(shop).text)
    with pytest.raises(StaleVersion, match="you edited version 2"):
        do_delete_recorded_memory_target(shop, alice, 2, target.pk)
    do_delete_recorded_memory_target(shop, alice, shop.version, target.pk)
    assert not MemoryTarget.objects.filter(trajectory=shop).exists()
    assert list(
        AuditEvent.objects.filter(trajectory=shop, kind__startswith="memory_target")
        .order_by("id")
        .values_list("kind", flat=True)
    ) == [events.MEMORY_TARGET_ADDED, events.MEMORY_TARGET_UPDATED, events.MEMORY_TARGET_DELETED]


def test_only_the_driver_edits_the_recordings_memory_targets(shop, alice, bob, device):
    bounds = list(banner(shop).bounds)
    target = do_mark_memory_target(shop, alice, shop.version, key="deal", value="x", bounds=bounds)
    client = Client()
    client.force_login(bob)
    response = client.post(
        f"/devices/{device.serial}/memory/{target.pk}/",
        {"version": shop.version, "delete": "1"},
    )
    assert response.status_code == 200
    assert f"Take device {device.serial} before acting on it. alice drives it." in (
        response.content.decode()
    )
    assert MemoryTarget.objects.filter(pk=target.pk).exists()
