"""A worker lost mid-walk leaves its lease behind: the walk taken up again waits for that lease
to expire instead of failing "in use", while another person's lease is refused at once."""

from __future__ import annotations

import time

import pytest

from devices.services import do_take_device
from explore.models import Exploration
from explore.walk import explore
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db
MAIL = "com.waypoint.mailbox"


def exploration_of(project, user, serial: str) -> Exploration:
    return Exploration.objects.create(
        project=project, app=MAIL, serial=serial, seed=3, budget_steps=3, created_by=user
    )


def test_a_lease_its_lost_worker_left_is_waited_out(pool, project, alice, adb_servers, settings):
    settings.WAYPOINT_LEASE_SECONDS = 3
    do_take_device(pool.serial, adb_servers[0], alice, exclusive=True)  # the lost worker's
    x = exploration_of(project, alice, pool.serial)
    began = time.monotonic()
    result = explore(x)
    x.refresh_from_db()
    assert (x.status, result["steps"]) == ("finished", 3), x.message
    assert time.monotonic() - began >= 2  # it waited for the old lease to run out


def test_another_persons_lease_is_refused_at_once(pool, project, alice, bob, adb_servers):
    do_take_device(pool.serial, adb_servers[0], bob)
    x = exploration_of(project, alice, pool.serial)
    began = time.monotonic()
    with pytest.raises(InvalidData, match=rf"^Device {pool.serial} is in use by bob until "):
        explore(x)
    x.refresh_from_db()
    assert x.status == "failed" and x.message.startswith(f"Device {pool.serial} is in use by bob")
    assert time.monotonic() - began < 5
