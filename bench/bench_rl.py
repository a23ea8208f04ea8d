"""The RL environment server (issue 38), measured through its own client over the loopback.

    DATABASE_URL=postgres://... .venv/bin/python bench/bench_rl.py [--steps 60] [--devices 1,2,4]
        [--seconds 30] [--sessions 50]

1. Step overhead beyond the device's own work: a session steps the device ``--steps`` times
   (opening apps, going home: every step changes the screen), and each step's time at the client
   (request to answer) less the device's work the server reports (``timings.device_ms``: the
   action, the settle wait, the capture of the screenshot and the XML) is the server's and the
   protocol's: reading the output, storing the step and its screen, the observation's PNG in
   base64, JSON over the WebSocket. p50 and p90, with the project's storage on and off.
2. Steps per second with 1, 2 and 4 devices: as many sessions as devices, each stepping its own
   device for ``--seconds`` (episodes of 20 steps, then a reset), and the ratio to one device.
3. Sessions opened and closed per minute: bare sessions (connect, state, close), and sessions
   that play a one-step episode (connect, reset, terminate, close) on the devices.
4. ``--sessions`` (50) sessions at once on 4 devices, each resetting and terminating: all are
   served (the line never deadlocks), in how long, and the longest wait for a device.

Everything lives in a temporary folder (SQLite unless DATABASE_URL is set: use PostgreSQL, as
production does, for the sessions at once), a private adb server, N virtual devices. The
machine is shared: say its load with the figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Sets up Django on a throwaway database and storage, and a private adb server.
from bench_agents import Devices, free_port, load, percentile  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from rl.client import WaypointEnv  # noqa: E402
from rl.episode import Setup  # noqa: E402
from rl.models import RLSettings  # noqa: E402
from rl.protocol import WaypointAction  # noqa: E402
from rl.server import build_app  # noqa: E402
from rl.serving import ServedInThread  # noqa: E402
from trajectories.services import do_create_project  # noqa: E402

TASK = "weather-temp-now"
EPISODE_STEPS = 20
MOVES = [
    {"type": "open_app", "package": "com.waypoint.skycast"},
    {"type": "home"},
    {"type": "open_app", "package": "com.waypoint.freshcart"},
    {"type": "home"},
]
TERMINATE = WaypointAction(action={"type": "terminate", "status": "failure"})


def ms(samples: list[float]) -> str:
    return (
        f"p50 {statistics.median(samples):6.1f} ms  p90 {percentile(samples, 0.9):6.1f} ms  "
        f"(n={len(samples)})"
    )


def overhead(url: str, token: str, steps: int) -> tuple[list[float], list[float]]:
    """Per step: the time at the client less the device's work, and the device's work."""
    extra, device = [], []
    with WaypointEnv(url, token) as env:
        done = 0
        while done < steps:
            env.reset(seed=1, task=TASK, max_steps=EPISODE_STEPS + 1)
            for i in range(EPISODE_STEPS):
                began = time.perf_counter()
                result = env.step(WaypointAction(action=MOVES[i % len(MOVES)]))
                took = (time.perf_counter() - began) * 1000
                work = result.observation.timings.get("device_ms", 0.0)
                extra.append(took - work)
                device.append(work)
                done += 1
            env.step(TERMINATE)
    return extra, device


def steps_per_second(url: str, token: str, sessions: int, seconds: float) -> float:
    counts = [0] * sessions
    stop = time.monotonic() + seconds

    def play(n: int) -> None:
        with WaypointEnv(url, token) as env:
            while time.monotonic() < stop:
                env.reset(seed=n + 1, task=TASK, max_steps=EPISODE_STEPS + 1)
                for i in range(EPISODE_STEPS):
                    if time.monotonic() >= stop:
                        break
                    env.step(WaypointAction(action=MOVES[i % len(MOVES)]))
                    counts[n] += 1
                env.step(TERMINATE)

    began = time.monotonic()
    threads = [threading.Thread(target=play, args=(n,)) for n in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.monotonic() - began)


def sessions_per_minute(url: str, token: str, seconds: float, episode: bool) -> float:
    count, stop = 0, time.monotonic() + seconds
    began = time.monotonic()
    while time.monotonic() < stop:
        with WaypointEnv(url, token) as env:
            if episode:
                env.reset(seed=count, task=TASK)
                env.step(TERMINATE)
            else:
                env.state()
        count += 1
    return count / (time.monotonic() - began) * 60


def at_once(url: str, token: str, sessions: int) -> tuple[int, float, float]:
    """Sessions served, the wall time, the longest wait for a device."""
    waits: list[float] = []
    errors: list[str] = []

    def trainer(n: int) -> None:
        try:
            with WaypointEnv(url, token) as env:
                began = time.monotonic()
                env.reset(seed=n, task=TASK)
                waits.append(time.monotonic() - began)
                env.step(TERMINATE)
        except Exception as exc:  # noqa: BLE001 - counted and printed
            errors.append(str(exc))

    began = time.monotonic()
    threads = [threading.Thread(target=trainer, args=(n,)) for n in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=1800)
    if errors:
        print(f"  {len(errors)} sessions failed, e.g. {errors[0]}")
    return len(waits), time.monotonic() - began, max(waits, default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--devices", default="1,2,4")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--sessions", type=int, default=50)
    args = parser.parse_args()
    counts = [int(n) for n in args.devices.split(",") if n.strip()]

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.get_or_create(username="bench")[0]
    token = Token.objects.get_or_create(user=user)[0].key
    project = do_create_project("Bench RL", user)
    devices = Devices(project)
    print(f"bench_rl: {load()}")
    try:
        devices.up_to(max(counts + [1]))
        served = []

        def serve(serials: list[str]) -> str:
            setup = Setup(project=project, tasks=(TASK,), devices=tuple(serials))
            app = build_app(setup, max_sessions=args.sessions + 8, idle_s=300, wait_s=1800)
            served.append(ServedInThread(app, free_port()))
            return served[-1].url

        one = serve(devices.up_to(1))
        print(f"1. step overhead beyond the device's work, {args.steps} steps:")
        for stored in (True, False):
            RLSettings.objects.update_or_create(
                project=project, defaults={"store_rollouts": stored}
            )
            extra, work = overhead(one, token, args.steps)
            print(f"  storage {'on ' if stored else 'off'}  overhead {ms(extra)}")
            print(f"               device work {ms(work)}")
        RLSettings.objects.update_or_create(project=project, defaults={"store_rollouts": True})

        print(f"2. steps per second, {args.seconds:g} s each, storage on:")
        rates = {}
        for n in counts:
            rates[n] = steps_per_second(serve(devices.up_to(n)), token, n, args.seconds)
            print(f"  {n} device(s): {rates[n]:5.2f} steps/s  ({rates[n] / rates[counts[0]]:.2f}x)")

        print("3. sessions opened and closed per minute:")
        print(f"  bare (connect, state, close): {sessions_per_minute(one, token, 10, False):7.0f}")
        rate = sessions_per_minute(one, token, 20, True)
        print(f"  with a one-step episode on the device: {rate:7.0f}")

        many = serve(devices.up_to(max(counts)))
        done, wall, longest = at_once(many, token, args.sessions)
        print(
            f"4. {args.sessions} sessions at once on {max(counts)} devices: {done} served in "
            f"{wall:.1f} s, the longest wait for a device {longest:.1f} s"
        )
        for server in served:
            server.stop()
    finally:
        devices.stop()
    print(f"bench_rl: {load()}")


if __name__ == "__main__":
    main()
