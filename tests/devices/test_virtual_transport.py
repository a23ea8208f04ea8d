"""The ADB transport itself: handshake, flow control, file sync, concurrency and failures."""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time

import pytest

from devices.virtual import VirtualDevice
from devices.virtual import protocol as p
from tests.devices.conftest import adb, free_port


class RawHost:
    """A minimal host side of the protocol, to check what the device puts on the wire."""

    def __init__(self, port: int, max_payload: int = p.MAX_PAYLOAD):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.send(p.Message(p.A_CNXN, p.A_VERSION, max_payload, b"host::features=shell_v2\0"))
        self.banner = self.recv()

    def send(self, message: p.Message) -> None:
        self.sock.sendall(p.pack(message))

    def recv(self) -> p.Message:
        header = self._exact(24)
        command, arg0, arg1, length, check = p.unpack_header(header)
        data = self._exact(length)
        assert p.checksum(data) == check
        return p.Message(command, arg0, arg1, data)

    def _exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        return buf

    def close(self) -> None:
        self.sock.close()


def test_header_round_trip_and_banner():
    message = p.Message(p.A_WRTE, 3, 9, b"hello")
    packed = p.pack(message)
    assert p.unpack_header(packed[:24]) == (p.A_WRTE, 3, 9, 5, sum(b"hello"))
    banner = p.device_banner({"ro.product.name": "x"}, ("shell_v2",))
    assert banner == b"device::ro.product.name=x;features=shell_v2"
    with pytest.raises(p.ProtocolError):
        p.unpack_header(packed[:20] + b"\0\0\0\0")


def test_handshake_banner_and_refused_service(virtual_device):
    host = RawHost(virtual_device.config.port)
    try:
        assert host.banner.command == p.A_CNXN
        text = host.banner.data.decode()
        assert text.startswith("device::ro.product.name=waypoint_virtual;")
        assert "ro.product.model=Waypoint Virtual;" in text
        assert text.endswith("features=shell_v2,stat_v2,ls_v2,fixed_push_mkdir")
        host.send(p.Message(p.A_OPEN, 7, 0, b"jdwp:1234\0"))
        reply = host.recv()
        assert (reply.command, reply.arg0, reply.arg1) == (p.A_CLSE, 0, 7)
    finally:
        host.close()


def test_flow_control_one_write_in_flight_within_max_payload(virtual_device):
    host = RawHost(virtual_device.config.port, max_payload=4096)
    try:
        assert host.banner.arg1 == 4096
        host.send(p.Message(p.A_OPEN, 5, 0, b"exec:screencap -p\0"))
        okay = host.recv()
        assert okay.command == p.A_OKAY and okay.arg1 == 5
        local = okay.arg0
        png = b""
        while True:
            first = host.recv()
            if first.command == p.A_CLSE:
                break
            assert first.command == p.A_WRTE and len(first.data) <= 4096
            png += first.data
            if len(png) <= 3 * 4096:
                host.sock.settimeout(0.2)  # nothing more may arrive before our OKAY
                with pytest.raises(socket.timeout):
                    host.sock.recv(1, socket.MSG_PEEK)
                host.sock.settimeout(10)
            host.send(p.Message(p.A_OKAY, 5, local))
        assert png.startswith(b"\x89PNG") and len(png) > 4096
    finally:
        host.close()


def test_the_device_survives_a_client_leaving_mid_stream(adb_server, device, virtual_device):
    host = RawHost(virtual_device.config.port, max_payload=4096)
    host.send(p.Message(p.A_OPEN, 5, 0, b"exec:screencap -p\0"))
    host.recv()
    host.recv()  # one WRTE, never acknowledged
    host.close()
    assert device.shell("echo still here") == "still here"
    assert device.screenshot().size == (540, 1200)


