"""Agent runs on virtual devices: the harness's overhead per step, and episodes per hour.

    .venv/bin/python bench/bench_agents.py [--episodes 12] [--devices 1,2,4] [--agent solver]

1. Harness overhead per step, the agent's (model's) time excluded: episodes played in this
   process by the runner's own code (``run_episode``, as a worker runs it), by the scripted
   solver and by the random agent (whose "model" takes no time). Each step's time without the
   agent's is split into the device's work (the action, the settle wait, the capture of the
   screenshot and the XML) and the harness's own (reading the observation from storage, checking
   and storing the step with its screen and the agent's output, the bookkeeping); the episode's
   own cost (lease, reset to the seed, starting and ending the recording with its grading and
   memory labels, release) is shown apart.
2. Episodes per hour with 1, 2 and 4 virtual devices: N virtual devices and N Celery workers
   (solo pool) on this machine, one run of ``--episodes`` episodes each, timed from the run's
   start to its last episode.

Everything lives in a temporary folder (SQLite unless DATABASE_URL is set, a file broker, a
private adb server). The machine is shared: say its load with the figures.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
TMP = tempfile.mkdtemp(prefix="bench-agents-")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{TMP}/db.sqlite3")
os.environ["WAYPOINT_VAR_DIR"] = TMP
os.environ["MEDIA_ROOT"] = f"{TMP}/media"
os.environ["WAYPOINT_BROKER_DIR"] = f"{TMP}/broker"
os.environ["WAYPOINT_JOB_TMP_DIR"] = f"{TMP}/jobs"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ADB_PORT = free_port()
os.environ["ADB_SERVERS"] = f"127.0.0.1:{ADB_PORT}"

import django  # noqa: E402

django.setup()

import adbutils  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from agents.models import Episode  # noqa: E402
from agents.services import do_start_run  # noqa: E402
from devices.models import Device  # noqa: E402
from devices.virtual import VirtualDevice  # noqa: E402
from trajectories.models import Job  # noqa: E402
from trajectories.services import do_create_project  # noqa: E402

TASK = "freshcart-order-number"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def line(name: str, samples: list[float]) -> str:
    return (
        f"  {name:<34} median {statistics.median(samples):7.1f} ms   "
        f"p90 {percentile(samples, 0.9):7.1f} ms   (n={len(samples)})"
    )


class Devices:
    """Virtual devices on the private adb server, granted to the project."""

    def __init__(self, project):
        self.project = project
        self.started: list[VirtualDevice] = []
        self.adb = adbutils.adb_path()
        self.env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(ADB_PORT)}
        subprocess.run([self.adb, "-P", str(ADB_PORT), "start-server"], env=self.env,
                       capture_output=True, check=True)  # fmt: skip

    def up_to(self, count: int) -> list[str]:
        while len(self.started) < count:
            phone = VirtualDevice(
                port=free_port(), size="540x1200", seed=0, chromium_path=settings.CHROMIUM_PATH
            ).start()
            self.started.append(phone)
            subprocess.run([self.adb, "-P", str(ADB_PORT), "connect", phone.serial],
                           env=self.env, capture_output=True, check=True)  # fmt: skip
            client = adbutils.AdbClient(port=ADB_PORT)
            deadline = time.monotonic() + 20
            while not any(d.serial == phone.serial and d.state == "device" for d in client.list()):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"adb never saw {phone.serial}")
                time.sleep(0.2)
            Device.objects.get_or_create(serial=phone.serial)[0].projects.add(self.project)
        return [d.serial for d in self.started[:count]]

    def stop(self) -> None:
        for phone in self.started:
            phone.stop()
        subprocess.run([self.adb, "-P", str(ADB_PORT), "kill-server"], env=self.env,
                       capture_output=True)  # fmt: skip


def wait(run, timeout: float = 3600) -> None:
    deadline = time.monotonic() + timeout
    while not Job.objects.get(pk=run.job_id).is_finished:
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run.pk} did not finish in {timeout} s")
        time.sleep(0.2)


def overhead(project, user, serial: str, agent: str, episodes: int, max_steps: int) -> None:
    """Part 1: episodes played in this process, as a worker plays them."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    try:
        run = do_start_run(
            project,
            user,
            agent=agent,
            tasks=[TASK],
            seeds=f"1..{episodes}",
            max_steps=max_steps,
            devices=[serial],
        )
    finally:
        settings.CELERY_TASK_ALWAYS_EAGER = False
    played = list(Episode.objects.filter(run=run).select_related("trajectory"))
    without_agent, device, harness, observe, store, per_episode = [], [], [], [], [], []
    for episode in played:
        turns = [t for t in episode.trajectory.metadata["agent"]["turns"] if "timings" in t]
        for turn in turns:
            t = turn["timings"]
            rest = t["step_ms"] - turn["latency_ms"]
            on_device = t.get("action_ms", 0) + t.get("settle_ms", 0) + t.get("capture_ms", 0)
            without_agent.append(rest)
            device.append(on_device)
            harness.append(rest - on_device)
            observe.append(t["observe_ms"])
            store.append(t.get("store_ms", 0))
        per_episode.append(episode.duration_ms - sum(t["timings"]["step_ms"] for t in turns))
    solved = sum(bool(e.success) for e in played)
    print(f"{agent}: {len(played)} episodes ({solved} solved), {len(harness)} steps")
    print(line("step without the agent's time", without_agent))
    print(line("  the device: action, settle, capture", device))
    print(line("  the harness's own", harness))
    print(line("    of which: read the observation", observe))
    print(line("    of which: store the step", store))
    print(line("per episode besides its steps", per_episode))


