"""TFRecord files read (and written) a record at a time, with every check of the framing, no
TensorFlow.

A TFRecord file (GZIP-compressed or not) is a run of records, each::

    uint64 length (little-endian) · uint32 masked CRC-32C of those 8 bytes ·
    data (length bytes) · uint32 masked CRC-32C of the data

(TensorFlow's ``core/lib/io/record_writer``). Records are read one at a time from the
decompressing stream, so memory holds one record whatever the file's size. A length past
``WAYPOINT_MAX_FILE_BYTES`` is refused before it is read, as is a file that inflates past
``WAYPOINT_MAX_UNPACKED_BYTES`` at more than ``WAYPOINT_MAX_UNPACK_RATIO`` times its own size
(a gzip bomb); a wrong checksum, a file that ends inside a record and damaged compression are
refused naming the file and the record.
Each record of AndroidControl and Android in the Wild is a ``tf.train.Example``
(:data:`formats.protos.Example`); :func:`features` reads one with its fields checked.
:class:`TFRecordWriter` writes the same framing, GZIP-compressed as the datasets ship it.
"""

from __future__ import annotations

import gzip
import re
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import google_crc32c

from core.limits import limit as current_limit
from trajectories.bounds import human_size
from trajectories.validation import InvalidData, fail

from .protos import DecodeError, Example

GZIP_MAGIC = b"\x1f\x8b"
MASK_DELTA = 0xA282EAD8
# Shard names as Google's datasets are published: "android_control-00003-of-00020",
# "general-00000-of-00321", with or without a suffix.
SHARD_RE = re.compile(r"-\d{5}-of-\d{5}(\.[A-Za-z0-9.]+)?$")
SUFFIXES = (".tfrecord", ".tfrecords", ".tfrecord.gz", ".tfrecords.gz")


def masked_crc(data: bytes) -> int:
    """TFRecord's checksum: CRC-32C rotated right by 15 bits plus a constant."""
    crc = google_crc32c.value(data)
    return ((crc >> 15 | crc << 17) + MASK_DELTA) & 0xFFFFFFFF


def framed(data: bytes) -> bytes:
    """One record as a TFRecord file holds it: length, its masked CRC, data, the data's."""
    length = struct.pack("<Q", len(data))
    return b"".join(
        (length, struct.pack("<I", masked_crc(length)), data, struct.pack("<I", masked_crc(data)))
    )


class TFRecordWriter:
    """Writes records into an open binary file, GZIP-compressed unless ``compress`` is False.

    The gzip header names no file and no time, so the same records give the same bytes."""

    def __init__(self, handle: IO[bytes], *, compress: bool = True):
        self._gzip = (
            gzip.GzipFile(filename="", fileobj=handle, mode="wb", mtime=0) if compress else None
        )
        self._out: IO[bytes] = self._gzip if self._gzip is not None else handle
        self.records = 0

    def write(self, data: bytes) -> None:
        self._out.write(framed(data))
        self.records += 1

    def close(self) -> None:
        """Ends the compressed stream (the file itself stays open: it is the caller's)."""
        if self._gzip is not None:
            self._gzip.close()