def test_push_pull_round_trip_is_byte_identical(adb_server, device, tmp_path):
    data = os.urandom(3 * 1024 * 1024 + 123)
    src = tmp_path / "blob.bin"
    src.write_bytes(data)
    proc = adb(adb_server, device.serial, "push", str(src), "/data/local/tmp/new/blob.bin")
    assert proc.returncode == 0, proc.stderr
    assert device.shell("ls -l /data/local/tmp/new/blob.bin").split()[4] == str(len(data))
    back = tmp_path / "back.bin"
    proc = adb(adb_server, device.serial, "pull", "/data/local/tmp/new/blob.bin", str(back))
    assert proc.returncode == 0, proc.stderr
    assert hashlib.sha256(back.read_bytes()).digest() == hashlib.sha256(data).digest()
    # and through adbutils' sync
    device.sync.push(data[:100_000], "/sdcard/Download/part.bin")
    assert device.sync.read_bytes("/sdcard/Download/part.bin") == data[:100_000]
    assert device.sync.exists("/sdcard/Download/part.bin")
    names = [f.path for f in device.sync.list("/sdcard/Download")]
    assert "part.bin" in names
    with pytest.raises(Exception, match="No such file"):
        device.sync.read_bytes("/sdcard/none.bin")


def test_debian_adb_drives_the_same_device(debian_adb_server, virtual_device, tmp_path):
    """A second adb server (Debian's 29.x) connected to the same device at the same time."""
    serial = virtual_device.serial
    d = debian_adb_server.connect(serial)
    assert adb(debian_adb_server, serial, "shell", "echo", "from debian").stdout == b"from debian\n"
    png = adb(debian_adb_server, serial, "exec-out", "screencap -p").stdout
    assert png.startswith(b"\x89PNG")
    src = tmp_path / "f.txt"
    src.write_text("debian push\n")
    assert adb(debian_adb_server, serial, "push", str(src), "/sdcard/f.txt").returncode == 0
    assert d.shell("cat /sdcard/f.txt") == "debian push"
    assert adb(debian_adb_server, serial, "shell", "exit 4").returncode == 4


def test_several_clients_at_once(device):
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(5):
                assert device.shell(f"echo {i}") == str(i)
                assert device.screenshot().size == (540, 1200)
                # adbutils dumps to one fixed path, so only one thread may dump at a time
                if i == 0:
                    assert device.dump_hierarchy().startswith("<?xml")
                else:
                    assert "dumped to" in device.shell(f"uiautomator dump /sdcard/d{i}.xml")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors


def test_a_second_device_with_its_own_size_and_apps(adb_server, virtual_device):
    other = VirtualDevice(port=free_port(), size="360x640", apps=["notes"], seed=1).start()
    try:
        d = adb_server.connect(other.serial)
        assert tuple(d.window_size()) == (360, 640)
        packages = d.list_packages(["-3"])
        assert packages == ["com.waypoint.answers", "com.waypoint.notes"]
        assert d.screenshot().size == (360, 640)
        assert d.getprop("ro.serialno") != adb_server.client.device(virtual_device.serial).getprop(
            "ro.serialno"
        )
    finally:
        other.stop()


def test_the_adb_server_reconnects_after_a_device_restart(adb_server):
    port = free_port()
    first = VirtualDevice(port=port, size="360x640", apps=["notes"]).start()
    serial = first.serial
    try:
        d = adb_server.connect(serial)
        assert d.shell("echo one") == "one"
    finally:
        first.stop()
    deadline = time.monotonic() + 10
    while adb_server.state(serial) == "device" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert adb_server.state(serial) != "device"
    second = VirtualDevice(port=port, size="360x640", apps=["notes"]).start()
    try:
        deadline = time.monotonic() + 30  # the adb server retries on its own
        while adb_server.state(serial) != "device" and time.monotonic() < deadline:
            time.sleep(0.25)
        assert adb_server.state(serial) == "device"
        assert adb_server.client.device(serial).shell("echo two") == "two"
    finally:
        second.stop()
        adb_server.run("disconnect", serial)
