"""ADB services a phone's adbd offers that the virtual device implements.

``shell:`` (v1, raw; a pty-like line shell when the command is empty), ``shell,v2,…:`` (packets:
stdin 0, stdout 1, stderr 2, exit 3, close-stdin 4, window-size 5), ``exec:`` and ``sync:``.
Anything else is refused with CLSE, as adbd refuses services it does not know.
"""

from __future__ import annotations

import struct

from devices.virtual.commands import COMMANDS
from devices.virtual.shell import Shell
from devices.virtual.sync import serve_sync
from devices.virtual.transport import Stream

STDIN, STDOUT, STDERR, EXIT, CLOSE_STDIN, WINDOW_SIZE = range(6)


def make_shell(phone) -> Shell:
    """A shell on the phone, as ``adb shell`` gets one."""
    shell = Shell(phone.fs, COMMANDS, {"PATH": "/system/bin", "HOME": "/", "USER": "shell"})
    shell.phone = phone
    return shell


def open_service(phone, stream: Stream, service: str):
    name, _, argument = service.partition(":")
    base, *options = name.split(",")
    if base == "shell" and "v2" in options:
        return shell_v2(make_shell(phone), stream, argument, "raw" not in options and not argument)
    if base == "shell" and not options:
        return shell_v1(make_shell(phone), stream, argument)
    if base == "exec":
        return shell_v1(make_shell(phone), stream, argument)
    if service.startswith("sync:"):
        return serve_sync(stream, phone.fs)
    return None


def packet(kind: int, data: bytes) -> bytes:
    return struct.pack("<BI", kind, len(data)) + data


def prompt(shell) -> bytes:
    model = shell.phone.properties["ro.product.device"]
    return f"{model}:{shell.cwd} $ ".encode()


async def shell_v1(shell, stream: Stream, command: str) -> None:
    if command.strip():
        result = await shell.run(command)
        await stream.write(result.output)
        return
    await interactive(shell, stream, lambda data: stream.write(data), stream.read_some)


async def shell_v2(shell, stream: Stream, command: str, pty: bool) -> None:
    if command.strip():
        result = await shell.run(command)
        out = b""
        if result.stdout:
            out += packet(STDOUT, result.stdout)
        if result.stderr:
            out += packet(STDERR, result.stderr)
        await stream.write(out + packet(EXIT, bytes([result.code & 0xFF])))
        return
    buffer = bytearray()

    async def read_stdin() -> bytes:
        while True:
            while len(buffer) >= 5:
                kind, length = struct.unpack("<BI", buffer[:5])
                if len(buffer) < 5 + length:
                    break
                data = bytes(buffer[5 : 5 + length])
                del buffer[: 5 + length]
                if kind == STDIN and data:
                    return data
                if kind == CLOSE_STDIN:
                    return b""
            more = await stream.read_some()
            if not more:
                return b""
            buffer.extend(more)

    async def write(data: bytes) -> None:
        await stream.write(packet(STDOUT, data))

    code = await interactive(shell, stream, write, read_stdin, echo=pty)
    await stream.write(packet(EXIT, bytes([code & 0xFF])))


async def interactive(shell, stream, write, read, echo: bool = True) -> int:
    """A line-at-a-time shell session with a prompt, as on ``adb shell`` with no command."""
    await write(prompt(shell))
    line = bytearray()
    while True:
        data = await read()
        if not data:
            return int(shell.env.get("?", "0"))
        for byte in data:
            if byte in (13, 10):
                if echo:
                    await write(b"\r\n")
                result = await shell.run(line.decode(errors="replace"))
                line.clear()
                output = result.output
                await write(output.replace(b"\n", b"\r\n") if echo else output)
                if getattr(shell, "exited", False):
                    return result.code
                await write(prompt(shell))
            elif byte == 4 and not line:  # Ctrl-D
                return int(shell.env.get("?", "0"))
            elif byte in (8, 127):
                if line:
                    line.pop()
                    if echo:
                        await write(b"\b \b")
            elif byte == 3:  # Ctrl-C
                line.clear()
                if echo:
                    await write(b"^C\r\n" + prompt(shell))
            else:
                line.append(byte)
                if echo:
                    await write(bytes([byte]))
