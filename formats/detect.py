"""Telling an import's format from its content: a folder, or a .zip / .tar before it is unpacked.

A Waypoint export has ``manifest.json`` saying ``"format": "waypoint"`` (or ``"androtmem"``,
``"gui-odyssey"``, ``"aitw"``, ``"androidcontrol-tfrecord"``: Waypoint's exports in those
datasets' layouts import as those datasets);
DroidBot output has the folders ``states/`` and ``events/``; AndroTMem-Bench ground truth is
``*.jsonl`` / ``*.json`` files at the top.
Any of them may sit inside one top folder, as an archive of a folder does. Archives are only
listed here (and their manifest read): nothing is extracted.
"""

from __future__ import annotations

import json
import tarfile
import zipfile
from collections.abc import Callable, Collection
from pathlib import Path, PurePosixPath
from typing import IO

from django.conf import settings

from trajectories.bounds import load_json
from trajectories.validation import InvalidData

from . import aitw, androtmem, droidbot, gui_odyssey, waypoint
from .androtmem_import import IMAGES
from .tfrecord import first_record, is_tfrecord_name, parse_example

AUTO = "auto"  # the format name that asks for detection
LOOKED_FOR = (
    f'looked for {waypoint.MANIFEST} with "format": "{waypoint.FORMAT}" (a Waypoint export) '
    f"and for the folders {droidbot.STATES}/ and {droidbot.EVENTS}/ (DroidBot output)"
)
LOOKED_FOR += ", for *.jsonl task files (or *.json and images/) at the top (AndroTMem-Bench)"
LOOKED_FOR += ", for TFRecord shards named android_control-* (AndroidControl) or holding "
LOOKED_FOR += "AitW steps (Android in the Wild)"
LOOKED_FOR += ", for the folders annotations/ and screenshots/ (GUI-Odyssey)"
# Formats whose Waypoint export has a manifest naming them, imported by a reader of their own.
# GUI-Odyssey's and AitW's exports are their datasets' own layouts, with a manifest beside.
MANIFEST_FORMATS = {
    waypoint.FORMAT: "waypoint",
    androtmem.FORMAT: "androtmem",
    gui_odyssey.FORMAT: "gui-odyssey",
    aitw.FORMAT: "aitw",
    "androidcontrol-tfrecord": "androidcontrol",
}


def detect_format(
    names: Collection[str],
    read: Callable[[str], bytes],
    where: str,
    peek: Callable[[str], bytes | None] | None = None,
) -> str:
    """The import format of files named ``names`` (paths below the import's root).

    ``read`` returns the bytes of one of them; it is called for the manifest only. ``peek``
    returns the first record of a TFRecord file: shards not named for AndroidControl are told
    by what their first record holds.
    """
    if waypoint.MANIFEST in names:
        try:
            manifest = load_json(read(waypoint.MANIFEST), f"{where}: {waypoint.MANIFEST}")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InvalidData(f"{where}: {waypoint.MANIFEST}: invalid JSON ({exc})") from None
        found = manifest.get("format") if isinstance(manifest, dict) else None
        if found in MANIFEST_FORMATS:
            return MANIFEST_FORMATS[found]
        raise InvalidData(
            f"{where}: cannot tell the import format: {waypoint.MANIFEST} names the format "
            f"{found!r}; {LOOKED_FOR}"
        )
    folders = {PurePosixPath(name).parts[0] for name in names if "/" in name.strip("/")}
    folders |= {name.strip("/") for name in names if name.endswith("/")}
    if {droidbot.STATES, droidbot.EVENTS} <= folders:
        return "droidbot"
    if {gui_odyssey.ANNOTATIONS, gui_odyssey.SCREENSHOTS} <= folders:
        return "gui-odyssey"
    shards = [name for name in names if is_tfrecord_name(name)]
    if any("android_control" in PurePosixPath(name).name for name in shards):
        return "androidcontrol"
    if shards and peek is not None:
        first = sorted(shards)[0]
        found = _shard_format(peek(first), f"{where}: {first} record 1")
        if found:
            return found
    # A JSON Lines file of tasks (a native export's, without its manifest, is not), or a
    # JSON array of tasks beside an images/ folder.
    top = {n for n in names if "/" not in n} - {waypoint.DATA_FILE}
    if any(n.endswith(".jsonl") for n in top) or (
        any(n.endswith(".json") for n in top) and IMAGES in folders
    ):
        return "androtmem"
    raise InvalidData(f"{where}: cannot tell the import format: {LOOKED_FOR}")


