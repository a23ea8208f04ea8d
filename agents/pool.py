"""A run's pool of devices: each episode leases one free device of the pool, as a person takes
a device in the console (``devices.services.leases``), for itself alone, and releases it after.

The pool is the run's list of devices granted to its project (virtual devices Waypoint started,
or any adb device). An episode's worker renews the lease while it plays; a worker that dies
leaves a lease that expires, and the device is free again.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings

from devices.models import Device, Lease
from devices.services import (
    DeviceUnavailable,
    LeaseConflict,
    connect,
    discover_devices,
    do_release_device,
    do_take_device,
)
from devices.services.adb import DEVICE_ERRORS
from devices.services.recording import Connected
from trajectories.models import Project
from trajectories.validation import InvalidData

POLL_S = 0.5


class NoDevice(Exception):
    """No device of the pool became free in time."""


def project_devices(project: Project) -> list[dict[str, str]]:
    """The project's devices that are connected now: the default pool."""
    granted = set(Device.objects.filter(projects=project).values_list("serial", flat=True))
    return [
        {"serial": info.serial, "adb_server": report.server}
        for report in discover_devices()
        for info in report.devices
        if info.serial in granted and info.is_ready
    ]


def check_pool(project: Project, serials: list[str] | None) -> list[dict[str, str]]:
    """The pool of a new run: the named devices (each granted to the project and connected),
    or every connected device of the project."""
    available = project_devices(project)
    if not serials:
        if not available:
            raise InvalidData(
                "devices: the project has no connected device (grant one to the project, or "
                "start virtual devices with run_benchmark --devices N)"
            )
        return available
    by_serial = {d["serial"]: d for d in available}
    missing = [s for s in serials if s not in by_serial]
    if missing:
        raise InvalidData(
            f"devices: {', '.join(missing)} is not a connected device of this project"
        )
    return [by_serial[s] for s in dict.fromkeys(serials)]


def take_device(
    pool: list[dict[str, Any]], user, first: int = 0, wait_s: float | None = None
) -> tuple[Lease, Connected]:
    """Lease a free virtual device of the pool (trying them from ``first`` on), waiting for one
    up to ``wait_s`` (WAYPOINT_POOL_WAIT_S) seconds while others hold them, but only
    WAYPOINT_POOL_UNREACHABLE_S while none can be reached at all (devices that are gone)."""
    wait_s = settings.WAYPOINT_POOL_WAIT_S if wait_s is None else wait_s
    began = time.monotonic()
    deadline = began + wait_s
    unreachable_s = min(wait_s, settings.WAYPOINT_POOL_UNREACHABLE_S)
    order = pool[first % len(pool) :] + pool[: first % len(pool)] if pool else []
    problems: dict[str, str] = {}
    while True:
        busy = False  # another holds a device: worth waiting for
        for entry in order:
            serial, server = entry["serial"], entry["adb_server"]
            try:
                lease = do_take_device(serial, server, user, exclusive=True)
            except LeaseConflict as exc:
                problems[serial] = str(exc)
                busy = True
                continue
            try:
                conn = connect(serial, server)
                if not conn.facts.virtual:
                    raise DeviceUnavailable(
                        f"Device {serial} is not a virtual device: its apps cannot be reset "
                        "to a task's seed."
                    )
            except (DeviceUnavailable, *DEVICE_ERRORS) as exc:
                problems[serial] = str(exc)
                do_release_device(serial, user)
                continue
            return lease, conn
        now = time.monotonic()
        said = "; ".join(f"{s}: {p}" for s, p in problems.items()) or "the pool is empty"
        if now >= deadline:
            raise NoDevice(f"no device of the pool was free within {wait_s:g} s ({said})")
        if not busy and now - began >= unreachable_s:
            raise NoDevice(
                f"no device of the pool could be reached within {unreachable_s:g} s ({said})"
            )
        time.sleep(POLL_S)


def release_device(lease: Lease, user) -> None:
    do_release_device(lease.serial, user)
