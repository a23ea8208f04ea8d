"""Trainers that vanish, a server that is killed, and more sessions than devices: the devices
come back, the stored rollouts stay, and the sessions wait their turn."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from django.conf import settings

from agents.reference import solver_for
from devices.models import Lease
from rl.client import WaypointEnv
from rl.episode import reap_lost_rollouts
from rl.models import Rollout
from rl.protocol import WaypointAction
from tests.conftest import REPO
from tests.devices.conftest import free_port
from trajectories.models import Step, Trajectory

from .conftest import ORDER, WEATHER, seen_by_solver

GARBLED = WaypointAction(text="tap it", format="mobile_use")


def wait_until(condition, timeout: float, what: str) -> float:
    """Seconds until ``condition()`` held."""
    began = time.monotonic()
    while not condition():
        assert time.monotonic() - began < timeout, f"{what} within {timeout} s"
        time.sleep(0.1)
    return time.monotonic() - began


@pytest.mark.django_db(transaction=True)
def test_a_silent_trainers_device_is_freed_within_the_idle_timeout(serve, token):
    url = serve(idle_s=2)
    with WaypointEnv(url, token) as env:
        env.reset(seed=1, task=WEATHER)
        env.step(WaypointAction(action={"type": "open_app", "package": "SkyCast"}))
        assert Lease.objects.exists()
        # The trainer says nothing more, its connection open.
        wait_until(lambda: not Lease.objects.exists(), 2 + 3, "the device is freed")
        with pytest.raises(RuntimeError) as ended:
            env.step(WaypointAction(action={"type": "back"}))
        assert str(ended.value) == (
            "Server error: its session sent no request for 2 s: it is closed, its device "
            "released (code: SESSION_IDLE)"
        )
        assert env.reset(seed=1, task=WEATHER).observation.step == 0  # a new session
    rollout = Rollout.objects.order_by("pk").first()
    assert (rollout.status, rollout.reason, rollout.steps) == (
        "abandoned",
        "its session sent no request for 2 s",
        1,
    )
    trajectory = rollout.trajectory
    assert trajectory.status == "interrupted"  # its step kept: it opens like any episode
    assert Step.objects.filter(trajectory=trajectory).count() == 1


CLIENT = """
import sys, time
from rl.client import WaypointEnv
env = WaypointEnv(sys.argv[1], sys.argv[2]).connect()
env.reset(seed=1, task=sys.argv[3])
print("playing", flush=True)
time.sleep(600)
"""


@pytest.mark.django_db(transaction=True)
def test_a_killed_trainers_device_is_freed_at_once(serve, token):
    url = serve(idle_s=30)
    trainer = subprocess.Popen(
        [sys.executable, "-c", CLIENT, url, token, WEATHER],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert trainer.stdout.readline() == "playing\n"
        assert Lease.objects.exists()
        trainer.send_signal(signal.SIGKILL)
        waited = wait_until(lambda: not Lease.objects.exists(), 30, "the device is freed")
    finally:
        trainer.kill()
        trainer.wait()
    assert waited < 5  # the connection broke: no need to wait for the idle timeout
    assert Rollout.objects.get().status == "abandoned"


def server_process(worker_database_url, adb_servers, project, port: int) -> subprocess.Popen:
    env = dict(
        os.environ,
        DATABASE_URL=worker_database_url,
        ADB_SERVERS=",".join(adb_servers),
        MEDIA_ROOT=str(settings.MEDIA_ROOT),
        WAYPOINT_VAR_DIR=str(settings.VAR_DIR),
        DEBUG=os.environ.get("DEBUG", "1"),
    )
    command = [sys.executable, "manage.py", "env_server", "--project", str(project.pk)]
    command += ["--port", str(port), "--tasks", f"{WEATHER},{ORDER}"]
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert line.startswith("Waypoint RL environment server for project "), line

    def listening() -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0

    wait_until(listening, 20, "the server listens")
    return process


@pytest.mark.django_db(transaction=True)
def test_a_killed_server_loses_no_stored_rollout(
    pool, project, token, worker_database_url, adb_servers
):
    port = free_port()
    server = server_process(worker_database_url, adb_servers, project, port)
    try:
        with WaypointEnv(f"http://127.0.0.1:{port}", token) as env:
            first = env.reset(seed=1, task=ORDER, run="doomed", with_xml=True)
            solver = solver_for(ORDER)
            solver.start(first.observation.instruction)
            seen = first
            for _ in range(2):  # open FreshCart, its Orders tab
                step = solver.act(seen_by_solver(seen.observation))
                seen = env.step(WaypointAction(action=step.action, memory=step.memory))
            server.send_signal(signal.SIGKILL)
            server.wait()
    finally:
        server.kill()
        server.wait()
    # What the server had stored stays: the trajectory's steps and the rewards of each.
    rollout = Rollout.objects.get()
    assert (rollout.status, rollout.steps, len(rollout.rewards)) == ("running", 2, 2)
    trajectory = Trajectory.objects.get()
    assert trajectory.status == "recording"
    assert Step.objects.filter(trajectory=trajectory).count() == 2
    # The next server (or any, once a minute) ends it as lost, its trajectory interrupted.
    assert reap_lost_rollouts(stale_s=0) == 1
    rollout.refresh_from_db()
    trajectory.refresh_from_db()
    assert rollout.status == "lost"
    assert trajectory.status == "interrupted"
    assert trajectory.metadata["rollout"]["rewards"] == rollout.rewards
    assert trajectory.metadata["rollout"]["run"] == "doomed"


@pytest.mark.django_db(transaction=True)
def test_more_sessions_than_devices_wait_their_turn_and_all_play(serve, token):
    url = serve()
    played: dict[int, dict] = {}

    def trainer(seed: int) -> None:
        with WaypointEnv(url, token) as env:
            began = time.monotonic()
            env.reset(seed=seed, task=WEATHER)
            waited = time.monotonic() - began
            result = None
            for _ in range(3):  # three invalid outputs end the episode, the device freed
                result = env.step(GARBLED)
            played[seed] = {"waited": waited, "done": result.done}

    trainers = [threading.Thread(target=trainer, args=(seed,)) for seed in (1, 2, 3)]
    for thread in trainers:
        thread.start()
    for thread in trainers:
        thread.join(timeout=60)
    assert sorted(played) == [1, 2, 3]
    assert all(p["done"] for p in played.values())
    waits = sorted(p["waited"] for p in played.values())
    assert waits[-1] > waits[0] + 0.3  # one device: the last waited for the others' episodes
    assert Rollout.objects.filter(status="truncated").count() == 3
    assert not Lease.objects.exists()
