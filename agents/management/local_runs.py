"""What the commands that run agents share (``run_benchmark``, ``make_suite --check-memory``):
virtual devices started for a run, and waiting for a run's episodes."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from agents.models import Run
from devices.models import Device
from devices.services.adb import client_for
from trajectories.jobs import with_true_status
from trajectories.management.acting import acting_user
from trajectories.models import Job, Project

POLL_S = 2.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VirtualPool:
    """N virtual devices of this process, connected to the adb server and granted to the
    project while the run lasts."""

    def __init__(self, count: int, size: str, project: Project):
        self.count, self.size, self.project = count, size, project
        self.devices: list[Any] = []
        self.granted: list[Device] = []
        self.server = settings.ADB_SERVERS[0]

    def __enter__(self) -> list[str]:
        from devices.virtual import VirtualDevice
        from devices.virtual.screen import MISSING_EXTRA, has_playwright

        if not has_playwright():
            raise CommandError(MISSING_EXTRA)
        if not settings.CHROMIUM_PATH:
            raise CommandError("no Chromium to render the virtual devices' apps (CHROMIUM_PATH)")
        client = client_for(self.server)
        try:
            for _ in range(self.count):
                device = VirtualDevice(
                    port=free_port(),
                    size=self.size,
                    seed=0,
                    apps=list(settings.WAYPOINT_VIRTUAL_APPS),
                    chromium_path=settings.CHROMIUM_PATH,
                ).start()
                self.devices.append(device)
                client.connect(device.serial, timeout=10)
                self._wait_online(client, device.serial)
                registered, created = Device.objects.get_or_create(serial=device.serial)
                registered.projects.add(self.project)
                if created:
                    self.granted.append(registered)
        except Exception:
            self.__exit__()
            raise
        return [d.serial for d in self.devices]

    def _wait_online(self, client, serial: str) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if any(i.serial == serial and i.state == "device" for i in client.list()):
                return
            time.sleep(0.2)
        raise CommandError(f"the adb server {self.server} did not connect to {serial}")

    def __exit__(self, *exc_info: Any) -> None:
        client = client_for(self.server)
        for device in self.devices:
            try:
                client.disconnect(device.serial)
            except Exception:  # noqa: BLE001 - the adb server may be gone already
                pass
            device.stop()
        for registered in self.granted:
            registered.delete()


def wait_for_run(run: Run, timeout: float, say: Callable[[str], Any]) -> None:
    """Wait for the run's episodes (played by the Celery workers), saying how many are done;
    CommandError after ``timeout`` seconds (0: never)."""
    deadline = time.monotonic() + timeout if timeout else None
    shown = None
    while True:
        job = with_true_status(Job.objects.get(pk=run.job_id))
        if (job.done, job.total) != shown:
            shown = (job.done, job.total)
            say(f"  {job.done} / {job.total} episodes")
        if job.is_finished:
            return
        if deadline and time.monotonic() > deadline:
            raise CommandError(
                f"run {run.pk} is not finished after {timeout:g} s ({job.done} / {job.total} "
                "episodes); is a Celery worker running?"
            )
        time.sleep(POLL_S)


MAX_DEVICES = 16  # virtual devices a command starts for a run


def run_owner(options: dict[str, Any]):
    """The project a command's run plays in and who starts it (``--project``, ``--user``),
    ``--devices`` checked: CommandError naming what is wrong."""
    project = Project.objects.filter(pk=options["project"]).first()
    if project is None:
        raise CommandError(f"no project {options['project']}")
    user = acting_user(project, options["user"])
    if not 0 <= options["devices"] <= MAX_DEVICES:
        raise CommandError(f"--devices: from 0 to {MAX_DEVICES}")
    return project, user
