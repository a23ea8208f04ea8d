"""App packages: a virtual app as one versioned, content-hashed file (DESIGN.md, "Environments
are data").

A package holds what an app folder of ``fixtures/virtual_apps/<slug>/`` holds, and the task
specification it was generated from:

- ``manifest.json``: package, label, activity, version, color, variables and tasks, as a
  built-in app's (``devices/virtual/apps.py``), plus ``format`` and ``schema_version``; a
  generated app's variables carry their ``value`` (its data is fixed when it is generated);
- ``index.html``: the single-file offline app;
- ``routes.json``: its pages and the links between them (``explore`` scores coverage by them);
- ``task_spec.json`` (optional): STAMP's task_spec (platform, task with memory items and their
  locators, final action, grading, UI contract, anti-triviality), and ``scenario.json``
  (optional), the scenario it came from.

Its ``sha256`` is the content hash: the sha256 of the sorted lines ``name<TAB>sha256(bytes)``
of its files, so a package archived twice, or unpacked and read back, has the same hash. The
archive (``.wpk``) is a zip of those files at the top level with fixed timestamps, so the same
package is the same bytes. A virtual device installs one with ``pm install FILE.wpk`` after an
``adb push`` (``devices/virtual/commands.py``), as a phone installs an APK.

Pure functions: no Django, no device.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = "waypoint-app-package"
SCHEMA_VERSION = 1
EXTENSION = ".wpk"
REQUIRED = ("manifest.json", "index.html", "routes.json")
OPTIONAL = ("task_spec.json", "scenario.json")
MAX_FILE_BYTES = 2 * 1024 * 1024  # an app's page is tens of kilobytes; a package far less than this
MAX_PACKAGE_BYTES = 4 * 1024 * 1024
ZIP_TIME = (2020, 1, 1, 0, 0, 0)
SLUG = re.compile(r"[a-z][a-z0-9_-]{0,62}")
PACKAGE_NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+")
VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]{0,39}")


class PackageError(ValueError):
    """A package that cannot be read or installed; the message names the place."""


@dataclass(frozen=True)
class Package:
    """A package read and checked: its slug (the folder an app lives in), manifest and hash."""

    slug: str
    manifest: dict[str, Any]
    sha256: str
    files: dict[str, bytes]

    @property
    def package(self) -> str:
        return self.manifest["package"]

    @property
    def version(self) -> str:
        return self.manifest["version"]

    def archive(self) -> bytes:
        return pack(self.files)

    def write(self, folder: Path) -> Path:
        """Unpack into ``folder`` (made if needed) and return it."""
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in self.files.items():
            (folder / name).write_bytes(data)
        return folder


def content_hash(files: dict[str, bytes]) -> str:
    """The package's sha256: over its files' names and sha256s, in name order."""
    lines = "".join(
        f"{name}\t{hashlib.sha256(files[name]).hexdigest()}\n" for name in sorted(files)
    )
    return hashlib.sha256(lines.encode()).hexdigest()


def pack(files: dict[str, bytes]) -> bytes:
    """The ``.wpk`` archive of ``files``: the same files give the same bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name])
    return out.getvalue()


