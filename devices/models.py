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
