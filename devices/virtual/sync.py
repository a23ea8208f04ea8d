"""The ``sync:`` service (file transfer): STAT, STA2/LST2, LIST, LIS2, RECV, SEND, QUIT.

Requests are ``id(4) + length(4, LE) + path``; see AOSP's adb/file_sync_protocol.h.
"""

from __future__ import annotations

import errno
import posixpath
import stat
import struct

from devices.virtual.fs import FsError, MemoryFS
from devices.virtual.transport import Stream

SYNC_DATA_MAX = 64 * 1024
STAT_V1 = struct.Struct("<4sIII")
STAT_V2 = struct.Struct(
    "<4sIQQIIIIQqqq"
)  # id, error, dev, ino, mode, nlink, uid, gid, size, a/m/ctime
DENT_V1 = struct.Struct("<4sIIII")
DENT_V2 = struct.Struct("<4sIQQIIIIQqqqI")
SHELL_UID = 2000


def _stat_v2(tag: bytes, entry, error: int = 0) -> bytes:
    if entry is None:
        return STAT_V2.pack(tag, error or errno.ENOENT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    return STAT_V2.pack(
        tag, 0, 0, id(entry) & 0xFFFFFFFF, entry.mode, 1, SHELL_UID, SHELL_UID, entry.size,
        entry.mtime, entry.mtime, entry.mtime,
    )  # fmt: skip


async def _fail(stream: Stream, message: str) -> None:
    data = message.encode()
    await stream.write(b"FAIL" + struct.pack("<I", len(data)) + data)


async def serve_sync(stream: Stream, fs: MemoryFS) -> None:
    while True:
        request = await stream.read_exactly(8)
        tag, length = request[:4], struct.unpack("<I", request[4:])[0]
        if tag == b"QUIT":
            return
        if length > 1024 * 4:
            await _fail(stream, "path too long")
            return
        path = (await stream.read_exactly(length)).decode(errors="replace")
        if tag == b"STAT":
            entry = fs.stat(path)
            if entry is None:
                await stream.write(STAT_V1.pack(b"STAT", 0, 0, 0))
            else:
                await stream.write(STAT_V1.pack(b"STAT", entry.mode, entry.size, entry.mtime))
        elif tag in (b"STA2", b"LST2"):
            await stream.write(_stat_v2(tag, fs.stat(path)))
        elif tag in (b"LIST", b"LIS2"):
            await _list(stream, fs, path, v2=tag == b"LIS2")
        elif tag == b"RECV":
            await _recv(stream, fs, path)
        elif tag == b"SEND":
            await _send(stream, fs, path)
        else:
            await _fail(stream, f"unknown sync command {tag!r}")
            return


async def _list(stream: Stream, fs: MemoryFS, path: str, v2: bool) -> None:
    try:
        children = fs.listdir(path) if fs.is_dir(path) else []
    except FsError:
        children = []
    out = bytearray()
    entries = [(".", fs.stat(path)), ("..", fs.stat(posixpath.dirname(path) or "/"))]
    entries = [(n, e) for n, e in entries if e is not None] if children or fs.is_dir(path) else []
    for name, entry in entries + children:
        raw = name.encode()
        if v2:
            out += DENT_V2.pack(
                b"DNT2", 0, 0, id(entry) & 0xFFFFFFFF, entry.mode, 1, SHELL_UID, SHELL_UID,
                entry.size, entry.mtime, entry.mtime, entry.mtime, len(raw),
            )  # fmt: skip
        else:
            out += DENT_V1.pack(b"DENT", entry.mode, entry.size, entry.mtime, len(raw))
        out += raw
    if v2:
        out += DENT_V2.pack(b"DONE", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    else:
        out += DENT_V1.pack(b"DONE", 0, 0, 0, 0)
    await stream.write(bytes(out))


async def _recv(stream: Stream, fs: MemoryFS, path: str) -> None:
    try:
        data = fs.read(path)
    except FsError as exc:
        await _fail(stream, exc.reason)
        return
    out = bytearray()
    for start in range(0, len(data), SYNC_DATA_MAX):
        chunk = data[start : start + SYNC_DATA_MAX]
        out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
        if len(out) >= 4 * SYNC_DATA_MAX:
            await stream.write(bytes(out))
            out.clear()
    out += b"DONE" + struct.pack("<I", 0)
    await stream.write(bytes(out))


async def _send(stream: Stream, fs: MemoryFS, spec: str) -> None:
    path, _, mode_text = spec.rpartition(",")
    if not path:
        path, mode_text = spec, str(stat.S_IFREG | 0o644)
    try:
        mode = int(mode_text)
    except ValueError:
        mode = stat.S_IFREG | 0o644
    if stat.S_ISLNK(mode):
        await _fail(stream, "symlinks are not supported")
        return
    chunks = bytearray()
    while True:
        header = await stream.read_exactly(8)
        tag, value = header[:4], struct.unpack("<I", header[4:])[0]
        if tag == b"DATA":
            if value > SYNC_DATA_MAX:
                await _fail(stream, "data chunk too large")
                return
            chunks += await stream.read_exactly(value)
        elif tag == b"DONE":
            break
        else:
            await _fail(stream, f"unexpected {tag!r} during SEND")
            return
    try:
        # fixed_push_mkdir: the device creates missing parent directories.
        fs.write(path, bytes(chunks), mode=mode, mkdirs=True)
        entry = fs.stat(path)
        if entry is not None:
            entry.mtime = value
    except FsError as exc:
        await _fail(stream, f"couldn't create file: {exc.reason}")
        return
    await stream.write(b"OKAY" + struct.pack("<I", 0))
