"""The limits on what one import, upload or benchmark may hold: their settings' names, defaults
and environment variables, in one place.

``config.settings`` takes them from here, and so does the evaluator's light entry point
(``python -m evaluation``), which starts with these settings alone instead of the whole site's.
"""

from __future__ import annotations

import os
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
