"""Installed packages travel (issue 37): exported as .wpk files and imported in another
Waypoint after static inspection; a suite of a generated task names the package and its
sha256, and is refused where another content is installed."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from agents.suites import check_suite, make_suite
from devices.management.commands.virtual_device import package_folders
from devices.services.packages import install_package, installed_versions
from devices.virtual import VirtualDevice
from devices.virtual.packages import check_files
from environments.procedural import generate
from environments.render import package_of
from tests.devices.conftest import free_port
from trajectories.validation import InvalidData

PACKAGE = package_of(generate(seed=6, index=2))


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("app_packages", *args, stdout=out)
    return out.getvalue()


def test_a_package_exported_and_imported_again_is_the_same(packages, tmp_path):
    install_package(PACKAGE)
    assert run("list") == (
        f"{PACKAGE.slug}\t1.0.0\t{PACKAGE.sha256}\t{PACKAGE.manifest['label']}\n"
    )
    run("export", PACKAGE.slug, "--out", str(tmp_path / "out"))
    archive = tmp_path / "out" / f"{PACKAGE.slug}-1.0.0.wpk"
    assert archive.read_bytes() == PACKAGE.archive()
    assert run("uninstall", PACKAGE.slug) == f"uninstalled {PACKAGE.slug}\n"
    assert installed_versions() == {}
    assert run("import", str(archive)) == f"installed {PACKAGE.slug} 1.0.0 {PACKAGE.sha256}\n"
    assert installed_versions()[PACKAGE.slug]["sha256"] == PACKAGE.sha256


def test_a_package_that_fails_inspection_is_not_installed(packages, tmp_path):
    files = dict(PACKAGE.files)
    page = files["index.html"].decode()
    files["index.html"] = page.replace("</main>", "<select></select></main>").encode()
    broken = tmp_path / "broken.wpk"
    broken.write_bytes(check_files(files).archive())
    with pytest.raises(CommandError) as caught:
        run("import", str(broken))
    assert str(caught.value) == (
        "broken.wpk: not installed, static inspection found: select: a select element: "
        "filters must be buttons"
    )
    assert installed_versions() == {}
    (tmp_path / "junk.wpk").write_bytes(b"junk")
    with pytest.raises(CommandError, match=r"^junk.wpk: not a package \(a .wpk is a zip"):
        run("import", str(tmp_path / "junk.wpk"))


def test_a_suite_names_the_package_and_its_hash_and_needs_the_same_content(packages):
    install_package(PACKAGE)
    suite = make_suite("generated", "1", [PACKAGE.slug], [0])
    assert suite["apps"][PACKAGE.slug] == {
        "label": PACKAGE.manifest["label"], "version": "1.0.0", "sha256": PACKAGE.sha256
    }  # fmt: skip
    [instance] = suite["instances"]
    assert instance["instruction"] == PACKAGE.manifest["tasks"][0]["instruction"]
    assert check_suite(json.loads(json.dumps(suite)))["apps"] == suite["apps"]
    # Another content under the same name and version: the suite is not this Waypoint's.
    manifest = dict(PACKAGE.manifest, color="#000000")
    other = check_files({**PACKAGE.files, "manifest.json": json.dumps(manifest).encode()})
    install_package(other)
    with pytest.raises(InvalidData) as caught:
        check_suite(suite)
    assert str(caught.value) == (
        f"apps.{PACKAGE.slug}: the suite was made with the app package {PACKAGE.slug} of sha256 "
        f"{PACKAGE.sha256[:12]}...; this Waypoint has {other.sha256[:12]}..., another content"
    )


def test_a_virtual_device_can_start_with_installed_packages(packages):
    folder = install_package(PACKAGE)
    assert package_folders("all") == [str(folder)]
    with pytest.raises(CommandError, match="^--packages: no installed package 'gen-9-9999'$"):
        package_folders(f"{PACKAGE.slug},gen-9-9999")
    device = VirtualDevice(port=free_port(), packages=package_folders(PACKAGE.slug))
    app = device.catalog.app(PACKAGE.slug)
    assert (app.package, app.html_path.read_bytes()) == (
        PACKAGE.package, PACKAGE.files["index.html"]
    )  # fmt: skip
    assert device.phone.environment()["apps"][-1]["sha256"] == PACKAGE.sha256
    device.phone.forget_packages()
