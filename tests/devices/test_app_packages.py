"""App packages (issue 37): a virtual app as one versioned, content-hashed file, installed on the
virtual device through adb as a phone installs an APK (push, then ``pm install``)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from devices.virtual.packages import PackageError, content_hash, pack, read_archive
from environments.procedural import generate
from environments.render import package_of


@pytest.fixture(scope="module")
def package():
    return package_of(generate(seed=5, index=1))


def zipped(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_the_same_package_is_the_same_bytes_and_hash(package):
    again = package_of(generate(seed=5, index=1))
    assert again.archive() == package.archive()
    assert again.sha256 == package.sha256 == content_hash(package.files)
    read = read_archive(package.archive())
    assert (read.slug, read.sha256, read.version) == ("gen-5-0001", package.sha256, "1.0.0")
    assert read_archive(pack(read.files)).sha256 == package.sha256


def test_another_index_is_another_package(package):
    other = package_of(generate(seed=5, index=2))
    assert other.sha256 != package.sha256
    assert other.manifest["package"] == "com.waypoint.gen.s5.e2"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"index.html": b"<html/>", "routes.json": b"{}"}, "the package has no manifest.json"),
        (
            {"manifest.json": b"{", "index.html": b"x", "routes.json": b"{}"},
            "manifest.json: not JSON",
        ),
        (
            {"../manifest.json": b"{}", "index.html": b"x", "routes.json": b"{}"},
            "'../manifest.json': a package holds files at its top level only",
        ),
        (
            {"manifest.json": b"{}", "index.html": b"x", "routes.json": b"{}", "run.sh": b"x"},
            "the package has an unknown file 'run.sh'",
        ),
        (
            {"manifest.json": b'{"format": "apk"}', "index.html": b"x", "routes.json": b"{}"},
            "manifest.json: format must be 'waypoint-app-package', got 'apk'",
        ),
    ],
)
def test_a_broken_archive_is_refused_naming_the_problem(files, message):
    with pytest.raises(PackageError) as caught:
        read_archive(zipped(files))
    assert message in str(caught.value)


def test_an_archive_that_inflates_past_the_limit_is_refused_before_inflating():
    bomb = zipped({"manifest.json": b"{}", "index.html": b"0" * 5_000_000, "routes.json": b"{}"})
    with pytest.raises(PackageError, match="its files hold more than 4194304 bytes"):
        read_archive(bomb)
    with pytest.raises(PackageError, match="not a package \\(a .wpk is a zip archive\\)"):
        read_archive(b"MZ not a zip")


def test_the_device_installs_a_pushed_package_and_keeps_it_across_resets(device, package):
    device.sync.push(package.archive(), "/data/local/tmp/app.wpk")
    assert device.shell(["pm", "install", "/data/local/tmp/app.wpk"]).strip() == "Success"
    try:
        assert "package:com.waypoint.gen.s5.e1" in device.shell(["pm", "list", "packages", "-3"])
        env = json.loads(device.shell(["waypoint", "env"]))
        app = next(a for a in env["apps"] if a["slug"] == "gen-5-0001")
        assert app["sha256"] == package.sha256 and app["version"] == "1.0.0"
        tasks = {t["id"]: t for t in json.loads(device.shell(["waypoint", "tasks"]))}
        task = tasks["gen-5-0001"]
        assert task["instruction"] == package.manifest["tasks"][0]["instruction"]
        spec = json.loads(package.files["task_spec.json"])
        assert task["gold"] == spec["task"]["grading"]["gold"]
        device.shell(["waypoint", "reset", "--seed", "9"])
        assert "gen-5-0001" in {t["id"] for t in json.loads(device.shell(["waypoint", "tasks"]))}
        device.app_start("com.waypoint.gen.s5.e1")
        xml = device.dump_hierarchy()
        assert "com.waypoint.gen.s5.e1:id/go_submit_answer" in xml
    finally:
        assert device.shell(["pm", "uninstall", "com.waypoint.gen.s5.e1"]).strip() == "Success"
        device.shell(["waypoint", "reset", "--seed", "7"])
    assert "gen-5-0001" not in device.shell(["waypoint", "env"])
    assert device.shell(["pm", "uninstall", "com.waypoint.gen.s5.e1"]).strip() == (
        "Failure [DELETE_FAILED_INTERNAL_ERROR]"
    )


def test_the_device_refuses_a_broken_package_in_pm_words(device):
    device.sync.push(b"not a zip", "/data/local/tmp/bad.wpk")
    assert device.shell(["pm", "install", "/data/local/tmp/bad.wpk"]).strip() == (
        "Failure [INSTALL_PARSE_FAILED_BAD_MANIFEST: not a package (a .wpk is a zip archive)]"
    )
    assert device.shell(["pm", "install", "/data/local/tmp/none.wpk"]).strip() == (
        "Failure [INSTALL_FAILED_INVALID_URI: /data/local/tmp/none.wpk: No such file or directory]"
    )


def test_a_package_may_not_take_a_built_in_apps_name(device, package):
    files = dict(package.files)
    manifest = json.loads(files["manifest.json"])
    manifest["package"] = "com.waypoint.freshcart"
    files["manifest.json"] = json.dumps(manifest).encode()
    device.sync.push(pack(files), "/data/local/tmp/clash.wpk")
    assert device.shell(["pm", "install", "/data/local/tmp/clash.wpk"]).strip() == (
        "Failure [INSTALL_PARSE_FAILED_BAD_MANIFEST: com.waypoint.freshcart would replace the "
        "built-in app FreshCart]"
    )
