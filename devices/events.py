"""Audit event kinds of the devices app (a typo is an import error, not a new kind)."""

DEVICE_TAKEN = "device.taken"
DEVICE_RELEASED = "device.released"
DEVICE_LEASE_EXPIRED = "device.lease_expired"
DEVICE_UPDATED = "device.updated"