def is_tfrecord_name(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith(SUFFIXES) or bool(SHARD_RE.search(base))


def tfrecord_files(folder: Path) -> list[Path]:
    """The TFRecord files of an import folder, at any depth, in name order."""
    return sorted(
        (p for p in folder.rglob("*") if p.is_file() and is_tfrecord_name(p.name)),
        key=lambda p: p.relative_to(folder).as_posix(),
    )


class _Counted:
    """A file object that counts the bytes read through it (the compressed size so far), its
    first bytes (read to tell gzip) given back first."""

    def __init__(self, raw: IO[bytes], head: bytes):
        self.raw, self.head, self.read_bytes = raw, head, 0

    def read(self, size: int = -1) -> bytes:
        head, self.head = self.head, b""
        if size >= 0 and len(head) >= size:
            head, self.head = head[:size], head[size:]
            data = head
        else:
            data = head + self.raw.read(-1 if size < 0 else size - len(head))
        self.read_bytes += len(data)
        return data


def records(path: Path, name: str, *, check: bool = True) -> Iterator[tuple[int, bytes]]:
    """(number from 1, data) of every record of a TFRecord file; ``check`` False skips the
    checksums (counting records needs only the lengths)."""
    with open(path, "rb") as raw:
        yield from read_records(raw, name, check=check)


def read_records(raw: IO[bytes], name: str, *, check: bool = True) -> Iterator[tuple[int, bytes]]:
    """:func:`records` of an open stream (a file, an archive's member)."""
    head = raw.read(2)
    compressed = head == GZIP_MAGIC
    counted = _Counted(raw, head)
    stream: Any = gzip.GzipFile(fileobj=counted, mode="rb") if compressed else counted
    inflated = 0
    number = 0
    while True:
        number += 1
        where = f"{name} record {number}"
        try:
            header = _read(stream, 12, where)
            if header is None:
                return
            (length,) = struct.unpack("<Q", header[:8])
            if check and struct.unpack("<I", header[8:])[0] != masked_crc(header[:8]):
                raise InvalidData(f"{where}: the checksum of its length is wrong")
            limit = current_limit("WAYPOINT_MAX_FILE_BYTES")
            if length > limit:
                raise InvalidData(
                    f"{where}: the record is {human_size(length)}, over the limit of "
                    f"{human_size(limit)} (WAYPOINT_MAX_FILE_BYTES)"
                )
            body = _read(stream, length + 4, where, required=True)
            assert body is not None
        except (EOFError, OSError, zlib.error) as exc:
            raise InvalidData(f"{where}: the gzip stream is damaged ({exc})") from None
        data = body[:length]
        if check and struct.unpack("<I", body[length:])[0] != masked_crc(data):
            raise InvalidData(f"{where}: the checksum of its data is wrong")
        inflated += length + 16
        if compressed:
            _check_ratio(inflated, counted.read_bytes, name)
        yield number, data


def first_record(raw: IO[bytes], name: str) -> bytes | None:
    """The first record of a stream (None when it has none), its framing checked."""
    return next((data for _, data in read_records(raw, name)), None)


def _read(stream: Any, size: int, where: str, *, required: bool = False) -> bytes | None:
    data = stream.read(size)
    if not data and not required:
        return None
    if len(data) < size:
        raise InvalidData(f"{where}: truncated (the file ends inside the record)")
    return data


def _check_ratio(inflated: int, compressed_so_far: int, name: str) -> None:
    """A gzip bomb costs a streaming reader time, not memory (one record, at most
    ``WAYPOINT_MAX_FILE_BYTES``): a stream is refused for its ratio once it has inflated past
    ``WAYPOINT_MAX_UNPACKED_BYTES``. Below that the ratio says nothing: the raw pixels of an
    app's flat screens deflate 185 to 350 times (a virtual device's, measured; a phone's
    photos and lists 5 to 50), so a ratio from the first bytes refused a Waypoint ``aitw``
    export of its own recordings."""
    ratio = current_limit("WAYPOINT_MAX_UNPACK_RATIO")
    floor = current_limit("WAYPOINT_MAX_UNPACKED_BYTES")
    if inflated > ratio * max(compressed_so_far, 1) and inflated > floor:
        raise InvalidData(
            f"{name}: inflates to at least {human_size(inflated)} from "
            f"{human_size(compressed_so_far)}; the limit is {ratio} times "
            "(WAYPOINT_MAX_UNPACK_RATIO)"
        )


def parse_example(data: bytes, where: str) -> Any:
    """A record as a ``tf.train.Example``."""
    try:
        return Example.FromString(data)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise InvalidData(f"{where}: not a tf.train.Example ({exc or 'undecodable'})") from None


class Features:
    """The feature map of a ``tf.train.Example``, read by name and kind with errors naming the
    record and the feature."""

    KINDS = {"bytes": "bytes_list", "float": "float_list", "int64": "int64_list"}

    def __init__(self, example: Any, where: str):
        self.map = example.features.feature
        self.where = where

    def has(self, key: str) -> bool:
        return key in self.map

    def values(self, key: str, kind: str, *, required: bool = True) -> list[Any]:
        if key not in self.map:
            if required:
                raise fail(f"{self.where}: {key}", "feature is missing")
            return []
        feature = self.map[key]
        found = feature.WhichOneof("kind")
        if found is None:
            return []
        if found != self.KINDS[kind]:
            raise fail(
                f"{self.where}: {key}",
                f"must be a {self.KINDS[kind]}, got a {found}",
            )
        return list(getattr(feature, found).value)

    def one(self, key: str, kind: str, default: Any = ...) -> Any:
        values = self.values(key, kind, required=default is ...)
        if not values:
            if default is ...:
                raise fail(f"{self.where}: {key}", "has no value")
            return default
        return values[0]

    def text(self, key: str, default: Any = ...) -> str:
        value = self.one(key, "bytes", default)
        if not isinstance(value, bytes):
            return value
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise fail(f"{self.where}: {key}", f"not UTF-8 text ({exc.reason})") from None
