"""What the embedded virtual device says about itself, for `make run` and the devices page.

``manage.py virtual_device --status-file PATH`` writes a small JSON file as it starts, comes up,
fails or stops. `make run` waits on it to tell the terminal whether the device came up, and the
devices page reads it to say why the device is missing rather than show an empty list.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

STARTING, READY, FAILED, STOPPED = "starting", "ready", "failed", "stopped"


@dataclass(frozen=True)
class VirtualDeviceStatus:
    state: str
    serial: str = ""
    detail: str = ""  # the error of a failed start, or the apps of a ready device
    pid: int = 0

    @property
    def problem(self) -> str:
        """Why the device is not there, in a user's words ("" when nothing is wrong)."""
        if self.state == FAILED:
            reason = self.detail.removeprefix("the virtual device failed to start: ")
            return f"the virtual device failed to start: {reason}"
        if self.state in (STARTING, READY) and self.pid and not process_alive(self.pid):
            return "the virtual device stopped unexpectedly (its log is var/virtual_device.log)"
        if self.state == STARTING:
            return "the virtual device is still starting; reload the page in a moment"
        if self.state == STOPPED:
            return "the virtual device was stopped"
        return ""


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but someone else's
        return True
    return True


def write_status(path: Path, state: str, serial: str = "", detail: str = "") -> None:
    """Replace the status file atomically, so a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"state": state, "serial": serial, "detail": detail, "pid": os.getpid()}
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(body), encoding="utf-8")
    partial.replace(path)


def read_status(path: Path) -> VirtualDeviceStatus | None:
    """The last status written, or None when there is none (or it cannot be read)."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        return VirtualDeviceStatus(
            state=str(body["state"]),
            serial=str(body.get("serial", "")),
            detail=str(body.get("detail", "")),
            pid=int(body.get("pid", 0)),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def wait_for_status(path: Path, timeout: float, pid: int = 0) -> VirtualDeviceStatus | None:
    """Poll until the device is ready, failed or gone; returns the last status seen.

    With ``pid``, only what that process wrote counts (not a file an earlier run left), and the
    wait ends early when the process has died without a word.
    """
    deadline = time.monotonic() + timeout
    while True:
        status = read_status(path)
        if status and pid and status.pid != pid:
            status = None
        if status and (status.state != STARTING or not process_alive(status.pid)):
            return status
        if pid and not process_alive(pid):
            return status or VirtualDeviceStatus(FAILED, detail="it exited at once", pid=pid)
        if time.monotonic() >= deadline:
            return status
        time.sleep(0.25)
