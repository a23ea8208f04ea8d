"""The server's line for devices: many sessions on few devices wait their turn, first come first
served, and never deadlock (the devices here are stand-ins: the line is what is tested)."""

from __future__ import annotations

import threading
import time

import pytest

from agents.pool import NoDevice
from rl.queue import Cancelled, DeviceQueue

DEVICES = [{"serial": f"phone-{i}", "adb_server": "127.0.0.1:5037"} for i in range(4)]


class StandInPool:
    """Leases of stand-in devices, taken as ``agents.pool.take_device`` takes them: a free one
    at once, else polling until ``wait_s`` is over."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held: set[str] = set()
        self.most_held = 0
        self.given: list[int] = []  # the sessions, in the order they got a device

    def take(self, pool, user, first=0, wait_s=1.0):
        deadline = time.monotonic() + wait_s
        while True:
            with self.lock:
                free = [d["serial"] for d in pool if d["serial"] not in self.held]
                if free:
                    self.held.add(free[0])
                    self.most_held = max(self.most_held, len(self.held))
                    self.given.append(user)
                    return free[0], None
            if time.monotonic() >= deadline:
                raise NoDevice(f"no device of the pool was free within {wait_s:g} s")
            time.sleep(0.005)

    def give_back(self, serial: str) -> None:
        with self.lock:
            self.held.discard(serial)


def test_fifty_sessions_on_four_devices_each_get_one_in_turn_and_none_is_left_waiting():
    devices = StandInPool()
    queue = DeviceQueue(devices.take)
    done: list[int] = []
    served = []

    def session(number: int) -> None:
        serial, _ = queue.take(lambda: DEVICES, number, 30, threading.Event())
        served.append(number)
        time.sleep(0.05)  # an episode
        devices.give_back(serial)
        queue.released()
        done.append(number)

    threads = []
    for number in range(50):
        threads.append(threading.Thread(target=session, args=(number,)))
        threads[-1].start()
        # They come one after another: the next once this one is in line (or served).
        while queue.waiting + len(served) < number + 1:
            time.sleep(0.001)
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(done) == list(range(50))  # every session got a device: no deadlock
    assert devices.most_held == 4
    assert queue.waiting == 0
    assert devices.given == list(range(50))  # first come, first served


def test_a_session_closed_while_it_waits_leaves_the_line():
    devices = StandInPool()
    queue = DeviceQueue(devices.take)
    for _ in DEVICES:
        queue.take(lambda: DEVICES, "holder", 1, threading.Event())
    closed = threading.Event()
    threading.Timer(0.3, closed.set).start()
    began = time.monotonic()
    with pytest.raises(Cancelled):
        queue.take(lambda: DEVICES[:1], "waiter", 30, closed)
    assert time.monotonic() - began < 3
    assert queue.waiting == 0


def test_a_wait_that_is_over_says_so_and_how_many_were_in_line():
    devices = StandInPool()
    queue = DeviceQueue(devices.take)
    queue.take(lambda: DEVICES[:1], "holder", 1, threading.Event())
    with pytest.raises(NoDevice) as refused:
        queue.take(lambda: DEVICES[:1], "waiter", 0.5, threading.Event())
    assert str(refused.value) == "no device of the pool was free within 0.5 s (1 session in line)"


def test_a_pool_without_devices_is_refused_at_once():
    queue = DeviceQueue(StandInPool().take)
    with pytest.raises(NoDevice) as refused:
        queue.take(lambda: [], "anyone", 30, threading.Event())
    assert str(refused.value) == "the pool has no device (grant one to the project)"
