"""One virtual device and one private adb server per test session (never the default 5037)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import adbutils
import pytest

from devices.services.adb import DeviceFacts
from devices.services.capture import wait_until_settled
from devices.virtual import VirtualDevice
from tests.conftest import missing_tool, require_chromium


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AdbServer:
    """A real adb server (the binary from the adbutils wheel, or another) on its own port."""

    def __init__(self, binary: str, port: int):
        self.binary = binary
        self.port = port
        self.env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(port)}
        self.client = adbutils.AdbClient(port=port)

    def run(self, *args: str, timeout: float = 30, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.binary, "-P", str(self.port), *args],
            env=self.env,
            capture_output=True,
            timeout=timeout,
            **kwargs,
        )

    def start(self) -> AdbServer:
        self.run("start-server")
        return self

    def kill(self) -> None:
        self.run("kill-server")

    def connect(self, serial: str, wait: float = 10) -> adbutils.AdbDevice:
        self.run("connect", serial)
        deadline = time.monotonic() + wait
        next_connect = time.monotonic() + 1
        while time.monotonic() < deadline:
            state = self.state(serial)
            if state == "device":
                return self.client.device(serial)
            if state is None and time.monotonic() > next_connect:
                # The server may still be tearing down the device's previous transport
                # (a restart on the same port): ask again, as a person would.
                self.run("connect", serial)
                next_connect = time.monotonic() + 1
            time.sleep(0.1)
        raise AssertionError(f"{serial} never became a device: {self.run('devices').stdout!r}")

    def state(self, serial: str) -> str | None:
        for info in self.client.list():
            if info.serial == serial:
                return info.state
        return None


@pytest.fixture(scope="session")
def adb_server():
    server = AdbServer(adbutils.adb_path(), free_port()).start()
    yield server
    server.kill()


@pytest.fixture(scope="session")
def debian_adb_server():
    binary = shutil.which("adb")
    if binary is None:
        missing_tool("Debian's adb is not installed (make test installs it as root)")
    server = AdbServer(binary, free_port()).start()
    yield server
    server.kill()


@pytest.fixture(scope="session")
def virtual_device():
    device = VirtualDevice(
        port=free_port(), size="540x1200", seed=7, chromium_path=require_chromium()
    ).start()
    yield device
    device.stop()


@pytest.fixture
def device(adb_server, virtual_device) -> adbutils.AdbDevice:
    """The session's virtual phone through the adb server, back on the home screen."""
    d = adb_server.connect(virtual_device.serial)
    for app in virtual_device.catalog.apps:
        d.shell(["am", "force-stop", app.package])
    d.keyevent("HOME")
    return d


def adb(server: AdbServer, serial: str, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return server.run("-s", serial, *args, **kwargs)


def node_center(xml: str, **attrs: str) -> tuple[int, int]:
    """Centre of the first node whose attributes match (uses lxml like the recording code)."""
    from lxml import etree

    root = etree.fromstring(xml.encode())
    for node in root.iter("node"):
        if all(node.get(k.replace("_", "-")) == v for k, v in attrs.items()):
            x1, y1, x2, y2 = (
                int(v) for v in node.get("bounds").replace("][", ",").strip("[]").split(",")
            )
            return (x1 + x2) // 2, (y1 + y2) // 2
    raise AssertionError(f"no node with {attrs}")


def tap_node(device: adbutils.AdbDevice, **attrs: str) -> None:
    device.click(*node_center(device.dump_hierarchy(), **attrs))


@pytest.fixture
def adb_servers(settings, adb_server):
    """Waypoint's device services pointed at the session's private adb server."""
    settings.ADB_SERVERS = [f"127.0.0.1:{adb_server.port}"]
    return settings.ADB_SERVERS


def grant(serial: str, *projects):
    """Give the device to projects, as a site admin does (members may then use it)."""
    from devices.models import Device

    registered, _ = Device.objects.get_or_create(serial=serial)
    registered.projects.add(*projects)
    return registered


@pytest.fixture
def project_device(device, project):
    """The virtual device, belonging to alice's project (bob is a member, charlie is not)."""
    grant(device.serial, project)
    return device


def settled_screen(device: adbutils.AdbDevice) -> None:
    """Wait for the screen to stop moving (the HOME of the fixture may still be animating), and
    for the status bar's clock not to turn its minute in the next two seconds."""
    wait_until_settled(device, DeviceFacts(virtual=True), timeout=10)
    if time.time() % 60 > 57:
        time.sleep(61 - time.time() % 60)
        wait_until_settled(device, DeviceFacts(virtual=True), timeout=10)
