"""How Waypoint finds and starts Chromium (the virtual device's screen, browser tests, benchmarks).

The machines Waypoint runs on may have no internet: without these flags Chromium keeps trying
to reach its update and sync services, and as root it needs ``--no-sandbox``.

This module imports nothing from Django, so ``config.provision`` can use it before Waypoint is
configured.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

SYSTEM_NAMES = ("chromium", "chromium-browser")


def playwright_browsers_dir() -> Path:
    """Where ``playwright install`` puts its browsers (its own default unless overridden)."""
    configured = os.getenv("PLAYWRIGHT_BROWSERS_PATH", "")
    if configured and configured != "0":
        return Path(configured)
    return Path.home() / ".cache" / "ms-playwright"


def playwright_chromium() -> str:
    """The newest Chromium that ``playwright install chromium`` left on this machine, or ""."""
    found = sorted(
        playwright_browsers_dir().glob("chromium-*/chrome-linux*/chrome"),
        key=lambda p: int(p.parts[-3].rpartition("-")[2] or 0),
    )
    return str(found[-1]) if found else ""


def find_chromium() -> tuple[str, str]:
    """``(path, where it came from)``: CHROMIUM_PATH, else the system's, else Playwright's.

    ``("", "")`` when there is none. A CHROMIUM_PATH that names no executable is returned as it
    is, so the caller can say exactly what is wrong with it.
    """
    configured = os.getenv("CHROMIUM_PATH", "")
    if configured:
        return configured, "CHROMIUM_PATH"
    for name in SYSTEM_NAMES:
        path = shutil.which(name)
        if path:
            return path, "system"
    path = playwright_chromium()
    if path:
        return path, "Playwright"
    return "", ""
