"""Content-addressed blob storage for screenshots and UI XML.

A blob is named by the sha256 of its bytes and stored once, whatever the number of screens
or trajectories that show it. Storage is Django's default storage (local files or S3).
"""

from __future__ import annotations

import hashlib
import io
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from PIL import Image, UnidentifiedImageError

from .models import Blob
from .validation import InvalidData

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sniff_image_type(data: bytes) -> str | None:
    """The image type by content (a DroidBot ``.png`` may hold JPEG bytes)."""
    if data.startswith(PNG_MAGIC):
        return "image/png"
    if data.startswith(JPEG_MAGIC):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass(frozen=True)
class ImageInfo:
    content_type: str
    width: int
    height: int


def _png_complete(data: bytes) -> bool:
    # Walk the chunks: a truncated PNG ends before its IEND chunk.
    pos = len(PNG_MAGIC)
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        pos += 12 + length
        if kind == b"IEND":
            return pos <= len(data)
    return False


def check_image(data: bytes, where: str) -> ImageInfo:
    """Check that ``data`` is a whole PNG, JPEG or WebP image; return its type and size."""
    if not data:
        raise InvalidData(f"{where}: the image file is empty")
    content_type = sniff_image_type(data)
    if content_type is None:
        raise InvalidData(f"{where}: not an image (expected PNG, JPEG or WebP bytes)")
    complete = {
        "image/png": _png_complete,
        "image/jpeg": lambda d: d.rstrip(b"\x00").endswith(b"\xff\xd9"),
        "image/webp": lambda d: len(d) >= 8 + struct.unpack("<I", d[4:8])[0],
    }[content_type]
    if not complete(data):
        raise InvalidData(f"{where}: the image is truncated")
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise InvalidData(f"{where}: unreadable image ({exc})") from exc
    return ImageInfo(content_type, width, height)


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
