"""App packages on the Waypoint side: installed (one folder each in ``WAYPOINT_PACKAGES_DIR``,
as the built-in apps are folders of ``fixtures/virtual_apps``: their tasks become templates
that suites and runs pose next to the built-in ones), exported and imported as ``.wpk`` files,
and put on a virtual device when an episode needs them.

On a device a package is installed as a phone installs an APK: ``adb push`` of the archive and
``pm install`` (``devices/virtual/commands.py``). :func:`prepare_device` gives a virtual device
exactly the packages a task needs before it is reset for an episode: those missing or of
another hash are installed, other packages removed (a device's launcher never fills with
hundreds of generated apps). The archive is packed from the installed folder: the same files
give the same bytes and the same hash (``devices/virtual/packages.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings

from devices.virtual.apps import APPS_DIR
from devices.virtual.packages import (
    EXTENSION,
    SLUG,
    Package,
    PackageError,
    read_archive,
    read_folder,
)
from trajectories.validation import InvalidData

from .adb import DEVICE_ERRORS, DeviceUnavailable
from .environment import device_apps

DEVICE_TMP = PurePosixPath("/data/local/tmp")


def packages_dir() -> Path:
    return Path(settings.WAYPOINT_PACKAGES_DIR)


def _folders() -> list[Path]:
    root = packages_dir()
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if SLUG.fullmatch(p.name) and p.is_dir())


@lru_cache(maxsize=4096)
def _manifest(path: Path, mtime_ns: int) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=4096)
def _hash(folder: Path, mtimes: tuple[int, ...]) -> str:
    return read_folder(folder).sha256


def _stamp(folder: Path) -> tuple[int, ...]:
    return tuple(p.stat().st_mtime_ns for p in sorted(folder.iterdir()) if p.is_file())


def installed_manifests() -> list[tuple[Path, dict[str, Any]]]:
    """Every installed package as ``(folder, manifest)``, as ``load_apps`` and
    ``all_templates`` read apps (each manifest parsed once while its file is unchanged)."""
    found = []
    for folder in _folders():
        path = folder / "manifest.json"
        try:
            found.append((folder, _manifest(path, path.stat().st_mtime_ns)))
        except (OSError, ValueError):
            continue  # being replaced at this moment (install_package renames folders)
    return found


def installed_versions() -> dict[str, dict[str, str]]:
    """Each installed package's label, version and content hash, by slug."""
    return {
        folder.name: {
            "label": manifest.get("label", folder.name),
            "version": manifest.get("version", ""),
            "sha256": _hash(folder, _stamp(folder)),
        }
        for folder, manifest in installed_manifests()
    }


def installed_package(slug: str) -> Package | None:
    """The installed package ``slug`` (its files and hash), or None."""
    folder = packages_dir() / slug
    if not SLUG.fullmatch(slug) or not (folder / "manifest.json").is_file():
        return None
    return read_folder(folder)


