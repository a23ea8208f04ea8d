"""The virtual device's environment: the seed its apps' data comes from, and resetting it.

A recording's memory variables (prices, order numbers, meeting times) are generated from the
device's seed, so a trajectory that records the seed (and starts from freshly reset apps) can be
rebuilt exactly: ``waypoint reset --seed N`` over adb does it for any tool, not only Waypoint.
"""

from __future__ import annotations

import json
from typing import Any

from trajectories.validation import InvalidData

from .adb import DEVICE_ERRORS, DeviceUnavailable

MAX_SEED = 2**31 - 1  # what the device's `waypoint reset` accepts
NATURAL_LEVEL = 3  # the difficulty level a reset poses tasks at unless told (STAMP's L3)


def check_seed(value: Any, field: str = "reset_seed") -> int | None:
    """The seed asked for (None: no reset), from a form string or a JSON number."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        seed = value
    elif isinstance(value, str) and value.strip().isdigit():
        seed = int(value.strip())
    else:
        seed = -1
    if not 0 <= seed <= MAX_SEED:
        raise InvalidData(
            f"{field}: the seed must be a whole number from 0 to {MAX_SEED}, got {value!r}"
        )
    return seed


def _environment(output: str, serial: str) -> dict[str, Any]:
    try:
        env = json.loads(output)
        seed = env["seed"]
        apps = [
            {
                "slug": a["slug"],
                "package": a["package"],
                "label": a.get("label", ""),
                "version": a.get("version", ""),
            }
            # an app package's content hash (devices/virtual/packages.py)
            | ({"sha256": a["sha256"]} if a.get("sha256") else {})
            for a in env["apps"]
        ]
    except (ValueError, KeyError, TypeError) as exc:
        raise DeviceUnavailable(
            f"Device {serial} gave no environment (seed and apps): {output.strip()[:200]!r}"
        ) from exc
    found = {"seed": seed, "apps": apps}
    level = env.get("level", NATURAL_LEVEL)
    if level != NATURAL_LEVEL:  # an environment at L3 reads as every one before levels
        found["level"] = level
    return found


def device_apps(device, serial: str) -> list[dict[str, Any]]:
    """The apps of the virtual device (slug, package, label, version, and an app package's
    sha256); DeviceUnavailable when it does not say."""
    try:
        output = device.shell(["waypoint", "env"], timeout=10)
    except DEVICE_ERRORS as exc:
        raise DeviceUnavailable(f"Device {serial} did not list its apps: {exc}") from exc
    return _environment(output, serial)["apps"]


def read_environment(device, serial: str) -> dict[str, Any] | None:
    """``{"seed", "apps"}`` of the virtual device; None when the device does not tell."""
    try:
        output = device.shell(["waypoint", "env"], timeout=10)
    except DEVICE_ERRORS:
        return None
    try:
        return _environment(output, serial)
    except DeviceUnavailable:
        return None  # an older virtual device, or a phone: the seed is unknown


def reset_apps(device, serial: str, seed: int, level: int = NATURAL_LEVEL) -> dict[str, Any]:
    """Close every app of the virtual device (their state is gone) and regenerate their data
    from ``seed``, its tasks posed at difficulty ``level`` (STAMP's L1, L2 or L3:
    ``devices/virtual/templates.py``); the environment the device is at afterwards (with
    ``level`` when it is not 3)."""
    command = ["waypoint", "reset", "--seed", str(seed)]
    if level != NATURAL_LEVEL:
        command += ["--level", str(level)]
    try:
        output = device.shell(command, timeout=60)
    except DEVICE_ERRORS as exc:
        raise DeviceUnavailable(f"Device {serial} did not answer the reset: {exc}") from exc
    env = _environment(output, serial)
    if env["seed"] != seed:
        raise DeviceUnavailable(f"Device {serial} reset to seed {env['seed']}, not {seed}.")
    if env.get("level", NATURAL_LEVEL) != level:
        raise DeviceUnavailable(
            f"Device {serial} poses its tasks at level {env.get('level', NATURAL_LEVEL)}, not "
            f"{level} (does its waypoint reset know --level?)"
        )
    return env
