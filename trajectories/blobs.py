"""Content-addressed blob storage for screenshots and UI XML.

A blob is named by the sha256 of its bytes and stored once, whatever the number of screens
or trajectories that show it. Storage is Django's default storage (local files or S3).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Iterable

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from .models import Blob
from .records import FileRef
from .validation import InvalidData

Content = bytes | FileRef


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_sha(content: Content) -> str:
    """The sha256 of bytes, or the one a checked file was found to have."""
    return content.sha256 if isinstance(content, FileRef) else sha256_hex(content)


def content_bytes(content: Content) -> bytes:
    """The bytes themselves; a checked file is read again and must still match its sha256."""
    if not isinstance(content, FileRef):
        return content
    data = content.path.read_bytes()
    if sha256_hex(data) != content.sha256:
        raise InvalidData(f"{content.path.name}: the file changed while the import ran")
    return data


def _save(name: str, data: bytes) -> None:
    try:
        path = default_storage.path(name)
    except NotImplementedError:  # S3 and the like
        path = None
    if path is not None and getattr(default_storage, "directory_permissions_mode", None) is None:
        _save_local(path, data)
        return
    if default_storage.exists(name):
        return
    saved = default_storage.save(name, ContentFile(data))
    if saved != name:
        # Another writer stored the same content first; keep one copy.
        default_storage.delete(saved)


def _save_local(path: str, data: bytes) -> None:
    """A blob written into local storage under its final name at once (a rename), without
    the storage's search for a free name, which a content-addressed name never needs."""
    if os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    part = f"{path}.{os.getpid()}-{threading.get_ident()}.part"
    try:
        with open(part, "wb") as out:
            out.write(data)
        mode = getattr(default_storage, "file_permissions_mode", None)
        if mode is not None:
            os.chmod(part, mode)
        os.replace(part, path)  # another writer's copy, if any, has the same bytes
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(part)
        raise


def put_blobs(items: Iterable[tuple[Content, str]]) -> dict[str, Blob]:
    """Store each (bytes or checked file, content type) once; return the blobs by sha256.

    Files are written before their rows, so a row never points at a missing file. A checked
    file is read only if its blob is not stored yet.
    """
    wanted: dict[str, tuple[Content, str]] = {}
    for content, content_type in items:
        wanted.setdefault(content_sha(content), (content, content_type))
    blobs = Blob.objects.in_bulk(list(wanted))
    missing = []
    for sha, (content, content_type) in wanted.items():
        if sha in blobs:
            continue
        data = content_bytes(content)
        blob = Blob(sha256=sha, size=len(data), content_type=content_type)
        _save(blob.storage_name, data)
        missing.append(blob)
    if missing:
        Blob.objects.bulk_create(missing, ignore_conflicts=True)
        blobs.update({blob.sha256: blob for blob in missing})
    return blobs


def read_blob(blob: Blob) -> bytes:
    with default_storage.open(blob.storage_name, "rb") as handle:
        return handle.read()
