"""Devices across the configured adb servers, and the facts a trajectory records about them."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field

import adbutils
from adbutils.errors import AdbError, AdbTimeout
from django.conf import settings

# What a device that vanished looks like from adbutils (and from the socket below it).
DEVICE_ERRORS = (AdbError, AdbTimeout, ConnectionError, OSError, EOFError)

FACTS_TTL = 30.0  # seconds: model and screen size do not change while a device stays connected
_FACTS_COMMAND = (
    "getprop ro.product.model; echo @; getprop ro.build.version.release; echo @; "
    "wm size; echo @; wm density; echo @; pm list packages com.android.adbkeyboard; echo @; "
    "waypoint screen-version"
)


def run_shell(
    device: adbutils.AdbDevice,
    cmdargs: str | list[str],
    *,
    timeout: float = 30,
    encoding: str | None = "utf-8",
) -> str | bytes:
    """What ``device.shell(cmdargs, timeout=..., encoding=...)`` returns, without the pause
    adbutils' connection takes when it closes: its ``close()`` shuts its side down and sleeps
    10 ms, for a reader that stops before the command ends. Here the output is read to its end,
    when the device has closed the stream and the command is done, so the socket is closed at
    once. A step's settle wait and capture run half a dozen commands: the pauses were a third
    of a step on the virtual device."""
    connection = device.shell(cmdargs, stream=True)
    try:
        connection.conn.settimeout(timeout)
        output = connection.read_until_close(encoding=None)
    finally:
        connection.conn.close()
    return output if encoding is None else output.decode(encoding, errors="replace").rstrip()


class DeviceUnavailable(Exception):
    """The device is not (or no longer) connected to any configured adb server."""


class DeviceNotFound(DeviceUnavailable):
    """No configured adb server lists a device with this serial (the API answers 404)."""


@dataclass
class DeviceFacts:
    model: str = ""
    android_version: str = ""
    width: int = 0
    height: int = 0
    density: int = 0
    virtual: bool = False  # answers `waypoint screen-version`: the built-in virtual device
    adb_keyboard: bool = False  # takes ADB_INPUT_B64 broadcasts (any Unicode text)

    @property
    def size(self) -> str:
        return f"{self.width}x{self.height}" if self.width else ""


@dataclass
class DeviceInfo:
    serial: str
    adb_server: str
    state: str  # device | offline | unauthorized | ...
    facts: DeviceFacts = field(default_factory=DeviceFacts)

    @property
    def is_ready(self) -> bool:
        return self.state == "device"


def split_server(server: str) -> tuple[str, int]:
    host, _, port = server.rpartition(":")
    return (host or "127.0.0.1"), int(port or 5037)


LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def local_adb_port() -> int | None:
    """The port of the first adb server of ``ADB_SERVERS`` on this machine (None: none is)."""
    for server in settings.ADB_SERVERS:
        host, port = split_server(server)
        if host in LOCAL_HOSTS:
            return port
    return None


class AdbServerError(Exception):
    """No adb server answers on a port of this machine, and none could be started there."""


def adb_server_answers(port: int) -> bool:
    """Whether an adb server answers on ``port`` of this machine. Asked on a plain socket: an
    adbutils client that finds no server starts one itself, on adb's default port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as conn:
            conn.sendall(b"000chost:version")
            return conn.recv(4) == b"OKAY"
    except OSError:
        return False


def start_adb_server(port: int) -> bool:
    """Start an adb server (the adbutils wheel's adb) on ``port`` of this machine unless one
    answers there; True when this call started it."""
    if adb_server_answers(port):
        return False
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(port)}
    try:
        done = subprocess.run(
            [adbutils.adb_path(), "-P", str(port), "start-server"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise AdbServerError(f"could not start an adb server on port {port}: {exc}") from exc
    if done.returncode != 0:
        why = done.stderr.strip() or done.stdout.strip() or f"adb exited with {done.returncode}"
        raise AdbServerError(f"could not start an adb server on port {port}: {why}")
    return True


def client_for(server: str) -> adbutils.AdbClient:
    host, port = split_server(server)
    return adbutils.AdbClient(host=host, port=port, socket_timeout=10)


_facts_cache: dict[tuple[str, str], tuple[float, DeviceFacts]] = {}
_facts_lock = threading.Lock()


def _int_after(pattern: str, text: str) -> int:
    found = re.findall(pattern, text)
    return int(found[-1]) if found else 0  # an "Override" line comes last and wins


def parse_facts(output: str) -> DeviceFacts:
    parts = [p.strip() for p in output.split("@")] + [""] * 6
    size = re.findall(r"(\d+)x(\d+)", parts[2])
    width, height = (int(v) for v in size[-1]) if size else (0, 0)
    return DeviceFacts(
        model=parts[0],
        android_version=parts[1],
        width=width,
        height=height,
        density=_int_after(r"density:\s*(\d+)", parts[3]),
        adb_keyboard="package:com.android.adbkeyboard" in parts[4],
        virtual=bool(re.fullmatch(r"-?\d+", parts[5])),
    )


def device_facts(device: adbutils.AdbDevice, server: str, *, fresh: bool = False) -> DeviceFacts:
    """Model, Android version, screen size and density in one shell round trip (cached)."""
    key = (server, device.serial)
    now = time.monotonic()
    with _facts_lock:
        cached = _facts_cache.get(key)
    if cached and not fresh and now - cached[0] < FACTS_TTL:
        return cached[1]
    facts = parse_facts(device.shell(_FACTS_COMMAND, timeout=10))
    with _facts_lock:
        _facts_cache[key] = (now, facts)
    return facts


@dataclass
class ServerReport:
    server: str
    devices: list[DeviceInfo]
    error: str = ""


def discover_devices() -> list[ServerReport]:
    """Every device of every adb server in ``ADB_SERVERS``, with its facts when it is online."""
    reports = []
    for server in settings.ADB_SERVERS:
        client = client_for(server)
        try:
            listed = client.list()
        except DEVICE_ERRORS as exc:
            reports.append(ServerReport(server, [], f"adb server {server} unreachable: {exc}"))
            continue
        devices = []
        for item in listed:
            info = DeviceInfo(item.serial, server, item.state)
            if info.is_ready:
                try:
                    info.facts = device_facts(client.device(item.serial), server)
                except DEVICE_ERRORS:
                    info.state = "offline"
            devices.append(info)
        reports.append(ServerReport(server, devices))
    return reports


def find_device(serial: str, server: str | None = None) -> tuple[adbutils.AdbDevice, str]:
    """The connected device with this serial and the adb server it is on."""
    servers = [server] if server else settings.ADB_SERVERS
    for candidate in servers:
        client = client_for(candidate)
        try:
            states = {item.serial: item.state for item in client.list()}
        except DEVICE_ERRORS:
            continue
        if states.get(serial) == "device":
            return client.device(serial), candidate
        if serial in states:
            raise DeviceUnavailable(f"Device {serial} is {states[serial]}.")
    raise DeviceNotFound(f"Device {serial} is not connected to any adb server.")


def installed_packages(device: adbutils.AdbDevice) -> list[str]:
    """Third-party packages (the apps a task is about), for the open-app list."""
    output = device.shell(["pm", "list", "packages", "-3"], timeout=10)
    return sorted(
        line.removeprefix("package:").strip()
        for line in output.splitlines()
        if line.startswith("package:")
    )
