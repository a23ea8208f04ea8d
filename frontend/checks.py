"""System checks of what pages need to be drawn at all (``manage.py check``, ``--deploy``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.staticfiles.storage import ManifestFilesMixin
from django.core.checks import Error, register
from django.core.files.storage import storages

# Not Tags.staticfiles: collectstatic runs those checks, and it is what writes the manifest.
STATIC_FILES_COLLECTED = "static_files_collected"


@register(STATIC_FILES_COLLECTED)
def static_files_are_collected(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """With DEBUG off, a manifest storage names each static file from collectstatic's manifest:
    without it every page that names one (all of them) fails with a 500."""
    if settings.DEBUG:
        return []
    storage = storages["staticfiles"]
    if not isinstance(storage, ManifestFilesMixin):
        return []
    manifest = storage.manifest_storage
    if manifest.exists(storage.manifest_name):
        return []
    try:
        where = manifest.path(storage.manifest_name)
    except NotImplementedError:  # a remote storage: the name is all there is
        where = storage.manifest_name
    return [
        Error(
            "static files are not collected: run `manage.py collectstatic --noinput` "
            f"(the manifest {where} is missing)",
            id="frontend.E001",
        )
    ]
