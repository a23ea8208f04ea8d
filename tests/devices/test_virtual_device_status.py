"""`make run` and the devices page say whether the virtual device came up, and why not."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest

from devices.virtual.status import FAILED, write_status
from tests.conftest import REPO, require_chromium

from .conftest import free_port


def manage(*args: str, status_file, **popen) -> subprocess.Popen:
    env = dict(os.environ, DEBUG="1", WAYPOINT_VIRTUAL_DEVICE_STATUS=str(status_file))
    return subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def device_status(status_file, pid: int) -> subprocess.CompletedProcess:
    process = manage(
        "virtual_device_status", "--wait", "90", "--pid", str(pid), status_file=status_file
    )
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.fixture
def busy_port():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


def test_the_terminal_says_why_the_virtual_device_did_not_come_up(tmp_path, busy_port):
    status_file = tmp_path / "virtual_device.json"
    device = manage("virtual_device", "--port", str(busy_port), status_file=status_file)
    said = device_status(status_file, device.pid)
    device.wait(timeout=60)
    assert said.returncode == 1
    assert said.stderr.strip() == (
        "CommandError: the virtual device failed to start: [Errno 98] error while attempting to "
        f"bind on address ('127.0.0.1', {busy_port}): address already in use"
    )


def test_the_terminal_says_when_the_virtual_device_is_ready(tmp_path):
    require_chromium()
    status_file = tmp_path / "virtual_device.json"
    port = free_port()
    device = manage(
        "virtual_device",
        "--port",
        str(port),
        "--size",
        "540x1200",
        "--apps",
        "notes",
        status_file=status_file,
    )
    try:
        said = device_status(status_file, device.pid)
        assert said.returncode == 0, said.stderr
        assert said.stdout.strip() == f"Virtual device ready: 127.0.0.1:{port} (Answers, Notes)"
    finally:
        device.send_signal(signal.SIGTERM)
        device.wait(timeout=60)
    assert '"state": "stopped"' in status_file.read_text()


def test_a_device_that_dies_without_a_word_is_reported(tmp_path):
    status_file = tmp_path / "virtual_device.json"
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    said = device_status(status_file, int(gone.stdout))
    assert said.returncode == 1
    assert (
        said.stderr.strip() == "CommandError: the virtual device failed to start: it exited at once"
    )


def test_the_devices_page_shows_why_the_virtual_device_is_missing(
    client, alice, project, adb_servers, settings, tmp_path
):
    settings.WAYPOINT_VIRTUAL_DEVICE = True
    settings.WAYPOINT_VIRTUAL_DEVICE_STATUS = tmp_path / "virtual_device.json"
    client.force_login(alice)

    page = client.get("/devices/").content.decode()
    assert "The virtual device was not started: `make run` starts it" in page

    write_status(settings.WAYPOINT_VIRTUAL_DEVICE_STATUS, FAILED, detail="no Chromium to render")
    page = client.get("/devices/").content.decode()
    assert "The virtual device failed to start: no Chromium to render." in page


def test_the_devices_page_says_nothing_of_a_virtual_device_that_is_not_wanted(
    client, alice, project, adb_servers, settings, tmp_path
):
    settings.WAYPOINT_VIRTUAL_DEVICE = False
    settings.WAYPOINT_VIRTUAL_DEVICE_STATUS = tmp_path / "virtual_device.json"
    write_status(settings.WAYPOINT_VIRTUAL_DEVICE_STATUS, FAILED, detail="no Chromium to render")
    client.force_login(alice)
    assert "virtual device" not in client.get("/devices/").content.decode()


VIRTUAL_EXTRA = "The virtual device needs the virtual extra: pip install 'waypoint[virtual]'"


def test_without_the_virtual_extra_the_command_says_which_extra_to_install(tmp_path, monkeypatch):
    from django.core.management import CommandError, call_command

    from devices.virtual import VirtualDevice
    from devices.virtual.status import read_status

    monkeypatch.setitem(sys.modules, "playwright", None)  # `import playwright` fails
    status_file = tmp_path / "virtual_device.json"
    with pytest.raises(CommandError) as caught:
        call_command("virtual_device", status_file=status_file)
    assert str(caught.value) == VIRTUAL_EXTRA
    assert (
        read_status(status_file).problem == f"the virtual device failed to start: {VIRTUAL_EXTRA}"
    )
    # started another way (the tests' fixture), the device says the same
    device = VirtualDevice(port=free_port(), size="540x1200", seed=7, chromium_path="chromium")
    with pytest.raises(RuntimeError) as caught:
        device.start()
    assert str(caught.value) == f"the virtual device failed to start: {VIRTUAL_EXTRA}"
