"""One driver per device: take, renew, release; an expired lease is free; admins can force.

A lease lasts at most ``lease_max_seconds`` from when it was taken: renewals stop there, so a
driver cannot keep a device from the rest of its project for ever.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from trajectories import events
from trajectories.models import Status, Trajectory
from trajectories.services import record_event

from ..access import can_end_leases, lease_max_seconds
from ..models import Device, Lease


class LeaseConflict(Exception):
    """Someone else drives the device."""


def lease_expiry(seconds: int | None = None):
    return timezone.now() + timedelta(seconds=seconds or settings.WAYPOINT_LEASE_SECONDS)


def registered_device(serial: str) -> Device | None:
    return Device.objects.filter(serial=serial).first()


def latest_end(lease: Lease) -> datetime:
    """When the lease ends at the latest, however often it is renewed."""
    seconds = lease_max_seconds(registered_device(lease.serial))
    return lease.acquired_at + timedelta(seconds=seconds)


def final_stretch_notice(lease: Lease) -> str:
    """What the driver is told once renewals no longer extend the lease ("" before that)."""
    end = latest_end(lease)
    if lease.expires_at < end:
        return ""
    longest = lease_max_seconds(registered_device(lease.serial))
    return (
        f"Your lease on device {lease.serial} reaches its maximum length of "
        f"{duration_text(longest)}, set by an admin, at {timezone.localtime(end):%H:%M:%S}: "
        "finish or release before then."
    )


def duration_text(seconds: int) -> str:
    """``3600`` -> ``"60 min"``, ``90`` -> ``"90 s"``."""
    if seconds % 60:
        return f"{seconds} s"
    return f"{seconds // 60} min"


def renewed_expiry(lease: Lease, seconds: int | None, *, refuse_at_limit: bool = True) -> datetime:
    """The expiry a renewal gives, capped at the lease's maximum length.

    A renewal that cannot add anything because the lease already ends at its maximum is
    refused with :class:`LeaseConflict` saying so (unless ``refuse_at_limit`` is off: the
    console's heartbeat keeps the lease until its end, and the page says when that is).
    """
    wanted = lease_expiry(seconds)
    limit = latest_end(lease)
    if wanted <= limit:
        return wanted
    if refuse_at_limit and lease.expires_at >= limit:
        longest = lease_max_seconds(registered_device(lease.serial))
        raise LeaseConflict(
            f"Your lease on device {lease.serial} has reached its maximum length of "
            f"{duration_text(longest)}, set by an admin: it ends at "
            f"{timezone.localtime(lease.expires_at):%H:%M:%S} and cannot be renewed. "
            "Release the device, or take it again once the lease has ended."
        )
    return limit


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
    from .recording import interrupt_recording

    trajectory = Trajectory.objects.filter(pk=lease.trajectory_id, status=Status.RECORDING).first()
    if trajectory is not None:
        interrupt_recording(trajectory, reason)


def do_take_device(
    serial: str, adb_server: str, user, seconds: int | None = None, *, exclusive: bool = False
) -> Lease:
    """Lease the device to ``user`` (renewing their own lease); refuse while another holds it.

    ``exclusive``: refuse while any live lease holds it, the user's own included (an agent run
    takes each device for one episode at a time, all under the run's owner).
    """
    for _attempt in range(2):
        with transaction.atomic(durable=True):
            lease = Lease.objects.select_related("holder").filter(serial=serial).first()
            # An expired lease is ended with a conditional delete before a new one is made:
            # of two takers who saw it, one makes the new lease and the other sees it taken.
            if lease is not None and (exclusive or lease.holder_id != user.pk):
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
            longest = lease_max_seconds(registered_device(serial))
            first_expiry = min(lease_expiry(seconds), now + timedelta(seconds=longest))
            if lease is None:
                try:
                    with transaction.atomic():
                        lease = Lease.objects.create(
                            serial=serial,
                            adb_server=adb_server,
                            holder=user,
                            acquired_at=now,
                            heartbeat_at=now,
                            expires_at=first_expiry,
                        )
                except IntegrityError:
                    continue  # someone took it between our read and our write
                record_event(events.DEVICE_TAKEN, actor=user, after={"serial": serial})
                return lease
            if lease.is_expired:
                # The user's own lease lapsed and nobody took the device: a new lease.
                lease.acquired_at = now
                lease.expires_at = first_expiry
            else:
                lease.expires_at = renewed_expiry(lease, seconds)
            lease.adb_server = adb_server
            lease.heartbeat_at = now
            lease.save(update_fields=["adb_server", "acquired_at", "heartbeat_at", "expires_at"])
            return lease
    raise LeaseConflict(f"Device {serial} was taken by someone else just now.")


def do_heartbeat(serial: str, user, seconds: int | None = None) -> Lease:
    """Extend the holder's lease up to its maximum length; a lapsed one is lost (someone
    else may hold the device)."""
    now = timezone.now()
    lease = Lease.objects.filter(serial=serial, holder=user, expires_at__gt=now).first()
    if lease is None:
        raise LeaseConflict(f"You do not hold device {serial} (any more).")
    expiry = renewed_expiry(lease, seconds, refuse_at_limit=False)
    updated = Lease.objects.filter(pk=lease.pk, holder=user, expires_at__gt=now).update(
        heartbeat_at=now, expires_at=expiry
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


def do_release_device(serial: str, user, *, force: bool = False) -> bool:
    """End the lease; returns False when there was nothing to release.

    The holder releases their own lease; a site admin or an admin of one of the device's
    projects may end anyone's (``force``).
    """
    with transaction.atomic(durable=True):
        lease = Lease.objects.select_related("holder").filter(serial=serial).first()
        if lease is None:
            return False
        if lease.holder_id != user.pk:
            device = registered_device(serial) or Device(serial=serial)
            if not (force and can_end_leases(user, device)):
                raise LeaseConflict(
                    f"Device {serial} is held by {lease.holder.get_username()}; "
                    "only an admin of its project or a site admin can end the lease."
                )
            _interrupt_recording(lease, f"{user.get_username()} ended the lease")
        elif lease.trajectory_id is not None:
            _interrupt_recording(lease, "the device was released during the recording")
        lease.delete()
        record_event(
            events.DEVICE_RELEASED,
            actor=user,
            after={"serial": serial, "holder": lease.holder.get_username(), "forced": force},
        )
        return True
