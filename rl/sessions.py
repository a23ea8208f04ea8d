"""A trainer's session on the environment server, and the watchdog that keeps the leases of the
devices in use alive.

Each session does all of its work (the line for a device, the device, the database) in one
thread of its own, in the order the requests came: a reset, the steps and the close are never
run at the same time. A request waits for its turn and its answer; ``close`` only queues the end
and returns (the server calls it from its event loop). A session ends when its trainer closes
it, when its connection breaks, or when it sends no request for the server's idle time
(``rl.server`` closes it then): its episode ends as it stands, its device is released.

The watchdog (one thread per server process) renews, every few seconds, the lease of each
device in use and the heartbeat of its rollout (which tells the reaper it lives), and once a
minute ends as lost the rollouts of servers that stopped.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection

from agents.pool import NoDevice
from devices.services import LeaseConflict, do_heartbeat

from .episode import Episode, EpisodeError, Setup, check_reset, heartbeat_rollouts
from .episode import reap_lost_rollouts as reap
from .protocol import WaypointAction, WaypointObservation, WaypointState
from .queue import Cancelled, DeviceQueue

log = logging.getLogger(__name__)

REAP_EVERY_S = 60.0
TICK_S = 5.0  # leases last WAYPOINT_LEASE_SECONDS (60 s by default): renewed well before


@dataclass
class ServerConfig:
    """One environment server: what it serves, its line for devices, its limits."""

    setup: Setup
    queue: DeviceQueue
    max_sessions: int
    idle_s: float
    wait_s: float


def stale_s() -> float:
    """A rollout whose heartbeat is older than this was left by a server that stopped."""
    return max(30.0, 3.0 * settings.WAYPOINT_LEASE_SECONDS)


class Session:
    """One trainer's session (see the module's docstring)."""

    def __init__(self, server: ServerConfig, user) -> None:
        self.server = server
        self.user = user
        self.episode: Episode | None = None
        self.episode_id: str | None = None
        self.rng = random.Random()  # the seeds of resets that name none
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rl-session")
        self.closing = threading.Event()
        WATCHDOG.add(self)

    # ---------------------------------------------------------------- requests

    def _call(self, fn, *args: Any) -> Any:
        if self.closing.is_set():
            raise EpisodeError("this session is closed")
        return self._worker.submit(fn, *args).result()

    def reset(self, args: dict[str, Any]) -> WaypointObservation:
        return self._call(self._reset, args)

    def step(self, action: WaypointAction) -> WaypointObservation:
        return self._call(self._step, action)

    def state(self) -> WaypointState:
        episode = self.episode
        if episode is None:
            return WaypointState()
        return episode.state(self.episode_id)

    def _reset(self, args: dict[str, Any]) -> WaypointObservation:
        server = self.server
        reset = check_reset(server.setup, args, self.rng)
        if self.episode is not None:
            # Its device goes back first: a session never holds one device waiting for another.
            self.episode.abandon("the trainer reset the session before the episode ended")
            self.episode = None
        try:
            lease, conn = server.queue.take(
                server.setup.pool, self.user, server.wait_s, self.closing
            )
        except NoDevice as exc:
            raise EpisodeError(str(exc)) from None
        except Cancelled:
            raise EpisodeError("the session was closed while it waited for a device") from None
        episode = Episode(server.setup, self.user, reset, lease, conn, server.queue.released)
        try:
            observation = episode.begin()
        except BaseException:
            episode.abandon("the episode could not start")
            raise
        self.episode, self.episode_id = episode, str(episode.rollout.pk)
        return observation

    def _step(self, action: WaypointAction) -> WaypointObservation:
        if self.episode is None:
            raise EpisodeError("no episode: reset first")
        observation = self.episode.step(action)
        if self.episode.done:
            # Between episodes a trainer may think for minutes: no connection held meanwhile.
            connection.close()
        return observation

    # ---------------------------------------------------------------- ending

    def close(self, why: str = "its trainer closed the session") -> None:
        """End the session: its episode ends as it stands and its device is freed (queued
        behind the request in progress, if any; returns at once)."""
        if self.closing.is_set():
            return
        self.closing.set()
        WATCHDOG.discard(self)
        self._worker.submit(self._close, why)
        self._worker.shutdown(wait=False)

    def _close(self, why: str) -> None:
        try:
            if self.episode is not None:
                self.episode.abandon(why)
        finally:
            connection.close()

    def holding(self) -> Episode | None:
        """The episode whose device this session holds now."""
        episode = self.episode
        return episode if episode is not None and not episode.released else None


class Watchdog:
    """The one thread that watches every session of this process (see the module)."""

    def __init__(self) -> None:
        self._sessions: set[Session] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._last_reap = 0.0

    def add(self, session: Session) -> None:
        with self._lock:
            self._sessions.add(session)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="rl-watchdog", daemon=True)
                self._thread.start()

    def discard(self, session: Session) -> None:
        with self._lock:
            self._sessions.discard(session)

    def sessions(self) -> list[Session]:
        with self._lock:
            return list(self._sessions)

    def _run(self) -> None:
        while True:
            time.sleep(TICK_S)
            try:
                self.look(self.sessions())
            except Exception:  # noqa: BLE001 - the watchdog goes on; the log has it
                log.exception("the RL session watchdog failed a round")
            finally:
                connection.close()  # a round every few seconds: no connection held between

    def look(self, sessions: list[Session]) -> None:
        """One round: renew, reap."""
        live = []
        for session in sessions:
            episode = session.holding()
            if episode is None:
                continue
            try:
                do_heartbeat(episode.lease.serial, session.user)
            except LeaseConflict:
                episode.lease_lost.set()
            if episode.rollout is not None:
                live.append(episode.rollout.pk)
        if live:
            heartbeat_rollouts(live)
        now = time.monotonic()
        if sessions and now - self._last_reap >= REAP_EVERY_S:
            self._last_reap = now
            reap(stale_s())


WATCHDOG = Watchdog()