def _check_manifest(manifest: Any, where: str) -> str:
    """The slug of a package manifest, checked; PackageError naming the field otherwise."""
    if not isinstance(manifest, dict):
        raise PackageError(f"{where}manifest.json: must be a JSON object")
    if manifest.get("format") != FORMAT:
        raise PackageError(
            f"{where}manifest.json: format must be {FORMAT!r}, got {manifest.get('format')!r}"
        )
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise PackageError(
            f"{where}manifest.json: this Waypoint reads packages of schema version "
            f"{SCHEMA_VERSION}, got {manifest.get('schema_version')!r}"
        )
    slug = manifest.get("slug")
    if not isinstance(slug, str) or not SLUG.fullmatch(slug):
        raise PackageError(
            f"{where}manifest.json: slug must be 1 to 63 lower-case letters, digits, '-' or "
            f"'_', starting with a letter, got {slug!r}"
        )
    package = manifest.get("package")
    if not isinstance(package, str) or not PACKAGE_NAME.fullmatch(package):
        raise PackageError(
            f"{where}manifest.json: package must be an Android package name such as "
            f"com.example.app, got {package!r}"
        )
    version = manifest.get("version")
    if not isinstance(version, str) or not VERSION.fullmatch(version):
        raise PackageError(f"{where}manifest.json: version must be like 1.0.0, got {version!r}")
    if not isinstance(manifest.get("label"), str) or not manifest["label"].strip():
        raise PackageError(f"{where}manifest.json: label must be the app's name")
    for name in ("variables", "tasks"):
        if not isinstance(manifest.get(name, []), list):
            raise PackageError(f"{where}manifest.json: {name} must be a list")
    return slug


def check_files(files: dict[str, bytes], where: str = "") -> Package:
    """A package from its files, checked: the required files, JSON where JSON is due, sizes."""
    missing = [name for name in REQUIRED if name not in files]
    if missing:
        raise PackageError(f"{where}the package has no {missing[0]}")
    unknown = sorted(set(files) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise PackageError(f"{where}the package has an unknown file {unknown[0]!r}")
    for name, data in files.items():
        if len(data) > MAX_FILE_BYTES:
            raise PackageError(f"{where}{name}: larger than {MAX_FILE_BYTES} bytes")
    parsed = {}
    for name in (n for n in files if n.endswith(".json")):
        try:
            parsed[name] = json.loads(files[name].decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise PackageError(f"{where}{name}: not JSON ({exc})") from None
    try:
        files["index.html"].decode("utf-8")
    except UnicodeDecodeError:
        raise PackageError(f"{where}index.html: not UTF-8 text") from None
    slug = _check_manifest(parsed["manifest.json"], where)
    return Package(slug, parsed["manifest.json"], content_hash(files), dict(files))


def read_archive(data: bytes, where: str = "") -> Package:
    """A package from its ``.wpk`` bytes: a zip of the files at its top level, nothing else.
    Sizes are checked before anything is inflated (a zip bomb is refused by its header) and
    again while inflating (a header that lies)."""
    if len(data) > MAX_PACKAGE_BYTES:
        raise PackageError(f"{where}the archive is larger than {MAX_PACKAGE_BYTES} bytes")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise PackageError(f"{where}not a package (a .wpk is a zip archive)") from None
    files: dict[str, bytes] = {}
    with archive:
        infos = archive.infolist()
        if sum(i.file_size for i in infos) > MAX_PACKAGE_BYTES:
            raise PackageError(f"{where}its files hold more than {MAX_PACKAGE_BYTES} bytes")
        for info in infos:
            name = info.filename
            if "/" in name or "\\" in name or name.startswith(".") or info.is_dir():
                raise PackageError(f"{where}{name!r}: a package holds files at its top level only")
            if name in files:
                raise PackageError(f"{where}{name!r} is in the package twice")
            if info.file_size > MAX_FILE_BYTES:
                raise PackageError(f"{where}{name}: larger than {MAX_FILE_BYTES} bytes")
            try:
                with archive.open(info) as member:
                    content = member.read(MAX_FILE_BYTES + 1)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                raise PackageError(f"{where}{name}: cannot be read ({exc})") from None
            if len(content) > MAX_FILE_BYTES:
                raise PackageError(f"{where}{name}: larger than {MAX_FILE_BYTES} bytes")
            files[name] = content
    return check_files(files, where)


def read_folder(folder: Path) -> Package:
    """A package from an unpacked folder (its known files)."""
    files = {
        name: (folder / name).read_bytes()
        for name in (*REQUIRED, *OPTIONAL)
        if (folder / name).is_file()
    }
    return check_files(files, f"{folder.name}: ")