def _shard_format(record: bytes | None, where: str) -> str | None:
    """The dataset whose features a TFRecord's first record has."""
    if record is None:
        return None
    keys = set(parse_example(record, where).features.feature)
    if "accessibility_trees" in keys:
        return "androidcontrol"
    if {"image/encoded", "results/action_type"} & keys:
        return "aitw"
    return None


def _peek_file(path: Path, name: str) -> bytes | None:
    with open(path, "rb") as handle:
        return first_record(handle, name)


def detect_folder_format(folder: Path, where: str) -> str:
    """The format of an import folder (an unpacked archive's content root)."""
    names = [
        path.relative_to(folder).as_posix() + ("/" if path.is_dir() else "")
        for path in folder.iterdir()
    ]
    names += [
        path.relative_to(folder).as_posix()
        for top in (droidbot.STATES, droidbot.EVENTS)
        if (folder / top).is_dir()
        for path in (folder / top).iterdir()
    ]
    # TFRecord shards one folder down (AitW keeps general/, google_apps/, ... side by side).
    names += [
        path.relative_to(folder).as_posix()
        for top in folder.iterdir()
        if top.is_dir() and top.name not in (droidbot.STATES, droidbot.EVENTS)
        for path in top.iterdir()
        if is_tfrecord_name(path.name)
    ]
    return detect_format(
        set(names),
        lambda name: (folder / name).read_bytes(),
        where,
        lambda name: _peek_file(folder / name, name),
    )


def _root(names: list[str]) -> str:
    """The prefix of the import's root: an archive of one top folder holds it inside."""
    tops = {
        PurePosixPath(name).parts[0]
        for name in names
        if name.strip("/") and not PurePosixPath(name).parts[0].startswith(("__MACOSX", "."))
    }
    if len(tops) == 1:
        top = tops.pop()
        if any(name.startswith(top + "/") and name != top + "/" for name in names):
            return top + "/"
    return ""


def _below(names: list[str], root: str) -> set[str]:
    return {name[len(root) :] for name in names if name.startswith(root) and name != root}


def _small(size: int, name: str, where: str) -> None:
    if size > settings.WAYPOINT_MAX_FILE_BYTES:
        raise InvalidData(f"{where}: {name} is too large to be a manifest")


def detect_archive_format(upload: IO[bytes], name: str) -> str:
    """The import format of an uploaded .zip or .tar, from its member list and manifest."""
    position = upload.tell()
    try:
        if zipfile.is_zipfile(upload):
            upload.seek(0)
            with zipfile.ZipFile(upload) as archive:
                names = archive.namelist()
                root = _root(names)

                def read(member: str) -> bytes:
                    info = archive.getinfo(root + member)
                    _small(info.file_size, member, name)
                    return archive.read(info)

                def peek(member: str) -> bytes | None:
                    with archive.open(root + member) as handle:
                        return first_record(handle, member)

                return detect_format(_below(names, root), read, name, peek)
        upload.seek(0)
        return _detect_tar(upload, name)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise InvalidData(f"{name}: the archive is damaged ({exc})") from None
    finally:
        upload.seek(position)


def _detect_tar(upload: IO[bytes], name: str) -> str:
    names: list[str] = []
    manifests: dict[str, bytes] = {}
    peeks: dict[str, bytes | None] = {}
    with tarfile.open(fileobj=upload, mode="r:*") as archive:
        for member in archive:  # streamed: a .tar.gz is read once, nothing is kept but names
            member_name = member.name.removeprefix("./")
            names.append(member_name + ("/" if member.isdir() else ""))
            if member.isfile() and PurePosixPath(member_name).name == waypoint.MANIFEST:
                _small(member.size, member_name, name)
                handle = archive.extractfile(member)
                manifests[member_name] = handle.read() if handle else b""
            elif member.isfile() and is_tfrecord_name(member_name) and not peeks:
                handle = archive.extractfile(member)
                peeks[member_name] = first_record(handle, member_name) if handle else None
    names = [n for n in names if n not in ("", "/", "./")]
    root = _root(names)
    return detect_format(
        _below(names, root),
        lambda member: manifests[root + member],
        name,
        # The first shard of the stream stands for them all (a tar is read once).
        lambda member: peeks.get(root + member, next(iter(peeks.values()), None)),
    )
