"""Screenshots as images: the import's check, and thumbnails made in bounded memory.

An image is checked by decoding all of it, not only its header: a PNG whose pixel data is
random bytes has a perfect header. Before anything is decoded, each side is held to
``WAYPOINT_MAX_IMAGE_SIDE``, so a huge or hostile image is refused by name instead of costing
memory (Pillow's own ``DecompressionBombError`` is never reached: the format's image class is
opened directly, which reads the header only).
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from django.conf import settings
from PIL import Image, ImageFile, JpegImagePlugin, PngImagePlugin, WebPImagePlugin

from .validation import InvalidData

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"

THUMB_WIDTH = 216
# Rows decoded into a thumbnail at a time, besides the image itself (about 4 MiB at 4,096 RGBA).
STRIP_ROWS = 256

_OPENERS: dict[str, type[ImageFile.ImageFile]] = {
    "image/png": PngImagePlugin.PngImageFile,
    "image/jpeg": JpegImagePlugin.JpegImageFile,
    "image/webp": WebPImagePlugin.WebPImageFile,
}


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


_COMPLETE = {
    "image/png": _png_complete,
    "image/jpeg": lambda d: d.rstrip(b"\x00").endswith(b"\xff\xd9"),
    "image/webp": lambda d: len(d) >= 8 + struct.unpack("<I", d[4:8])[0],
}


def _webp_size(data: bytes) -> tuple[int, int] | None:
    """A WebP's size from its first chunk (Pillow's WebP opener refuses a bomb unnamed)."""
    kind, body = data[12:16], data[20:30]
    if kind == b"VP8X" and len(body) >= 10:
        return 1 + int.from_bytes(body[4:7], "little"), 1 + int.from_bytes(body[7:10], "little")
    if kind == b"VP8L" and len(body) >= 5 and body[0] == 0x2F:
        bits = int.from_bytes(body[1:5], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if kind == b"VP8 " and len(body) >= 10 and body[3:6] == b"\x9d\x01\x2a":
        return (
            int.from_bytes(body[6:8], "little") & 0x3FFF,
            int.from_bytes(body[8:10], "little") & 0x3FFF,
        )
    return None


def _check_side(width: int, height: int, where: str) -> None:
    limit = settings.WAYPOINT_MAX_IMAGE_SIDE
    if max(width, height) > limit:
        raise InvalidData(
            f"{where}: the image is {width}x{height} pixels, over the limit of {limit} pixels "
            "per side (WAYPOINT_MAX_IMAGE_SIDE)"
        )


def open_image(data: bytes, where: str) -> tuple[ImageFile.ImageFile, str]:
    """Open ``data`` by its header only; refuse what is not a whole image of a legal size.

    Returns the (not yet decoded) image and its content type; the caller closes the image.
    """
    if not data:
        raise InvalidData(f"{where}: the image file is empty")
    content_type = sniff_image_type(data)
    if content_type is None:
        raise InvalidData(f"{where}: not an image (expected PNG, JPEG or WebP bytes)")
    if not _COMPLETE[content_type](data):
        raise InvalidData(f"{where}: the image is truncated")
    if content_type == "image/webp" and (size := _webp_size(data)):
        _check_side(*size, where)
    try:
        image = _OPENERS[content_type](io.BytesIO(data))
    except Exception as exc:  # a header Pillow cannot parse, whatever the exception
        raise InvalidData(f"{where}: unreadable image ({exc})") from None
    try:
        _check_side(*image.size, where)
    except InvalidData:
        image.close()
        raise
    return image, content_type


def _decode(image: ImageFile.ImageFile, where: str) -> None:
    try:
        image.load()
    except MemoryError:
        image.close()
        raise
    except Exception as exc:  # broken pixel data surfaces as OSError, SyntaxError, ValueError…
        image.close()
        raise InvalidData(f"{where}: unreadable image ({exc})") from None


def check_image(data: bytes, where: str) -> ImageInfo:
    """Check that ``data`` is a whole PNG, JPEG or WebP image that decodes; return type and size."""
    image, content_type = open_image(data, where)
    _decode(image, where)
    with image:
        return ImageInfo(content_type, *image.size)


def make_thumbnail(data: bytes, width: int = THUMB_WIDTH, where: str = "image") -> bytes:
    """A WebP at most ``width`` wide (and four times as tall), made in bounded memory.

    A JPEG is decoded at a reduced scale (``draft``). Other images are decoded once; the
    reduction then works on strips of :data:`STRIP_ROWS` rows, so no full-size copy (an RGB
    conversion, a premultiplied-alpha copy) is ever made next to the decoded image.
    """
    box = (width, width * 4)
    image, _ = open_image(data, where)
    with image:
        image.draft("RGB", box)
        _decode(image, where)
        scale = max(image.width / box[0], image.height / box[1])
        factor = max(1, int(scale / 2))  # keep twice the final size for a good resample
        rows = factor * max(1, STRIP_ROWS // factor)
        small = Image.new("RGB", (-(-image.width // factor), -(-image.height // factor)))
        try:
            for top in range(0, image.height, rows):
                strip = image.crop((0, top, image.width, min(top + rows, image.height)))
                strip = strip.convert("RGB").reduce(factor)
                small.paste(strip, (0, top // factor))
        except Exception as exc:  # a mode without an RGB conversion, e.g. 16-bit grey
            raise InvalidData(f"{where}: unreadable image ({exc})") from None
    small.thumbnail(box, Image.Resampling.LANCZOS)
    out = io.BytesIO()
    small.save(out, "WEBP", quality=70, method=2)
    return out.getvalue()