def start_workers(count: int) -> list[subprocess.Popen]:
    workers = []
    for i in range(count):
        log = open(Path(TMP) / f"worker-{i}.log", "wb")  # noqa: SIM115 - kept for the process
        workers.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "-P",
                    "solo",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "-n",
                    f"bench{i}@%h",
                    "--loglevel=warning",
                ],
                cwd=REPO,
                env=os.environ,
                stdout=log,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        )
    time.sleep(6)  # the workers import Django and connect to the broker
    return workers


def stop_workers(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


def throughput(project, user, devices: Devices, counts: list[int], agent: str, episodes: int):
    """Part 2: a run of ``episodes`` episodes on N devices with N workers."""
    rates = {}
    for n in counts:
        serials = devices.up_to(n)
        workers = start_workers(n)
        try:
            began = time.monotonic()
            run = do_start_run(
                project,
                user,
                agent=agent,
                tasks=[TASK],
                seeds=f"{100 * n}..{100 * n + episodes - 1}",
                devices=serials,
            )
            wait(run)
            seconds = time.monotonic() - began
        finally:
            stop_workers(workers)
        played = Episode.objects.filter(run=run)
        solved = played.filter(success=True).count()
        rates[n] = 3600 * episodes / seconds
        print(
            f"  {n} device{'s' if n > 1 else ' '} / {n} worker{'s' if n > 1 else ' '}: "
            f"{episodes} episodes ({solved} solved) in {seconds:6.1f} s = "
            f"{rates[n]:7.0f} episodes/hour   ({load()})"
        )
    base = rates[counts[0]]
    print("  ratio to 1 device: " + ", ".join(f"{n}: {rates[n] / base:.2f}x" for n in counts))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=12, help="per throughput run")
    parser.add_argument("--overhead-episodes", type=int, default=6)
    parser.add_argument("--devices", default="1,2,4")
    parser.add_argument("--agent", default="solver")
    args = parser.parse_args()
    counts = [int(n) for n in args.devices.split(",")]

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench", password="bench-password")
    project = do_create_project("Bench agents", user)
    devices = Devices(project)
    try:
        [serial] = devices.up_to(1)
        print(f"Harness overhead per step ({load()})")
        overhead(project, user, serial, "solver", args.overhead_episodes, 30)
        overhead(project, user, serial, "random,seed=1", args.overhead_episodes, 10)
        print(f"\nEpisodes per hour, agent {args.agent} on {TASK} ({load()})")
        throughput(project, user, devices, counts, args.agent, args.episodes)
    finally:
        devices.stop()


if __name__ == "__main__":
    main()
