"""Who drives which device: leases with an expiry, renewed by the driver's heartbeat."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Lease(models.Model):
    """One driver per device; a lease past ``expires_at`` is free for anyone to take."""

    serial = models.CharField(max_length=200, unique=True)
    adb_server = models.CharField(max_length=200, help_text="host:port of the adb server.")
    holder = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="device_leases"
    )
    trajectory = models.ForeignKey(
        "trajectories.Trajectory",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The trajectory being recorded on the device, if any.",
    )
    acquired_at = models.DateTimeField(default=timezone.now)
    heartbeat_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["serial"]

    def __str__(self) -> str:
        return f"{self.serial} held by {self.holder_id} until {self.expires_at:%H:%M:%S}"

    @property
    def is_expired(self) -> bool:
        return self.expires_at <= timezone.now()


class Device(models.Model):
    """A phone or emulator Waypoint knows, and the projects whose members may use it.

    Devices are discovered on the adb servers; only site admins see one that belongs to no
    project yet, and grant it to projects (a shared pool is a device granted to several).
    """

    serial = models.CharField(max_length=200, unique=True)
    label = models.CharField(max_length=200, blank=True, help_text="A name people recognise.")
    projects = models.ManyToManyField(
        "trajectories.Project",
        blank=True,
        related_name="devices",
        help_text="Members of these projects see, watch and drive the device.",
    )
    max_lease_seconds = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Longest a lease may last from when it was taken, renewals included "
        "(empty: the WAYPOINT_LEASE_MAX_SECONDS setting).",
    )

    class Meta:
        ordering = ["serial"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(max_lease_seconds__isnull=True)
                | models.Q(max_lease_seconds__gte=60),
                name="device_max_lease_at_least_a_minute",
            )
        ]

    def __str__(self) -> str:
        return self.label or self.serial
