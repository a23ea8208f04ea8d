"""What the device shows: screenshot and UI XML captured concurrently, and settle detection.

On the virtual device, ``waypoint screen-version`` changes whenever the screen does (-1 while
animating): the screen has settled when two reads an interval apart agree, and a capture is
consistent when the version is the same before and after it. On a phone, the screen has
settled when two consecutive screenshots are identical; the last one is the capture.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

import adbutils
from django.conf import settings
from django.utils import timezone

from .adb import DeviceFacts, run_shell

_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="capture")
_FOCUS_RE = re.compile(r"(?:mCurrentFocus|mFocusedApp)=\S+\{\S+ \S+ ([\w.]+)/([\w.$]+)")
_META_SEPARATOR = "@@waypoint@@"
CONSISTENT_ATTEMPTS = 3


class CaptureError(Exception):
    """The device answered with something that is not a screen."""


@dataclass
class Settle:
    ms: int
    timed_out: bool
    at: datetime
    version: int | None = None  # the virtual device's screen version when it settled
    png: bytes | None = None  # a phone's last screenshot (already the capture)


@dataclass
class Capture:
    png: bytes
    xml: str
    width: int
    height: int
    package: str = ""
    activity: str = ""
    captured_at: datetime = field(default_factory=timezone.now)
    visible_memory: list[dict] | None = None  # virtual device only
    version: int | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.png).hexdigest()


def png_size(png: bytes) -> tuple[int, int]:
    if not png.startswith(b"\x89PNG\r\n\x1a\n") or len(png) < 24:
        raise CaptureError(f"the device sent no PNG screenshot ({png[:40]!r})")
    return struct.unpack(">II", png[16:24])


def screenshot_png(device: adbutils.AdbDevice) -> bytes:
    return run_shell(device, ["screencap", "-p"], encoding=None, timeout=30)


TTY_DUMPED = "UI hierchary dumped to: /dev/tty"  # sic: what uiautomator prints after the XML


def dump_xml(device: adbutils.AdbDevice) -> str:
    """The UI hierarchy, as ``uiautomator dump /dev/tty`` prints it (one command, no file to
    pull), else as adbutils gets it (a dump to a file, then a pull) on a phone whose uiautomator
    cannot write to the terminal."""
    out = run_shell(device, ["uiautomator", "dump", "/dev/tty"], timeout=30)
    if out.startswith("<?xml") and out.endswith(TTY_DUMPED):
        return out.removesuffix(TTY_DUMPED)
    return device.dump_hierarchy()


def screen_version(device: adbutils.AdbDevice) -> int:
    out = run_shell(device, ["waypoint", "screen-version"], timeout=10).strip()
    try:
        return int(out)
    except ValueError:
        raise CaptureError(f"waypoint screen-version answered {out!r}") from None


def parse_focus(text: str) -> tuple[str, str]:
    """(package, activity) of the focused window from ``dumpsys window`` lines."""
    found = _FOCUS_RE.search(text)
    if not found:
        return "", ""
    package, activity = found.groups()
    if activity.startswith(package + "."):
        activity = activity[len(package) :]
    return package, activity


def _meta(device: adbutils.AdbDevice, virtual: bool) -> tuple[str, str, list[dict] | None]:
    focus = "dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'"
    if not virtual:
        package, activity = parse_focus(run_shell(device, focus, timeout=10))
        return package, activity, None
    out = run_shell(device, f"waypoint visible-vars; echo {_META_SEPARATOR}; {focus}", timeout=10)
    variables, _, focus_out = out.partition(_META_SEPARATOR)
    try:
        visible = json.loads(variables.strip() or "[]")
    except json.JSONDecodeError:
        visible = None
    package, activity = parse_focus(focus_out)
    return package, activity, visible


def capture(
    device: adbutils.AdbDevice, facts: DeviceFacts, settle: Settle | None = None
) -> Capture:
    """Screenshot, UI XML, foreground app (and visible memory variables) of one screen state."""
    version = settle.version if settle else None
    if facts.virtual and version is None:
        version = screen_version(device)
    for _attempt in range(CONSISTENT_ATTEMPTS):
        png_future = None if settle and settle.png else _pool.submit(screenshot_png, device)
        xml_future = _pool.submit(dump_xml, device)
        package, activity, visible = _meta(device, facts.virtual)
        png = settle.png if png_future is None else png_future.result()
        xml = xml_future.result()
        captured_at = timezone.now()
        if not facts.virtual:
            break
        after = screen_version(device)
        if after > 0 and after == version:
            break
        version = after  # the screen moved during the capture: take it again
    width, height = png_size(png)
    return Capture(
        png=png,
        xml=xml,
        width=width,
        height=height,
        package=package,
        activity=activity,
        captured_at=captured_at,
        visible_memory=visible,
        version=version,
    )


def wait_until_settled(
    device: adbutils.AdbDevice,
    facts: DeviceFacts,
    interval: float | None = None,
    timeout: float | None = None,
) -> Settle:
    """Wait until two reads ``interval`` apart agree, or ``timeout`` seconds have passed."""
    if interval is None:
        # The virtual device's screen version moves on every change and reads -1 while
        # anything animates or loads, so a short interval is enough there; a phone's probe is a
        # whole screenshot, compared byte for byte.
        interval = (
            settings.WAYPOINT_VIRTUAL_SETTLE_INTERVAL_MS
            if facts.virtual
            else settings.WAYPOINT_SETTLE_INTERVAL_MS
        ) / 1000
    if timeout is None:
        timeout = settings.WAYPOINT_SETTLE_TIMEOUT_MS / 1000
    start = time.monotonic()

    def probe():
        return screen_version(device) if facts.virtual else screenshot_png(device)

    previous = probe()
    while True:
        time.sleep(interval)
        current = probe()
        now = time.monotonic()
        stable = current == previous and (not facts.virtual or current > 0)
        if stable or now - start >= timeout:
            return Settle(
                ms=int((now - start) * 1000),
                timed_out=not stable,
                at=timezone.now(),
                version=current if facts.virtual else None,
                png=None if facts.virtual else current,
            )
        previous = current
