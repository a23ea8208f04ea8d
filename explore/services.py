"""Starting, stopping and resuming explorations; each app's deny-list.

Every start checks what it is given (the app is installed on the device, the budget is a
number of steps or minutes, the device is free) and queues a job (kind ``explore``) that a
Celery worker runs (``explore.walk.run_exploration_job``).
"""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.db import transaction

from devices.models import Device
from devices.services import DeviceUnavailable, connect
from devices.services.adb import DEVICE_ERRORS, installed_packages
from devices.services.environment import check_seed
from devices.services.leases import active_lease
from trajectories import events
from trajectories.jobs import enqueue_job
from trajectories.models import Job, JobKind, Project
from trajectories.services import record_event
from trajectories.validation import InvalidData, shown

from .elements import check_deny_entries
from .models import DenyList, Exploration, ExplorationStatus, Strategy

MAX_STEPS = 100_000
MAX_MINUTES = 24 * 60
_BUDGET = re.compile(r"\s*(\d+)\s*(steps?|minutes?|min|m)?\s*", re.IGNORECASE)


def check_budget(value: Any) -> tuple[int | None, int | None]:
    """``200`` or ``200steps`` (steps), ``30min`` or ``30minutes`` (minutes): (steps, seconds)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    match = _BUDGET.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise InvalidData(
            "budget: give a number of steps (200 or 200steps) or minutes (30min), got "
            + shown(value)
        )
    number, unit = int(match.group(1)), (match.group(2) or "steps").lower()
    if unit.startswith("step"):
        if not 1 <= number <= MAX_STEPS:
            raise InvalidData(f"budget: from 1 to {MAX_STEPS} steps, got {number}")
        return number, None
    if not 1 <= number <= MAX_MINUTES:
        raise InvalidData(f"budget: from 1 to {MAX_MINUTES} minutes, got {number}")
    return None, number * 60


def check_strategy(value: Any) -> str:
    if value in (None, ""):
        return Strategy.DFS
    if value not in Strategy.values:
        raise InvalidData(
            f"strategy: {shown(value)} is not a strategy (known: {', '.join(Strategy.values)})"
        )
    return value


def check_free(serial: str) -> None:
    lease = active_lease(serial)
    if lease is not None:
        raise InvalidData(
            f"device: {serial} is busy: {lease.holder.get_username()} holds it until "
            f"{lease.expires_at:%H:%M:%S}"
        )
    running = Exploration.objects.filter(
        serial=serial, status__in=[ExplorationStatus.QUEUED, ExplorationStatus.RUNNING]
    ).first()
    if running is not None:
        raise InvalidData(f"device: {serial} is busy: exploration {running.pk} is walking it")


def check_app_on_device(serial: str, app: Any) -> tuple[str, str]:
    """The app's package and the device's adb server; the app must be installed there."""
    if not isinstance(app, str) or not app.strip():
        raise InvalidData("app: name the app's package, e.g. com.waypoint.mailbox")
    app = app.strip()
    try:
        conn = connect(serial)
        packages = installed_packages(conn.device)
    except (DeviceUnavailable, *DEVICE_ERRORS) as exc:
        raise InvalidData(f"device: {serial} is not connected ({exc})") from None
    if app not in packages:
        raise InvalidData(f"app: {shown(app)} is not installed on device {serial}")
    return app, conn.adb_server


def do_start_exploration(
    project: Project,
    actor,
    *,
    app: Any,
    serial: Any,
    budget: Any,
    strategy: Any = None,
    seed: Any = 0,
    allow: Any = None,
) -> Exploration:
    """Check the request and queue the exploration's job."""
    if not isinstance(serial, str) or not serial.strip():
        raise InvalidData("device: name the device (its serial)")
    serial = serial.strip()
    steps, seconds = check_budget(budget)
    strategy = check_strategy(strategy)
    if strategy == Strategy.LLM and not settings.LLM_BASE_URL:
        raise InvalidData(
            "strategy: llm needs a model: set LLM_BASE_URL (and LLM_MODEL, LLM_API_KEY)"
        )
    seed = check_seed(seed, "seed") or 0
    allow = check_deny_entries(allow, "allow")
    if not Device.objects.filter(serial=serial, projects=project).exists():
        raise InvalidData(
            f"device: {shown(serial)} is not a device of this project (grant it first)"
        )
    check_free(serial)
    package, server = check_app_on_device(serial, app)
    with transaction.atomic():
        exploration = Exploration.objects.create(
            project=project,
            app=package,
            serial=serial,
            adb_server=server,
            strategy=strategy,
            seed=seed,
            budget_steps=steps,
            budget_seconds=seconds,
            allow=allow,
            created_by=actor,
        )
        _queue(exploration, actor)
    return exploration


def _queue(exploration: Exploration, actor) -> None:
    job = Job.objects.create(
        project=exploration.project,
        kind=JobKind.EXPLORE,
        format=exploration.strategy,
        created_by=actor,
        params={"exploration": exploration.pk, "app": exploration.app},
        total=exploration.budget_steps or 0,
    )
    Exploration.objects.filter(pk=exploration.pk).update(
        job=job, status=ExplorationStatus.QUEUED, stop_requested=False
    )
    exploration.job = job
    record_event(
        events.JOB_EXPLORATION_QUEUED,
        actor=actor,
        project=exploration.project,
        obj=job,
        after={"exploration": exploration.pk, "app": exploration.app, "serial": exploration.serial},
    )
    enqueue_job(job)


def do_stop_exploration(exploration: Exploration, actor) -> Exploration:
    """Ask the walk to stop after the step under way (the episode under way is walked again
    on resume)."""
    if not exploration.is_active:
        raise InvalidData(f"exploration {exploration.pk} is {exploration.status}: nothing to stop")
    Exploration.objects.filter(pk=exploration.pk).update(stop_requested=True)
    record_event(
        events.EXPLORATION_STOP_ASKED,
        actor=actor,
        project=exploration.project,
        obj=exploration,
        after={"exploration": exploration.pk},
    )
    exploration.refresh_from_db()
    return exploration


def do_resume_exploration(exploration: Exploration, actor) -> Exploration:
    """Go on from the saved frontier with a new job."""
    if exploration.status not in (ExplorationStatus.STOPPED, ExplorationStatus.FAILED):
        raise InvalidData(
            f"exploration {exploration.pk} is {exploration.status}: only a stopped or failed "
            "one resumes"
        )
    check_free(exploration.serial)
    with transaction.atomic():
        _queue(exploration, actor)
    exploration.refresh_from_db()
    return exploration


def do_set_deny_list(project: Project, app: Any, entries: Any) -> DenyList:
    if not isinstance(app, str) or not app.strip():
        raise InvalidData("app: name the app's package")
    checked = check_deny_entries(entries, "deny")
    deny, _ = DenyList.objects.update_or_create(
        project=project, app=app.strip(), defaults={"entries": checked}
    )
    return deny
