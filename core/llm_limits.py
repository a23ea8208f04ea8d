"""Limits on an LLM endpoint (:mod:`core.llm`), shared by every worker process that calls it:
at most ``LLM_MAX_IN_FLIGHT`` requests at once, and at most ``LLM_REQUESTS_PER_MINUTE`` started
in any 60 seconds (0: no rate limit). Each endpoint has its own: the proposer's, the judge's
and the embeddings server's do not share their slots.

Where the limits are kept:
- ``LLM_LIMITS_URL``, a Redis URL (by default the Celery broker's when that is Redis): workers on
  several machines share it. A request's slot is a lease that ends 30 s after the request's
  timeout, so a worker that dies holding one does not keep it.
- otherwise lock files under ``VAR_DIR/llm-limits`` (the embedded set-up): the processes of one
  machine share them, and the operating system frees a dead process's slot.

A request waits for a slot and for the rate at most ``LLM_SLOT_WAIT_S`` seconds, then fails
with :class:`LimitWait`, which the caller reports like any other endpoint failure.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings

POLL_S = 0.05  # how often a waiting request looks for a free slot


class LimitWait(Exception):
    """No slot (or no room in the rate) within ``LLM_SLOT_WAIT_S``."""


class Limits:
    """The numbers in force, read from the settings when a request starts."""

    def __init__(self, endpoint: str, window_s: float = 60.0, timeout_s: float | None = None):
        self.endpoint = endpoint
        self.in_flight = max(1, int(settings.LLM_MAX_IN_FLIGHT))
        self.per_window = max(0, int(settings.LLM_REQUESTS_PER_MINUTE))
        self.window_s = window_s
        timeout_s = settings.LLM_TIMEOUT_S if timeout_s is None else timeout_s
        self.lease_s = float(timeout_s) + 30
        self.wait_s = float(settings.LLM_SLOT_WAIT_S)
        # One set of limits per endpoint: two endpoints do not share their slots.
        self.key = hashlib.sha256(endpoint.encode()).hexdigest()[:16]

    def gave_up(self, started: float) -> None:
        if time.monotonic() - started > self.wait_s:
            what = f"{self.in_flight} at once"
            if self.per_window:
                what += f", {self.per_window} in {self.window_s:g} s"
            raise LimitWait(
                f"no free request slot for {self.endpoint} within {self.wait_s:g} s "
                f"(the limits are {what}: LLM_MAX_IN_FLIGHT, LLM_REQUESTS_PER_MINUTE)"
            )


class FileLimiter:
    """Slots are lock files (``flock``); the rate is a list of start times under a lock."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @contextmanager
    def slot(self, limits: Limits) -> Iterator[None]:
        folder = self.folder / limits.key
        folder.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        held = self._take_slot(folder, limits, started)
        try:
            self._take_rate(folder, limits, started)
            yield
        finally:
            os.close(held)  # closing the file frees its lock

    def _take_slot(self, folder: Path, limits: Limits, started: float) -> int:
        while True:
            for i in range(limits.in_flight):
                fd = os.open(folder / f"slot-{i}", os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return fd
                except BlockingIOError:
                    os.close(fd)
            limits.gave_up(started)
            time.sleep(POLL_S)

    def _take_rate(self, folder: Path, limits: Limits, started: float) -> None:
        if not limits.per_window:
            return
        while True:
            fd = os.open(folder / "rate.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                now = time.time()
                path = folder / "rate.json"
                try:
                    starts = [t for t in json.loads(path.read_text()) if t > now - limits.window_s]
                except (FileNotFoundError, ValueError, TypeError):
                    starts = []
                if len(starts) < limits.per_window:
                    path.write_text(json.dumps([*starts, now]))
                    return
                wait = min(starts) + limits.window_s - now
            finally:
                os.close(fd)
            limits.gave_up(started)
            time.sleep(min(max(wait, POLL_S), 1.0))


# Takes a slot and a place in the rate in one step, with Redis's clock for every worker.
# KEYS: slots, starts; ARGV: in_flight, lease_ms, per_window, window_ms, token.
# Answers 0 (taken), -1 (no free slot) or the milliseconds until the rate has room.
TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return -1 end
local per_window = tonumber(ARGV[3])
if per_window > 0 then
  local window = tonumber(ARGV[4])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
  if redis.call('ZCARD', KEYS[2]) >= per_window then
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    return math.max(1, tonumber(oldest[2]) + window - now)
  end
  redis.call('ZADD', KEYS[2], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[2], window)
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[5])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 0
"""


class RedisLimiter:
    """Slots are leases in a sorted set (score: when they end); the rate a set of start times."""

    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url)
        self.take = self.client.register_script(TAKE)

    @contextmanager
    def slot(self, limits: Limits) -> Iterator[None]:
        slots, starts = f"waypoint:llm:{limits.key}:slots", f"waypoint:llm:{limits.key}:starts"
        token = uuid.uuid4().hex
        started = time.monotonic()
        while True:
            answer = int(
                self.take(
                    keys=[slots, starts],
                    args=[
                        limits.in_flight,
                        int(limits.lease_s * 1000),
                        limits.per_window,
                        int(limits.window_s * 1000),
                        token,
                    ],
                )
            )
            if answer == 0:
                break
            limits.gave_up(started)
            time.sleep(POLL_S if answer < 0 else min(answer / 1000, 1.0))
        try:
            yield
        finally:
            self.client.zrem(slots, token)


_limiters: dict[str, Any] = {}


def limiter() -> FileLimiter | RedisLimiter:
    """The limiter of ``LLM_LIMITS_URL`` (one per process and place)."""
    url = settings.LLM_LIMITS_URL
    place = url or str(Path(settings.VAR_DIR) / "llm-limits")
    if place not in _limiters:
        if url.startswith(("redis://", "rediss://", "unix://")):
            _limiters[place] = RedisLimiter(url)
        elif url:
            raise ValueError(f"LLM_LIMITS_URL: {url!r} is not a Redis URL (redis://host:port/db)")
        else:
            _limiters[place] = FileLimiter(Path(place))
    return _limiters[place]


@contextmanager
def request_slot(
    endpoint: str, window_s: float = 60.0, timeout_s: float | None = None
) -> Iterator[None]:
    """Hold one of the endpoint's request slots (waiting for it, and for the rate) for a
    request of at most ``timeout_s`` (default ``LLM_TIMEOUT_S``)."""
    with limiter().slot(Limits(endpoint, window_s, timeout_s)):
        yield