def _declaring(template_id: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(slug, manifest, task) of the installed packages declaring the task."""
    return [
        (folder.name, manifest, task)
        for folder, manifest in installed_manifests()
        for task in manifest.get("tasks", [])
        if task.get("id") == template_id
    ]


def task_apps(template_id: str) -> list[str] | None:
    """The apps of an installed package's task (None: no installed package declares it)."""
    for slug, _, task in _declaring(template_id):
        return list(task.get("apps") or [slug])
    return None


def package_plan(template_id: str) -> dict[str, Any] | None:
    """What a generic solver follows for an installed package's task (its locators, the way the
    answer is formed, the submission page's test ids) and the app to open: never a value, a
    variable or the gold. None when no installed package declares the task."""
    for _, manifest, task in _declaring(template_id):
        if isinstance(task.get("plan"), dict):
            return plan_of(manifest, task)
    return None


def plan_of(manifest: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    """A task's public plan, with the app it opens."""
    app = {"package": manifest["package"], "label": manifest["label"]}
    return {**public_plan(task["plan"]), "app": app}


def public_plan(plan: dict[str, Any]) -> dict[str, Any]:
    """A plan's locators alone: the reads (key, path, test id, label, what is read), the
    answer's form and the submission's test ids."""
    keep = ("key", "path", "testid", "label", "what", "compare")
    reads = [{k: read[k] for k in keep if k in read} for read in plan.get("reads", [])]
    answer = {k: v for k, v in (plan.get("answer") or {}).items() if k in ("op", "sep", "of")}
    if (plan.get("answer") or {}).get("op") == "holder":
        answer["labels"] = dict(plan["answer"].get("labels") or {})
    return {"reads": reads, "answer": answer, "submit": dict(plan.get("submit") or {})}


# --------------------------------------------------------------------- installing


_install_lock = threading.Lock()


def builtin_names() -> set[str]:
    """The built-in apps' slugs and packages: no package may take one."""
    names = set()
    for folder in APPS_DIR.iterdir():
        if (folder / "manifest.json").is_file():
            names.add(folder.name)
            names.add(json.loads((folder / "manifest.json").read_text())["package"])
    return names


def install_package(package: Package) -> Path:
    """Install a checked package (another version of its slug is replaced); its folder. The new
    folder is written aside and renamed into place: a reader sees the old one or the new one."""
    if package.slug in builtin_names() or package.package in builtin_names():
        raise InvalidData(f"{package.slug}: the name of a built-in app")
    for folder, manifest in installed_manifests():
        if folder.name != package.slug and manifest.get("package") == package.package:
            raise InvalidData(f"{package.slug}: {package.package} is installed as {folder.name}")
    root = packages_dir()
    root.mkdir(parents=True, exist_ok=True)
    target = root / package.slug
    with _install_lock:
        fresh = Path(f"{root}/.{package.slug}.{os.getpid()}.{threading.get_ident()}.new")
        shutil.rmtree(fresh, ignore_errors=True)
        package.write(fresh)
        old = fresh.with_suffix(".old")
        if target.exists():
            os.replace(target, old)
        os.replace(fresh, target)
        shutil.rmtree(old, ignore_errors=True)
    return target


def uninstall_package(slug: str) -> bool:
    """Remove an installed package; False when none is called so."""
    folder = packages_dir() / slug
    if not SLUG.fullmatch(slug) or not folder.is_dir():
        return False
    shutil.rmtree(folder)
    return True


def import_archive(data: bytes, where: str) -> Package:
    """A package from another Waypoint (a ``.wpk``), checked; InvalidData names the problem."""
    try:
        return read_archive(data, f"{where}: ")
    except PackageError as exc:
        raise InvalidData(str(exc)) from None


def archive_name(package: Package) -> str:
    """``gen-42-0007-1.0.0.wpk``: what an exported package is called."""
    return f"{package.slug}-{package.version}{EXTENSION}"


# --------------------------------------------------------------------- on a virtual device


def install_on_device(device, serial: str, package: Package) -> None:
    """Push the package's archive to the device and ``pm install`` it there."""
    remote = str(DEVICE_TMP / f"{package.slug}{EXTENSION}")
    try:
        device.sync.push(package.archive(), remote)
        output = device.shell(["pm", "install", remote], timeout=60)
        device.shell(["rm", "-f", remote], timeout=10)
    except DEVICE_ERRORS as exc:
        raise DeviceUnavailable(f"Device {serial} did not install {package.slug}: {exc}") from exc
    if output.strip() != "Success":
        raise DeviceUnavailable(f"Device {serial} did not install {package.slug}: {output.strip()}")


def uninstall_from_device(device, serial: str, package: str) -> None:
    try:
        device.shell(["pm", "uninstall", package], timeout=30)
    except DEVICE_ERRORS as exc:
        raise DeviceUnavailable(f"Device {serial} did not uninstall {package}: {exc}") from exc


def prepare_device(device, serial: str, template_id: str) -> list[str]:
    """Give the virtual device the installed packages the task needs, and no other package;
    the slugs it needs (none for a built-in app's task)."""
    needed = {}
    for slug in task_apps(template_id) or []:
        package = installed_package(slug)
        if package is not None:
            needed[slug] = package
    on_device = {a["slug"]: a for a in device_apps(device, serial) if a.get("sha256")}
    for slug, app in on_device.items():
        if slug not in needed or needed[slug].sha256 != app["sha256"]:
            uninstall_from_device(device, serial, app["package"])
    for slug, package in needed.items():
        if on_device.get(slug, {}).get("sha256") != package.sha256:
            install_on_device(device, serial, package)
    return sorted(needed)
