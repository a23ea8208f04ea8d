"""Content-addressed blob storage for screenshots and UI XML.

A blob is named by the sha256 of its bytes and stored once, whatever the number of screens
or trajectories that show it. Storage is Django's default storage (local files or S3).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from .models import Blob


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _save(name: str, data: bytes) -> None:
    if default_storage.exists(name):
        return
    saved = default_storage.save(name, ContentFile(data))
    if saved != name:
        # Another writer stored the same content first; keep one copy.
        default_storage.delete(saved)


def put_blobs(items: Iterable[tuple[bytes, str]]) -> dict[str, Blob]:
    """Store each (bytes, content type) once; return the blobs by sha256.

    Files are written before their rows, so a row never points at a missing file.
    """
    wanted: dict[str, tuple[bytes, str]] = {}
    for data, content_type in items:
        wanted.setdefault(sha256_hex(data), (data, content_type))
    blobs = Blob.objects.in_bulk(list(wanted))
    missing = [
        Blob(sha256=sha, size=len(data), content_type=content_type)
        for sha, (data, content_type) in wanted.items()
        if sha not in blobs
    ]
    for blob in missing:
        _save(blob.storage_name, wanted[blob.sha256][0])
    if missing:
        Blob.objects.bulk_create(missing, ignore_conflicts=True)
        blobs.update({blob.sha256: blob for blob in missing})
    return blobs


def read_blob(blob: Blob) -> bytes:
    with default_storage.open(blob.storage_name, "rb") as handle:
        return handle.read()
