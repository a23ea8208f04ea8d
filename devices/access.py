"""Who may see, watch, drive and manage a device: members of the projects it belongs to.

Site admins (staff) see every device, including those that belong to no project yet, and
grant devices to projects; an admin of one of a device's projects can end anyone's lease on it.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import QuerySet
from django.http import Http404

from trajectories.access import AccessDenied, projects_of
from trajectories.models import Membership, Role

from .models import Device


def is_site_admin(user) -> bool:
    return user.is_authenticated and (user.is_staff or user.is_superuser)


def devices_of(user) -> QuerySet[Device]:
    """The registered devices the user may see (site admins: all of them)."""
    if not user.is_authenticated:
        return Device.objects.none()
    if is_site_admin(user):
        return Device.objects.all()
    return Device.objects.filter(projects__in=projects_of(user)).distinct()


def visible_serials(user, serials: list[str]) -> set[str]:
    """Which of the discovered serials the user may see (one query)."""
    if is_site_admin(user):
        return set(serials)
    return set(devices_of(user).filter(serial__in=serials).values_list("serial", flat=True))


def access_device(user, serial: str) -> Device:
    """The device if one of the user's projects has it; everyone else gets a 404.

    A site admin also gets a device nobody registered yet (unsaved), to grant it to projects.
    """
    device = devices_of(user).filter(serial=serial).first()
    if device is None:
        if not is_site_admin(user):
            raise Http404("No such device")
        device = Device(serial=serial)
    return device


def check_site_admin(user) -> None:
    if not is_site_admin(user):
        raise AccessDenied("Only a site admin can change which projects have a device")


def can_end_leases(user, device: Device) -> bool:
    """Site admins, and admins of a project the device belongs to, end anyone's lease."""
    if is_site_admin(user):
        return True
    if device.pk is None:
        return False
    return Membership.objects.filter(
        user=user, role=Role.ADMIN, project__in=device.projects.all()
    ).exists()


def lease_max_seconds(device: Device | None) -> int:
    """The longest a lease on the device may last (the device's own limit, else the setting)."""
    if device is not None and device.max_lease_seconds:
        return device.max_lease_seconds
    return settings.WAYPOINT_LEASE_MAX_SECONDS
