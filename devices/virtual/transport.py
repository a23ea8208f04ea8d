"""The device side of the ADB transport over TCP: handshake and stream multiplexing.

One ``Connection`` per TCP client (normally the adb server). Streams follow the protocol's flow
control: one WRTE in flight per stream (the next waits for the host's OKAY), an OKAY for every
WRTE the host sends, payloads never above the negotiated maximum.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable

from devices.virtual import protocol as p

logger = logging.getLogger(__name__)

# service string -> coroutine(stream, argument); returns None when the service is unknown.
ServiceOpener = Callable[["Stream", str], Awaitable[None] | None]


class StreamClosed(Exception):
    pass


class Stream:
    def __init__(self, connection: Connection, local_id: int, remote_id: int):
        self.connection = connection
        self.local_id = local_id
        self.remote_id = remote_id
        self._inbound = bytearray()
        self._data_ready = asyncio.Event()
        self._write_ready = asyncio.Event()
        self._write_ready.set()
        self.closed = False
        self.remote_closed = False

    # -- host -> device
    def feed(self, data: bytes) -> None:
        self._inbound.extend(data)
        self._data_ready.set()

    def on_okay(self) -> None:
        self._write_ready.set()

    def on_remote_close(self) -> None:
        self.remote_closed = True
        self.closed = True
        self._data_ready.set()
        self._write_ready.set()

    async def read_some(self) -> bytes:
        """Whatever the host has sent so far (waits for at least one byte); b"" at close."""
        while not self._inbound:
            if self.remote_closed:
                return b""
            self._data_ready.clear()
            await self._data_ready.wait()
        data = bytes(self._inbound)
        self._inbound.clear()
        return data

    async def read_exactly(self, n: int) -> bytes:
        while len(self._inbound) < n:
            if self.remote_closed:
                raise StreamClosed("host closed the stream")
            self._data_ready.clear()
            await self._data_ready.wait()
        data = bytes(self._inbound[:n])
        del self._inbound[:n]
        return data

    # -- device -> host
    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        chunk_size = self.connection.max_payload
        for start in range(0, len(view), chunk_size):
            await self._write_ready.wait()
            if self.closed:
                raise StreamClosed("stream closed")
            self._write_ready.clear()
            self.connection.send(
                p.Message(
                    p.A_WRTE, self.local_id, self.remote_id, bytes(view[start : start + chunk_size])
                )
            )
        await self.connection.drain()

    async def close(self) -> None:
        if not self.remote_closed and not self.closed:
            # Let the last WRTE be acknowledged first, as adbd does.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._write_ready.wait(), 5)
            if not self.remote_closed:
                self.connection.send(p.Message(p.A_CLSE, self.local_id, self.remote_id))
        self.closed = True
        self.connection.forget(self)


class Connection:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        banner: bytes,
        open_service: ServiceOpener,
    ):
        self.reader = reader
        self.writer = writer
        self.banner = banner
        self.open_service = open_service
        self.max_payload = p.MAX_PAYLOAD_V1
        self.version = p.A_VERSION
        self.connected = False
        self.host_features: set[str] = set()
        self.streams: dict[int, Stream] = {}
        self.tasks: set[asyncio.Task] = set()
        self._ids = itertools.count(1)

    def send(self, message: p.Message) -> None:
        if len(message.data) > self.max_payload and message.command != p.A_CNXN:
            raise p.ProtocolError(f"payload of {len(message.data)} above {self.max_payload}")
        if not self.writer.is_closing():
            self.writer.write(p.pack(message))

    async def drain(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()

    def forget(self, stream: Stream) -> None:
        self.streams.pop(stream.local_id, None)

    async def run(self) -> None:
        try:
            while True:
                header = await self.reader.readexactly(p.HEADER.size)
                command, arg0, arg1, length, check = p.unpack_header(header)
                if length > max(self.max_payload, p.MAX_PAYLOAD):
                    raise p.ProtocolError(f"payload {length} too large")
                data = await self.reader.readexactly(length) if length else b""
                if self.version < p.A_VERSION and p.checksum(data) != check:
                    raise p.ProtocolError("bad data checksum")
                await self.dispatch(p.Message(command, arg0, arg1, data))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except p.ProtocolError as exc:
            logger.warning("adb protocol error, dropping the connection: %s", exc)
        finally:
            await self.shutdown()

    async def shutdown(self) -> None:
        for stream in list(self.streams.values()):
            stream.on_remote_close()
        for task in list(self.tasks):
            task.cancel()
        self.streams.clear()
        with contextlib.suppress(Exception):
            self.writer.close()

    async def dispatch(self, m: p.Message) -> None:
        if m.command == p.A_CNXN:
            self.version = min(m.arg0, p.A_VERSION)
            self.max_payload = min(m.arg1, p.MAX_PAYLOAD)
            _, self.host_features = p.parse_host_banner(m.data)
            for stream in list(self.streams.values()):
                stream.on_remote_close()
            self.streams.clear()
            self.connected = True
            self.send(p.Message(p.A_CNXN, self.version, self.max_payload, self.banner))
            await self.drain()
            return
        if not self.connected:
            return  # adbd ignores everything before the handshake
        if m.command == p.A_OPEN:
            await self._open(m)
        elif m.command == p.A_WRTE:
            stream = self.streams.get(m.arg1)
            if stream is None or stream.remote_id != m.arg0:
                self.send(p.Message(p.A_CLSE, m.arg1, m.arg0))
                return
            stream.feed(m.data)
            self.send(p.Message(p.A_OKAY, stream.local_id, stream.remote_id))
        elif m.command == p.A_OKAY:
            stream = self.streams.get(m.arg1)
            if stream is not None:
                stream.on_okay()
        elif m.command == p.A_CLSE:
            stream = self.streams.pop(m.arg1, None)
            if stream is not None:
                stream.on_remote_close()
        # AUTH/STLS/SYNC are never sent to a device that did not ask for them.

    async def _open(self, m: p.Message) -> None:
        service = m.data.rstrip(b"\0").decode(errors="replace")
        stream = Stream(self, next(self._ids), m.arg0)
        handler = self.open_service(stream, service)
        if handler is None:
            self.send(p.Message(p.A_CLSE, 0, m.arg0))
            return
        self.streams[stream.local_id] = stream
        self.send(p.Message(p.A_OKAY, stream.local_id, stream.remote_id))
        task = asyncio.get_running_loop().create_task(self._run_service(stream, handler))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _run_service(self, stream: Stream, handler: Awaitable[None]) -> None:
        try:
            await handler
        except (StreamClosed, ConnectionError, asyncio.CancelledError):
            pass
        except Exception:
            logger.exception("service failed on stream %s", stream.local_id)
        finally:
            if not stream.closed:
                with contextlib.suppress(Exception):
                    await stream.close()
