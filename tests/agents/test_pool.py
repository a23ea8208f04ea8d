"""A run's pool: the project's connected devices, each leased to one episode at a time."""

from __future__ import annotations

import pytest

from agents.pool import NoDevice, check_pool, release_device, take_device
from devices.services import do_take_device
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db


def test_the_pool_is_the_projects_connected_devices(adb_servers, device, project):
    with pytest.raises(InvalidData) as caught:
        check_pool(project, None)
    assert str(caught.value).startswith("devices: the project has no connected device")
    with pytest.raises(InvalidData) as caught:
        check_pool(project, [device.serial])
    assert str(caught.value) == (
        f"devices: {device.serial} is not a connected device of this project"
    )


def test_an_episode_never_shares_a_device_even_with_its_owners_other_episodes(
    pool, project, alice, adb_servers
):
    devices = check_pool(project, [pool.serial])
    assert devices == [{"serial": pool.serial, "adb_server": adb_servers[0]}]
    lease, conn = take_device(devices, alice)
    assert conn.facts.virtual and lease.holder == alice
    with pytest.raises(NoDevice) as caught:
        take_device(devices, alice, wait_s=0)
    assert str(caught.value).startswith(
        f"no device of the pool was free within 0 s ({pool.serial}: Device {pool.serial} is in "
        "use by alice until"
    )
    release_device(lease, alice)
    again, _ = take_device(devices, alice, wait_s=0)
    release_device(again, alice)


def test_a_device_a_person_drives_is_not_taken(pool, project, alice, bob, adb_servers):
    do_take_device(pool.serial, adb_servers[0], bob)
    with pytest.raises(NoDevice):
        take_device(check_pool(project, None), alice, wait_s=0)


def test_a_pool_whose_devices_are_all_gone_is_given_up_without_waiting_its_whole_wait(
    project, alice, adb_servers, settings
):
    settings.WAYPOINT_POOL_UNREACHABLE_S = 1
    gone = [{"serial": "127.0.0.1:9", "adb_server": adb_servers[0]}]  # nothing listens there
    with pytest.raises(NoDevice) as caught:
        take_device(gone, alice, wait_s=600)
    assert str(caught.value).startswith(
        "no device of the pool could be reached within 1 s (127.0.0.1:9: "
    )
