"""Test fixtures in the Google datasets' wire formats, encoded by hand from the published schemas.

Nothing here uses Waypoint's readers or its protobuf declarations: a ``tf.train.Example`` and an
android_env ``AndroidAccessibilityForest`` are written field number by field number as the
``.proto`` files give them (protobuf's wire format: varints, length-delimited fields, packed
repeated scalars), and TFRecord framing with a CRC-32C computed bit by bit, so a fixture that the
readers accept says that they read the datasets' own layout.
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Iterable
from pathlib import Path


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), bit by bit."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data: bytes) -> int:
    crc = crc32c(data)
    return ((crc >> 15 | crc << 17) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """One TFRecord: length, masked CRC of the length, data, masked CRC of the data."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked(length)) + data + struct.pack("<I", masked(data))


def write_tfrecord(path: Path, records: Iterable[bytes], *, compress: bool = True) -> Path:
    body = b"".join(frame(r) for r in records)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(body, mtime=0) if compress else body)
    return path


# ---------------------------------------------------------------- protobuf wire format


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int32/int64 are ten bytes, as protobuf writes them
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def field_bytes(number: int, data: bytes) -> bytes:
    return tag(number, 2) + varint(len(data)) + data


def field_varint(number: int, value: int) -> bytes:
    return tag(number, 0) + varint(value) if value else b""


def field_text(number: int, text: str) -> bytes:
    return field_bytes(number, text.encode("utf-8")) if text else b""


# ---------------------------------------------------------------- tf.train.Example


def bytes_feature(*values: bytes) -> bytes:
    return field_bytes(1, b"".join(field_bytes(1, v) for v in values))  # Feature.bytes_list


def int64_feature(*values: int) -> bytes:
    packed = b"".join(varint(v) for v in values)
    return field_bytes(3, field_bytes(1, packed))  # Feature.int64_list, packed value


def float_feature(*values: float) -> bytes:
    packed = b"".join(struct.pack("<f", v) for v in values)
    return field_bytes(2, field_bytes(1, packed))  # Feature.float_list, packed value


def example(features: dict[str, bytes]) -> bytes:
    """Example{features: Features{feature: map<string, Feature>}}; values are encoded Features."""
    entries = b"".join(
        field_bytes(1, field_text(1, key) + field_bytes(2, value))
        for key, value in features.items()
    )
    return field_bytes(1, entries)


# ---------------------------------------------------------------- android_env a11y forest


def node(
    unique_id: int,
    bounds: tuple[int, int, int, int],
    *,
    class_name: str = "android.widget.FrameLayout",
    text: str = "",
    content_description: str = "",
    package: str = "com.example.shop",
    resource_id: str = "",
    clickable: bool = False,
    enabled: bool = True,
    children: tuple[int, ...] = (),
    hint: str = "",
) -> bytes:
    """AndroidAccessibilityNodeInfo with the fields the dataset fills."""
    left, top, right, bottom = bounds
    rect = field_varint(1, left) + field_varint(2, top)
    rect += field_varint(3, right) + field_varint(4, bottom)
    out = field_varint(1, unique_id) + field_bytes(2, rect)
    out += field_text(3, class_name) + field_text(4, content_description)
    out += field_text(5, hint) + field_text(6, package) + field_text(7, text)
    out += field_text(10, resource_id) + field_varint(14, clickable) + field_varint(16, enabled)
    out += field_varint(23, True)  # is_visible_to_user
    if children:
        out += field_bytes(25, b"".join(varint(c) for c in children))
    return out


def window(nodes: list[bytes], *, layer: int = 0, window_type: int = 1, active: bool = True):
    """AndroidAccessibilityWindowInfo; window_type 1 is TYPE_APPLICATION, 2 TYPE_INPUT_METHOD."""
    tree = b"".join(field_bytes(1, n) for n in nodes)
    out = field_varint(4, layer) + field_varint(6, window_type) + field_varint(8, active)
    return out + field_bytes(11, tree)


def forest(*windows: bytes) -> bytes:
    return b"".join(field_bytes(1, w) for w in windows)
