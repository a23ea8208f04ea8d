"""The live view: the device's latest frame, taken again only when the screen changed.

Frames are shared by every watcher of a device in this process. On the virtual device a
frame is re-taken only when ``waypoint screen-version`` moved; on a phone at most once per
half poll interval, whoever asks.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings

from .capture import screen_version, screenshot_png

if TYPE_CHECKING:
    from .recording import Connected


@dataclass(frozen=True)
class Frame:
    png: bytes
    sha256: str
    version: int | None
    taken: float  # time.monotonic()

    @property
    def etag(self) -> str:
        return f'"{self.sha256}"'


_frames: dict[str, Frame] = {}
_frame_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


def remember_frame(serial: str, png: bytes, version: int | None) -> None:
    """A screen just captured (a recorded step's result) is the live view's next frame: the
    console's poll right after the step gets it without another screenshot."""
    frame = Frame(png, hashlib.sha256(png).hexdigest(), version, time.monotonic())
    with _guard:
        _frames[serial] = frame


def latest_frame(conn: Connected) -> Frame:
    serial = conn.device.serial
    with _guard:
        lock = _frame_locks.setdefault(serial, threading.Lock())
    with lock:  # one screenshot at a time per device, however many watchers
        cached = _frames.get(serial)
        version = screen_version(conn.device) if conn.facts.virtual else None
        if cached is not None:
            if version is not None and version > 0 and version == cached.version:
                return cached
            fresh_for = settings.WAYPOINT_LIVE_FRAME_MS / 2000
            if version is None and time.monotonic() - cached.taken < fresh_for:
                return cached
        png = screenshot_png(conn.device)
        frame = Frame(png, hashlib.sha256(png).hexdigest(), version, time.monotonic())
        _frames[serial] = frame
        return frame
