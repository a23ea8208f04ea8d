"""A throwaway Django set-up for a benchmark: a SQLite database and blob folder in a new
temporary folder (unless DATABASE_URL / MEDIA_ROOT say otherwise), migrated."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def scratch_django(prefix: str) -> Path:
    """Set Django up on a scratch database; returns the work folder."""
    sys.path.insert(0, str(REPO))
    work = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{work / 'bench.sqlite3'}")
    os.environ.setdefault("MEDIA_ROOT", str(work / "media"))
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    call_command("migrate", verbosity=0, interactive=False)
    return work
