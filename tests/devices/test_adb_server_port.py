"""`make run` puts the virtual device on the adb server Waypoint watches, started on the port
configured (ADB_SERVERS, or adb's own ANDROID_ADB_SERVER_PORT), never on whichever server holds
5037: on a shared machine that is someone else's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import adbutils
import pytest

from tests.conftest import REPO, require_chromium

from .conftest import free_port
from .test_virtual_device_status import device_status


def manage(*args: str, env: dict[str, str]) -> subprocess.Popen:
    """``manage.py`` in a process of its own, with only the adb settings given in ``env``."""
    base = {
        k: v for k, v in os.environ.items() if k not in ("ADB_SERVERS", "ANDROID_ADB_SERVER_PORT")
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={**base, "DEBUG": "1", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def adb_port():
    """A free port for an adb server the test starts (through Waypoint), killed afterwards."""
    port = free_port()
    yield port
    subprocess.run(
        [adbutils.adb_path(), "-P", str(port), "kill-server"], capture_output=True, timeout=30
    )


def listed(port: int) -> dict[str, str]:
    try:
        return {d.serial: d.state for d in adbutils.AdbClient(port=port).list()}
    except adbutils.AdbError:
        return {}


def test_the_virtual_device_joins_the_adb_server_of_adb_servers(tmp_path, adb_port):
    require_chromium()
    status_file = tmp_path / "virtual_device.json"
    device_port = free_port()
    device = manage(
        "virtual_device",
        "--connect",
        "--port",
        str(device_port),
        "--size",
        "540x1200",
        "--apps",
        "notes",
        env={
            "ADB_SERVERS": f"127.0.0.1:{adb_port}",
            "WAYPOINT_VIRTUAL_DEVICE_STATUS": str(status_file),
        },
    )
    serial = f"127.0.0.1:{device_port}"
    try:
        said = device_status(status_file, device.pid)
        assert said.returncode == 0, said.stderr
        deadline = time.monotonic() + 30
        while listed(adb_port).get(serial) != "device":
            assert time.monotonic() < deadline, f"{serial} never joined 127.0.0.1:{adb_port}"
            time.sleep(0.3)
    finally:
        device.send_signal(signal.SIGTERM)
        out, _ = device.communicate(timeout=60)
    assert f"The device joins the adb server 127.0.0.1:{adb_port} (started)." in out


def test_make_run_starts_the_adb_server_on_adb_s_own_port(adb_port):
    env = {"ANDROID_ADB_SERVER_PORT": str(adb_port)}
    out, err = manage("adb_server", env=env).communicate(timeout=90)
    assert out.strip() == f"adb server 127.0.0.1:{adb_port}: started", err
    assert adbutils.AdbClient(port=adb_port).server_version() > 0

    out, err = manage("adb_server", env=env).communicate(timeout=90)
    assert out.strip() == f"adb server 127.0.0.1:{adb_port}: already running", err


def test_adb_servers_on_other_machines_are_not_started_here():
    env = {"ADB_SERVERS": "192.0.2.10:5037"}
    out, err = manage("adb_server", env=env).communicate(timeout=90)
    assert out.strip() == "ADB_SERVERS lists no adb server on this machine (192.0.2.10:5037).", err
