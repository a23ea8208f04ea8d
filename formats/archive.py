"""Import sources: a folder, a .zip or a .tar archive, opened safely.

Archives are unpacked into a temporary folder with every member checked first: no path may
escape the folder, no links or devices, no file over ``WAYPOINT_MAX_FILE_BYTES``, and in all no
more than ``WAYPOINT_MAX_UNPACKED_BYTES`` nor ``WAYPOINT_MAX_UNPACK_RATIO`` times the archive's
own size (a zip bomb is refused from its headers, before anything is written). Members are then
streamed to disk with the same limits counted on the bytes actually written, since headers can
lie.
"""

from __future__ import annotations

import contextlib
import struct
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from core.limits import limit as current_limit
from trajectories.bounds import check_file_size, human_size
from trajectories.invalid import InvalidData, shown

CHUNK = 1024**2


# What a file system holds: a file or folder name of at most NAME_MAX bytes (255 on Linux,
# macOS and Windows); a member's whole path is kept well under PATH_MAX (4,096 on Linux), since
# it is unpacked below a job's folder.
NAME_MAX = 255
MEMBER_PATH_MAX = 1024


def _safe_member_path(name: str, archive: str) -> PurePosixPath:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise InvalidData(
            f"{archive}: member {shown(name, 40)} would be written outside the archive folder"
        )
    if len(name.encode("utf-8", "surrogateescape")) > MEMBER_PATH_MAX:
        raise InvalidData(
            f"{archive}: member {shown(name, 40)} has a path longer than {MEMBER_PATH_MAX} bytes"
        )
    if any(len(part.encode("utf-8", "surrogateescape")) > NAME_MAX for part in path.parts):
        raise InvalidData(
            f"{archive}: member {shown(name, 40)} has a name longer than {NAME_MAX} bytes"
        )
    return path


def _reason(exc: BaseException) -> str:
    """An error's text without the local path an OSError names (the job's folder)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


def _member_error(archive: str, path: PurePosixPath, exc: BaseException) -> InvalidData:
    """A member that could not be unpacked: damaged data, or the system refused to write it."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return InvalidData(f"{archive}: member {path} could not be unpacked ({_reason(exc)})")
    return InvalidData(f"{archive}: member {path} is damaged ({exc})")


class UnpackBudget:
    """How much an archive may unpack to: in bytes, and relative to its own size."""

    def __init__(self, name: str, packed: int):
        self.name = name
        self.packed = max(packed, 1)
        self.written = 0

    def check(self, total: int, *, more: bool = False) -> None:
        """Refuse ``total`` unpacked bytes (``more``: counted while writing, there may be more)."""
        size = f"at least {human_size(total)}" if more else human_size(total)
        limit = current_limit("WAYPOINT_MAX_UNPACKED_BYTES")
        if total > limit:
            raise InvalidData(
                f"{self.name}: unpacks to {size}, over the limit of {human_size(limit)} "
                "(WAYPOINT_MAX_UNPACKED_BYTES)"
            )
        ratio = current_limit("WAYPOINT_MAX_UNPACK_RATIO")
        if total > ratio * self.packed:
            raise InvalidData(
                f"{self.name}: unpacks to {size}, {total // self.packed} times its own "
                f"{human_size(self.packed)}; the limit is {ratio} times (WAYPOINT_MAX_UNPACK_RATIO)"
            )

    def copy(self, src: BinaryIO, target: Path, declared: int, where: str) -> None:
        """Stream one member to ``target``, counting what is written against every limit."""
        member = 0
        with open(target, "wb") as out:
            while chunk := src.read(CHUNK):
                member += len(chunk)
                self.written += len(chunk)
                if member > declared:
                    check_file_size(member, where)
                    raise InvalidData(
                        f"{where}: holds more than the {declared} bytes its header says"
                    )
                self.check(self.written, more=True)
                out.write(chunk)


EOCD = b"PK\x05\x06"  # end of central directory record
ZIP64_LOCATOR, ZIP64_EOCD = b"PK\x06\x07", b"PK\x06\x06"
CENTRAL_ENTRY_MAX = 1100  # bytes a member's central directory entry may take, name included


