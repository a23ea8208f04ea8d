"""The device's in-memory filesystem: /sdcard, /data/local/tmp and the system paths clients probe.

Each virtual device owns one; nothing touches the host disk.
"""

from __future__ import annotations

import posixpath
import stat
import threading
import time
from dataclasses import dataclass, field

# /sdcard is a symlink on phones; we fold every alias onto one canonical tree.
ALIASES = {"/sdcard": "/storage/emulated/0", "/mnt/sdcard": "/storage/emulated/0"}
INITIAL_DIRS = (
    "/",
    "/data",
    "/data/local",
    "/data/local/tmp",
    "/storage",
    "/storage/emulated",
    "/storage/emulated/0",
    "/storage/emulated/0/Download",
    "/storage/emulated/0/DCIM",
    "/storage/emulated/0/Pictures",
    "/system",
    "/system/bin",
    "/proc",
    "/dev",
)


class FsError(Exception):
    """errno-style error; ``str()`` is the message a phone's toybox prints."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass
class Entry:
    mode: int
    data: bytearray = field(default_factory=bytearray)
    mtime: int = field(default_factory=lambda: int(time.time()))

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)

    @property
    def size(self) -> int:
        return 4096 if self.is_dir else len(self.data)


def normalize(path: str, cwd: str = "/") -> str:
    path = posixpath.normpath(posixpath.join(cwd, path))
    if path.startswith("//"):
        path = path[1:]
    for alias, target in ALIASES.items():
        if path == alias or path.startswith(alias + "/"):
            return target + path[len(alias) :]
    return path


class MemoryFS:
    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}
        self._lock = threading.Lock()
        for directory in INITIAL_DIRS:
            self._entries[directory] = Entry(mode=stat.S_IFDIR | 0o771)
        self._entries["/dev/null"] = Entry(mode=stat.S_IFCHR | 0o666)

    def stat(self, path: str) -> Entry | None:
        return self._entries.get(normalize(path))

    def exists(self, path: str) -> bool:
        return normalize(path) in self._entries

    def is_dir(self, path: str) -> bool:
        entry = self.stat(path)
        return bool(entry and entry.is_dir)

    def read(self, path: str) -> bytes:
        entry = self.stat(path)
        if entry is None:
            raise FsError(path, "No such file or directory")
        if entry.is_dir:
            raise FsError(path, "Is a directory")
        return bytes(entry.data)

    def write(
        self, path: str, data: bytes, *, append: bool = False, mode: int = 0o644, mkdirs=False
    ) -> None:
        real = normalize(path)
        if real == "/dev/null":
            return
        parent = posixpath.dirname(real)
        with self._lock:
            if mkdirs:
                self._mkdirs(parent)
            parent_entry = self._entries.get(parent)
            if parent_entry is None:
                raise FsError(path, "No such file or directory")
            if not parent_entry.is_dir:
                raise FsError(path, "Not a directory")
            entry = self._entries.get(real)
            if entry is not None and entry.is_dir:
                raise FsError(path, "Is a directory")
            if entry is None or not append:
                entry = Entry(mode=stat.S_IFREG | (mode & 0o7777))
                self._entries[real] = entry
            entry.data.extend(data)
            entry.mtime = int(time.time())

    def remove(self, path: str, *, recursive: bool = False) -> None:
        real = normalize(path)
        with self._lock:
            entry = self._entries.get(real)
            if entry is None:
                raise FsError(path, "No such file or directory")
            if entry.is_dir and not recursive:
                raise FsError(path, "Is a directory")
            for key in [k for k in self._entries if k == real or k.startswith(real + "/")]:
                del self._entries[key]

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        real = normalize(path)
        with self._lock:
            if real in self._entries:
                if parents and self._entries[real].is_dir:
                    return
                raise FsError(path, "File exists")
            if parents:
                self._mkdirs(real)
                return
            parent = self._entries.get(posixpath.dirname(real))
            if parent is None or not parent.is_dir:
                raise FsError(path, "No such file or directory")
            self._entries[real] = Entry(mode=stat.S_IFDIR | 0o771)

    def _mkdirs(self, real: str) -> None:
        parts = [p for p in real.split("/") if p]
        current = ""
        for part in parts:
            current += "/" + part
            entry = self._entries.get(current)
            if entry is None:
                self._entries[current] = Entry(mode=stat.S_IFDIR | 0o771)
            elif not entry.is_dir:
                raise FsError(current, "Not a directory")

    def listdir(self, path: str) -> list[tuple[str, Entry]]:
        real = normalize(path)
        entry = self._entries.get(real)
        if entry is None:
            raise FsError(path, "No such file or directory")
        if not entry.is_dir:
            return [(posixpath.basename(real), entry)]
        prefix = real.rstrip("/") + "/"
        with self._lock:
            children = [
                (key[len(prefix) :], value)
                for key, value in self._entries.items()
                if key.startswith(prefix) and "/" not in key[len(prefix) :] and key != real
            ]
        return sorted(children)
