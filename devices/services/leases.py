"""One driver per device: take, renew, release; an expired lease is free; admins can force."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from trajectories import events
from trajectories.models import Status, Trajectory
from trajectories.services import record_event

from ..models import Lease


class LeaseConflict(Exception):
    """Someone else drives the device."""


def lease_expiry(seconds: int | None = None):
    return timezone.now() + timedelta(seconds=seconds or settings.WAYPOINT_LEASE_SECONDS)


def active_lease(serial: str) -> Lease | None:
    return (
        Lease.objects.select_related("holder", "trajectory")
        .filter(serial=serial, expires_at__gt=timezone.now())
        .first()
    )


def _interrupt_recording(lease: Lease, reason: str) -> None:
    """A lease that ends under a recording leaves the trajectory interrupted, steps kept."""
    if lease.trajectory_id is None:
        return
    from .recording import do_interrupt

    trajectory = Trajectory.objects.filter(pk=lease.trajectory_id, status=Status.RECORDING).first()
    if trajectory is not None:
        do_interrupt(trajectory, reason)


def do_take_device(serial: str, adb_server: str, user, seconds: int | None = None) -> Lease:
    """Lease the device to ``user`` (renewing their own lease); refuse while another holds it."""
    for _attempt in range(2):
        with transaction.atomic():
            lease = Lease.objects.select_related("holder").filter(serial=serial).first()
            if lease is not None and lease.holder_id != user.pk:
                if not lease.is_expired:
                    raise LeaseConflict(
                        f"Device {serial} is in use by {lease.holder.get_username()} "
                        f"until {timezone.localtime(lease.expires_at):%H:%M:%S}."
                    )
                # Only the expired lease we saw: a concurrent taker may have replaced it.
                if not Lease.objects.filter(pk=lease.pk, expires_at=lease.expires_at).exists():
                    continue
                _interrupt_recording(lease, f"the lease of {lease.holder.get_username()} expired")
                Lease.objects.filter(pk=lease.pk, expires_at=lease.expires_at).delete()
                record_event(
                    events.DEVICE_LEASE_EXPIRED,
                    after={"serial": serial, "holder": lease.holder.get_username()},
                )
                lease = None
            now = timezone.now()
            if lease is None:
                try:
                    with transaction.atomic():
                        lease = Lease.objects.create(
                            serial=serial,
                            adb_server=adb_server,
                            holder=user,
                            acquired_at=now,
                            heartbeat_at=now,
                            expires_at=lease_expiry(seconds),
                        )
                except IntegrityError:
                    continue  # someone took it between our read and our write
                record_event(events.DEVICE_TAKEN, actor=user, after={"serial": serial})
                return lease
            lease.adb_server = adb_server
            lease.heartbeat_at = now
            lease.expires_at = lease_expiry(seconds)
            lease.save(update_fields=["adb_server", "heartbeat_at", "expires_at"])
            return lease
    raise LeaseConflict(f"Device {serial} was taken by someone else just now.")


def do_heartbeat(serial: str, user, seconds: int | None = None) -> Lease:
    """Extend the holder's lease; a lapsed one is lost (someone else may hold the device)."""
    now = timezone.now()
    updated = Lease.objects.filter(serial=serial, holder=user, expires_at__gt=now).update(
        heartbeat_at=now, expires_at=lease_expiry(seconds)
    )
    if not updated:
        raise LeaseConflict(f"You do not hold device {serial} (any more).")
    return Lease.objects.select_related("holder", "trajectory").get(serial=serial)


def check_driver(serial: str, user) -> Lease:
    """The user's live lease on the device, or :class:`LeaseConflict`."""
    lease = active_lease(serial)
    if lease is None or lease.holder_id != user.pk:
        holder = f" {lease.holder.get_username()} drives it." if lease else ""
        raise LeaseConflict(f"Take device {serial} before acting on it.{holder}")
    return lease


def can_force_release(user) -> bool:
    return user.is_staff or user.is_superuser


def do_release_device(serial: str, user, *, force: bool = False) -> bool:
    """End the lease; returns False when there was nothing to release.

    The holder releases their own lease; a site admin may force anyone's.
    """
    with transaction.atomic():
        lease = Lease.objects.select_related("holder").filter(serial=serial).first()
        if lease is None:
            return False
        if lease.holder_id != user.pk:
            if not (force and can_force_release(user)):
                raise LeaseConflict(
                    f"Device {serial} is held by {lease.holder.get_username()}; "
                    "only a site admin can force its release."
                )
            _interrupt_recording(lease, f"{user.get_username()} forced the device's release")
        elif lease.trajectory_id is not None:
            _interrupt_recording(lease, "the device was released during the recording")
        lease.delete()
        record_event(
            events.DEVICE_RELEASED,
            actor=user,
            after={"serial": serial, "holder": lease.holder.get_username(), "forced": force},
        )
        return True
