"""The server's line for devices: sessions that reset wait their turn, first come first served.

Devices are leased from the project's pool as the runner's episodes lease them
(``agents.pool.take_device``: any adb server of ``ADB_SERVERS``, so devices on several hosts
serve one trainer). With more sessions than devices, a reset waits: only the first session of
the line tries the pool (its leases are rows of the database, polled; a free device is taken at
once, so the line moves as fast as devices come back); the others wait on a condition until the
session ahead of them leaves the line. A session that gives up (closed, its wait over) leaves
the line, so the line never holds a place for nobody, and no session holds a device while it
waits for another: many sessions on few devices queue, and never deadlock.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection

from agents.pool import NoDevice
from agents.suites import counted

POLL_S = 1.0  # the longest a waiting session sleeps before it looks again
TRY_S = 2.0  # how long one turn at the pool polls its leases before the line is looked at again


class Cancelled(Exception):
    """The session stopped waiting (it was closed)."""


class DeviceQueue:
    """The line of one server process; ``take`` is what a session's reset calls."""

    def __init__(self, take: Callable[..., Any]) -> None:
        self._take = take  # agents.pool.take_device, or a stand-in in the tests
        self._cond = threading.Condition()
        self._line: deque[object] = deque()
        self._turns = itertools.count()

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._line)

    def take(
        self,
        pool: Callable[[], list[dict[str, Any]]],
        user,
        wait_s: float,
        cancelled: threading.Event,
    ) -> Any:
        """A lease on a free device of ``pool()`` (and its connection), waiting in line up to
        ``wait_s`` seconds; :class:`NoDevice` when none became free (or none can be reached),
        :class:`Cancelled` when ``cancelled`` is set meanwhile."""
        ticket = object()
        deadline = time.monotonic() + wait_s
        with self._cond:
            self._line.append(ticket)
        try:
            unreachable_since = None
            while True:
                devices = pool()
                if not devices:
                    raise NoDevice("the pool has no device (grant one to the project)")
                self._wait_turn(ticket, deadline, wait_s, cancelled)
                remaining = deadline - time.monotonic()
                try:
                    return self._take(
                        devices, user, first=next(self._turns), wait_s=min(TRY_S, remaining)
                    )
                except NoDevice as exc:
                    now = time.monotonic()
                    if "could be reached" in str(exc):  # no device answers at all
                        unreachable_since = unreachable_since or now
                        if now - unreachable_since >= settings.WAYPOINT_POOL_UNREACHABLE_S:
                            raise  # they are gone: waiting longer will not help
                        time.sleep(min(POLL_S, max(0.0, deadline - now)))
                    else:
                        unreachable_since = None
                    if time.monotonic() >= deadline:
                        raise NoDevice(self._too_long(wait_s)) from None
                    if cancelled.is_set():
                        raise Cancelled() from None
        finally:
            with self._cond:
                self._line.remove(ticket)
                self._cond.notify_all()

    def _wait_turn(
        self, ticket: object, deadline: float, wait_s: float, cancelled: threading.Event
    ) -> None:
        """Return once ``ticket`` is the first of the line."""
        with self._cond:
            if self._line[0] is not ticket:
                connection.close()  # a session in line holds no database connection
            while self._line[0] is not ticket:
                if cancelled.is_set():
                    raise Cancelled()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise NoDevice(self._too_long(wait_s))
                self._cond.wait(min(remaining, POLL_S))

    def _too_long(self, wait_s: float) -> str:
        return (
            f"no device of the pool was free within {wait_s:g} s "
            f"({counted(len(self._line), 'session')} in line)"
        )

    def released(self) -> None:
        """A device was given back (the first in line finds it at its next poll)."""
        with self._cond:
            self._cond.notify_all()
