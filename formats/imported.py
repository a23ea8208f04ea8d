"""What the readers of other datasets share: their screenshots, stand-ins for missing ones,
stable ids, typed fields of their JSON and coordinates in their units.

A reader of a public dataset (AndroTMem, AndroidControl, Android in the Wild, GUI-Odyssey)
turns an episode into a :class:`~trajectories.records.TrajectoryRecord`; these helpers keep
their errors worded alike (the file, the record, the field) and their screenshots out of memory
(a screenshot file is checked once and then stood for by its :class:`FileRef`).
"""

from __future__ import annotations

import io
import uuid
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings
from PIL import Image

from trajectories.blobs import sha256_hex
from trajectories.images import ImageInfo, check_image
from trajectories.records import FileRef
from trajectories.validation import fail, field_at, shown

from .archive import read_file

MISSING_SHADE = (128, 128, 128)  # what a step without its screenshot shows: plain grey


def stable_uid(fmt: str, key: str) -> str:
    """The trajectory id of an episode: the same episode gives the same id on every import, so
    importing a dataset again (or resuming one) adds nothing twice."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"waypoint:formats:{fmt}:{key}"))


def as_uid(value: str, fmt: str) -> str:
    """``value`` itself when it is a UUID (a Waypoint export's id), else a stable id for it."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return stable_uid(fmt, value)


def image_file(
    folder: Path, name: str, where: str, checked: dict[Any, Any]
) -> tuple[FileRef, ImageInfo]:
    """A screenshot file of the import, checked once (path, size, whole decode)."""
    key = ("image", name)
    known = checked.get(key)
    if known is None:
        data = read_file(folder, name, where)
        info = check_image(data, f"{where} ({name})")
        known = checked[key] = (FileRef(folder / name, sha256_hex(data), len(data)), info)
    return known


@cache
def missing_screenshot(width: int, height: int) -> bytes:
    """The grey PNG that stands for a screenshot a dataset does not have, at its size."""
    out = io.BytesIO()
    Image.new("RGB", (width, height), MISSING_SHADE).save(out, "PNG")
    return out.getvalue()


def png_of(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


def check_image_side(width: int, height: int, where: str) -> None:
    """Refuse a declared image size past ``WAYPOINT_MAX_IMAGE_SIDE`` before any pixel is read."""
    limit = settings.WAYPOINT_MAX_IMAGE_SIDE
    if not (0 < width <= limit and 0 < height <= limit):
        raise fail(
            where,
            f"the image is {width}x{height} pixels; each side must be 1 to {limit} pixels "
            "(WAYPOINT_MAX_IMAGE_SIDE)",
        )


class Fields:
    """Typed access to a JSON object of a dataset, with errors naming the record and field."""

    def __init__(self, obj: Any, where: str):
        if not isinstance(obj, dict):
            raise fail(where, f"must be an object, got {type(obj).__name__}")
        self.obj = obj
        self.where = where

    def at(self, key: str) -> str:
        return field_at(self.where, key)

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        value = self.obj.get(key)
        if value is None:
            if default is ...:
                raise fail(self.at(key), "is required")
            return default
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            kinds = (kind,) if isinstance(kind, type) else kind
            names = " or ".join(k.__name__ for k in kinds)
            raise fail(self.at(key), f"must be a {names}, got {shown(value)}")
        return value

    def text(self, *keys: str, default: Any = ...) -> str:
        """The first of ``keys`` that holds a non-empty string."""
        for key in keys:
            value = self.get(key, str, "")
            if value:
                return value
        if default is ...:
            raise fail(self.at(keys[0]), "is required")
        return default


def number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise fail(where, f"must be a number, got {shown(value)}")
    return float(value)


def on_screen(value: float, size: int) -> int:
    """A pixel coordinate rounded and kept on a screen of ``size`` pixels."""
    return min(max(int(round(value)), 0), size - 1)
