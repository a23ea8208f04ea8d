"""Which projects have a device, its label and its longest lease: set by site admins."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction

from trajectories import events
from trajectories.models import Project
from trajectories.services import record_event
from trajectories.validation import InvalidData

from ..access import check_site_admin
from ..models import Device


def check_max_lease_seconds(value: Any) -> int | None:
    if value in (None, ""):
        return None
    try:
        seconds = int(value)
    except (TypeError, ValueError):
        raise InvalidData(
            f"max_lease_seconds: must be a number of seconds, got {value!r}"
        ) from None
    if seconds < 60:
        raise InvalidData(f"max_lease_seconds: must be at least 60 seconds, got {seconds}")
    return seconds


def _state(device: Device) -> dict:
    return {
        "label": device.label,
        "projects": sorted(device.projects.values_list("pk", flat=True)) if device.pk else [],
        "max_lease_seconds": device.max_lease_seconds,
    }


def do_update_device(
    serial: str,
    actor,
    *,
    projects: Iterable[Project] | None = None,
    label: str | None = None,
    max_lease_seconds: Any = ...,
) -> Device:
    """Register the device if needed and set what is given (site admins only); audited.

    ``max_lease_seconds``: None or "" for the setting's default; left out: unchanged.
    """
    check_site_admin(actor)
    if label is not None and len(label) > 200:
        raise InvalidData("label: at most 200 characters")
    change_limit = max_lease_seconds is not ...
    seconds = check_max_lease_seconds(max_lease_seconds) if change_limit else None
    with transaction.atomic(durable=True):
        device = Device.objects.select_for_update().filter(serial=serial).first()
        before = _state(device) if device else None
        if device is None:
            device = Device.objects.create(serial=serial)
        if label is not None:
            device.label = label.strip()
        if change_limit:
            device.max_lease_seconds = seconds
        device.save()
        if projects is not None:
            device.projects.set(list(projects))
        after = _state(device)
        if after != before:
            record_event(events.DEVICE_UPDATED, actor=actor, obj=device, before=before, after=after)
    return device
