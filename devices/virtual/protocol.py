"""The ADB transport protocol: 24-byte message headers, payload framing, the CNXN banner.

Reference: system/core/adb/protocol.txt in AOSP. Everything here is pure (no I/O, no Django),
so the device server and the tests share one definition of the wire format.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_AUTH = 0x48545541
A_STLS = 0x534C5453

# Version 0x01000001 lets both sides skip the data checksum; we still compute it when sending.
A_VERSION = 0x01000001
A_VERSION_MIN = 0x01000000
MAX_PAYLOAD = 1024 * 1024
MAX_PAYLOAD_V1 = 4 * 1024

HEADER = struct.Struct("<6I")
COMMAND_NAMES = {
    A_SYNC: "SYNC",
    A_CNXN: "CNXN",
    A_OPEN: "OPEN",
    A_OKAY: "OKAY",
    A_CLSE: "CLSE",
    A_WRTE: "WRTE",
    A_AUTH: "AUTH",
    A_STLS: "STLS",
}

# Only what the device really implements (see services.py and sync.py).
FEATURES = ("shell_v2", "stat_v2", "ls_v2", "fixed_push_mkdir")


class ProtocolError(Exception):
    pass


@dataclass(frozen=True)
class Message:
    command: int
    arg0: int
    arg1: int
    data: bytes = b""

    @property
    def name(self) -> str:
        return COMMAND_NAMES.get(self.command, hex(self.command))

    def __repr__(self) -> str:  # short, for logs
        more = "…" if len(self.data) > 40 else ""
        return f"<{self.name} {self.arg0} {self.arg1} {self.data[:40]!r}{more}>"


def checksum(data: bytes) -> int:
    return sum(data) & 0xFFFFFFFF


def pack(message: Message) -> bytes:
    header = HEADER.pack(
        message.command,
        message.arg0,
        message.arg1,
        len(message.data),
        checksum(message.data),
        message.command ^ 0xFFFFFFFF,
    )
    return header + message.data


def unpack_header(header: bytes) -> tuple[int, int, int, int, int]:
    """Return (command, arg0, arg1, data_length, data_check); raise on a corrupt header."""
    command, arg0, arg1, length, check, magic = HEADER.unpack(header)
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad magic in header {header.hex()}")
    if command not in COMMAND_NAMES:
        raise ProtocolError(f"unknown command {command:#x}")
    return command, arg0, arg1, length, check


def device_banner(properties: dict[str, str], features: tuple[str, ...] = FEATURES) -> bytes:
    """The CNXN payload a phone's adbd sends: ``device::key=value;...;features=a,b``."""
    props = "".join(f"{key}={value};" for key, value in properties.items())
    return f"device::{props}features={','.join(features)}".encode()


def parse_host_banner(data: bytes) -> tuple[str, set[str]]:
    """Split ``host::features=a,b`` into (system type, features)."""
    text = data.rstrip(b"\0").decode(errors="replace")
    system, _, rest = text.partition("::")
    features: set[str] = set()
    for item in rest.split(";"):
        key, _, value = item.partition("=")
        if key == "features":
            features = {f for f in value.split(",") if f}
    return system, features
