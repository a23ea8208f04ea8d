"""The limits on what one import, upload or benchmark may hold: their settings' names, defaults
and environment variables, in one place.

``config.settings`` takes them from here. The code reads them through :func:`limit`: Django's
setting where Django's settings are in use (the site, the workers, the tests, which may override
one), else the environment's, as the settings would read it: the evaluator from the shell
(``python -m evaluation``) starts without Django, and importing ``django.conf`` alone (asyncio
and 60 other modules) was a tenth of its run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from django.core.exceptions import ImproperlyConfigured

# name (setting and environment variable) -> default
DEFAULTS: dict[str, int] = {
    # Import limits, in bytes.
    "WAYPOINT_MAX_UPLOAD_BYTES": 2 * 1024**3,
    "WAYPOINT_MAX_FILE_BYTES": 64 * 1024**2,
    # An archive may unpack to at most this many bytes, and to at most this many times its own
    # size.
    "WAYPOINT_MAX_UNPACKED_BYTES": 4 * 1024**3,
    "WAYPOINT_MAX_UNPACK_RATIO": 100,
    # Members (files and folders) an imported archive may hold: an export holds two per
    # distinct screen; millions of empty files would pass the size limits.
    "WAYPOINT_MAX_ARCHIVE_MEMBERS": 200_000,
    # Imported images are decoded in full; neither side may exceed this many pixels.
    "WAYPOINT_MAX_IMAGE_SIDE": 4096,
    # Benchmark sizes, counted from a request (templates x seeds x attempts, a suite
    # document's instances) before any instance is posed: episodes one agent run may play
    # (the 60 templates at 20 seeds, 5 attempts each), and instances one suite may hold (the
    # 60 templates at 50 seeds; importing one poses each of them in the request).
    "WAYPOINT_MAX_RUN_EPISODES": 6_000,
    "WAYPOINT_MAX_SUITE_INSTANCES": 3_000,
}


def read_limits(environ: Mapping[str, str] | None = None) -> dict[str, int]:
    """Each limit from its environment variable, else its default; a value that is no integer
    is refused by name."""
    environ = os.environ if environ is None else environ
    limits = {}
    for name, default in DEFAULTS.items():
        raw = environ.get(name)
        if raw is None or raw.strip() == "":
            limits[name] = default
            continue
        try:
            limits[name] = int(raw)
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc
    return limits


def limit(name: str) -> int:
    """The limit ``name`` (one of :data:`DEFAULTS`) in force in this process."""
    conf = sys.modules.get("django.conf")  # Django in use: its settings, overrides and all
    if conf is not None and conf.settings.configured:
        return getattr(conf.settings, name)
    return read_limits()[name]