def _zip_directory(source: BinaryIO) -> tuple[int, int] | None:
    """(members, bytes) of a zip's central directory as its end record states them; None when
    there is no end record (``zipfile`` then says the archive is broken)."""
    source.seek(0, 2)
    size = source.tell()
    tail = min(size, 22 + 65535)  # the record, and a comment of at most 64 KiB
    source.seek(size - tail)
    data = source.read(tail)
    at = data.rfind(EOCD)
    if at < 0 or len(data) - at < 22:
        return None
    members, directory = struct.unpack("<HI", data[at + 10 : at + 16])
    if (members == 0xFFFF or directory == 0xFFFFFFFF) and at >= 20:
        locator = data[at - 20 : at]
        if locator[:4] == ZIP64_LOCATOR:
            (offset,) = struct.unpack("<Q", locator[8:16])
            source.seek(offset)
            record = source.read(56)
            if record[:4] == ZIP64_EOCD and len(record) == 56:
                members, directory = struct.unpack("<QQ", record[32:48])
    return members, directory


def check_zip_members(source: BinaryIO, name: str) -> None:
    """Refuse a zip of more than ``WAYPOINT_MAX_ARCHIVE_MEMBERS`` members from its end record,
    before ``zipfile`` reads its central directory (an object per member, in memory). A record
    that understates the count is caught by the directory's size, and by the count once read."""
    position = source.tell()
    try:
        found = _zip_directory(source)
    finally:
        source.seek(position)
    if found is not None:
        members, directory = found
        check_member_count(max(members, directory // CENTRAL_ENTRY_MAX), name, at_least=True)


def check_member_count(members: int, name: str, *, at_least: bool = False) -> None:
    limit = current_limit("WAYPOINT_MAX_ARCHIVE_MEMBERS")
    if members > limit:
        count = f"at least {members:,}" if at_least else f"{members:,}"
        raise InvalidData(
            f"{name}: holds {count} members, over the limit of {limit:,} "
            "(WAYPOINT_MAX_ARCHIVE_MEMBERS)"
        )


def _check_no_clash(members: list[tuple[PurePosixPath, bool]], archive: str) -> None:
    """Refuse an archive naming one path as both a file and a folder (it cannot be unpacked)."""
    files = {path for path, is_dir in members if not is_dir}
    folders = {path for path, is_dir in members if is_dir}
    folders |= {parent for path, _ in members for parent in path.parents}
    clash = sorted(files & folders)
    if clash:
        raise InvalidData(f"{archive}: {clash[0].as_posix()!r} is both a file and a folder")


def check_zip_size(archive: zipfile.ZipFile, name: str, packed: int) -> None:
    """Refuse a zip whose headers say it unpacks to too much, or to a file too large."""
    check_member_count(len(archive.infolist()), name)
    total = 0
    for info in archive.infolist():
        if not info.is_dir():
            check_file_size(info.file_size, f"{name}: {info.filename}")
            total += info.file_size
    UnpackBudget(name, packed).check(total)


def _unpack_zip(source: Path, dest: Path) -> None:
    with open(source, "rb") as raw:
        check_zip_members(raw, source.name)
    try:
        archive = zipfile.ZipFile(source)
    except zipfile.BadZipFile as exc:
        raise InvalidData(f"{source.name}: not a readable zip archive ({exc})") from exc
    with archive:
        members = archive.infolist()
        budget = UnpackBudget(source.name, source.stat().st_size)
        for info in members:
            _safe_member_path(info.filename, source.name)
            mode = info.external_attr >> 16
            if mode and (mode & 0o170000) == 0o120000:
                raise InvalidData(f"{source.name}: member {info.filename!r} is a symbolic link")
        check_zip_size(archive, source.name, budget.packed)
        _check_no_clash(
            [(_safe_member_path(i.filename, source.name), i.is_dir()) for i in members],
            source.name,
        )
        for info in members:
            path = _safe_member_path(info.filename, source.name)
            target = dest.joinpath(*path.parts)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src:
                    budget.copy(src, target, info.file_size, f"{source.name}: {path}")
            except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
                raise _member_error(source.name, path, exc) from exc


def _unpack_tar(source: Path, dest: Path) -> None:
    try:
        archive = tarfile.open(source)
    except (tarfile.TarError, OSError) as exc:
        raise InvalidData(f"{source.name}: not a readable tar archive ({_reason(exc)})") from exc
    with archive:
        budget = UnpackBudget(source.name, source.stat().st_size)
        members: list[tarfile.TarInfo] = []
        total = 0
        # A tar lists its members as it is read: stop at the first one past a limit rather
        # than decompress all of a .tar.gz bomb to learn its full size.
        headers = iter(archive)
        while True:
            try:
                member = next(headers, None)
            except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
                reason = _reason(exc)
                raise InvalidData(f"{source.name}: the tar archive is damaged ({reason})") from exc
            if member is None:
                break
            members.append(member)
            check_member_count(len(members), source.name, at_least=True)
            path = _safe_member_path(member.name, source.name)
            if member.issym() or member.islnk():
                raise InvalidData(f"{source.name}: member {member.name!r} is a link")
            if not (member.isfile() or member.isdir()):
                raise InvalidData(f"{source.name}: member {member.name!r} is not a regular file")
            if member.isfile():
                check_file_size(member.size, f"{source.name}: {path}")
                total += member.size
                budget.check(total, more=True)
        _check_no_clash(
            [(_safe_member_path(m.name, source.name), m.isdir()) for m in members], source.name
        )
        for member in members:
            path = _safe_member_path(member.name, source.name)
            target = dest.joinpath(*path.parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                src = archive.extractfile(member)
                assert src is not None  # a regular file, checked above
                with src:
                    budget.copy(src, target, member.size, f"{source.name}: {path}")
            except (tarfile.TarError, EOFError, zlib.error) as exc:
                raise InvalidData(f"{source.name}: the tar archive is damaged ({exc})") from exc
            except OSError as exc:
                raise _member_error(source.name, path, exc) from exc


@contextlib.contextmanager
def open_source(source: Path, workdir: Path | None = None) -> Iterator[Path]:
    """Yield a folder holding the import: ``source`` itself or an archive unpacked safely."""
    source = Path(source)
    if not source.exists():
        raise InvalidData(f"{source}: no such file or folder")
    if source.is_dir():
        yield source
        return
    size, limit = source.stat().st_size, current_limit("WAYPOINT_MAX_UPLOAD_BYTES")
    if size > limit:
        raise InvalidData(
            f"{source.name}: the archive is {human_size(size)}, over the limit of "
            f"{human_size(limit)} (WAYPOINT_MAX_UPLOAD_BYTES)"
        )
    with tempfile.TemporaryDirectory(prefix="waypoint-import-", dir=workdir) as tmp:
        dest = Path(tmp)
        if zipfile.is_zipfile(source):
            _unpack_zip(source, dest)
        elif _is_tar(source):
            _unpack_tar(source, dest)
        else:
            raise InvalidData(f"{source.name}: not a folder, a .zip or a .tar archive")
        yield _content_root(dest)


def _is_tar(source: Path) -> bool:
    try:
        return tarfile.is_tarfile(source)
    except OSError:
        return False


def _content_root(folder: Path) -> Path:
    """An archive of one top folder holds the import inside that folder."""
    entries = [p for p in folder.iterdir() if not p.name.startswith(("__MACOSX", "."))]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return folder


def read_file(folder: Path, relative: str, where: str) -> bytes:
    """Read a file named inside an import, refusing paths that leave the folder."""
    path = _safe_member_path(relative, where)
    target = folder.joinpath(*path.parts)
    try:
        resolved = target.resolve()
        resolved.relative_to(folder.resolve())
    except ValueError:
        raise InvalidData(f"{where}: path {relative!r} leaves the import folder") from None
    if not target.is_file():
        raise InvalidData(f"{where}: file {relative!r} is missing")
    check_file_size(target.stat().st_size, f"{where}: {relative}")
    return target.read_bytes()
