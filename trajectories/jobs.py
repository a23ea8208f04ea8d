"""Imports and exports as background jobs with progress, run by a Celery worker.

A job's input and output live in blob storage (``jobs/<id>/...``), so the web server and the
workers need not share a disk. A job is claimed with a conditional UPDATE: a message delivered
twice runs the job once. The output is saved under its final name before the job is marked
succeeded, so a job shown as done always has its whole file.

Jobs survive their worker. The message is acknowledged late and rejected back to the queue when
the worker is lost; while a job runs, its worker touches ``heartbeat_at``; a running job whose
heartbeat stopped is claimable again (a redelivered message takes it over) and the reaper
requeues it, or fails it after WAYPOINT_JOB_MAX_ATTEMPTS runs. Everything a job writes on local
disk lives in one folder per job (WAYPOINT_JOB_TMP_DIR/<id>), which the reaper removes.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path, PurePath
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.text import slugify

from . import events
from .gold import check_job_file
from .models import Job, JobKind, JobStatus, Project
from .services import record_event
from .validation import InvalidData

log = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.5


RUN_JOB_TASK = "trajectories.run_job"  # the name of trajectories.tasks.run_job_task

# Every kind of job is run by an app above this one, which registers its runner when it is
# ready (``formats``: import and export; ``graphs``: graph builds; ``annotate``: proposals),
# so the job machinery serves them without depending on them. A runner may use the job's
# local folder (:func:`job_tmp_dir`), made empty before and removed after it runs. A runner
# that hands its work to other tasks returns DETACHED: the job stays running, those tasks touch its
# heartbeat and the last one ends it (:func:`end_detached_job`); if they all vanish, the
# reaper requeues the job and the runner hands out what is left again.
DETACHED = "detached"
Runner = Callable[[Job, Callable[[int, int], None]], dict[str, Any] | str]
RUNNERS: dict[str, Runner] = {}


def register_runner(kind: str, runner: Runner) -> None:
    RUNNERS[kind] = runner


def _send(job_id: int) -> None:
    """Queue the job for a worker, by the task's name (tasks.py imports this module)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        run_job(job_id)  # what the task does, here and now
    else:
        current_app.send_task(RUN_JOB_TASK, args=(job_id,))


def enqueue_job(job: Job) -> None:
    transaction.on_commit(lambda: _send(job.pk))


class _Progress:
    """Write progress to the job row at most every half second."""

    def __init__(self, job: Job):
        self.job = job
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_INTERVAL_S and done < total:
            return
        self.last = now
        Job.objects.filter(pk=self.job.pk).update(done=done, total=total)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def stale_before():
    """A running job whose heartbeat is older than this has lost its worker."""
    return timezone.now() - timedelta(seconds=settings.WAYPOINT_JOB_STALE_S)


def job_tmp_dir(job: Job) -> Path:
    """The local folder of the job's current run, named by the job and the run's start.

    Each run has its own (a retried job counts its runs from 0 again, so not by their number):
    the reaper removing a killed run's folder never removes the folder of the run that
    replaced it, however their steps interleave.
    """
    return Path(settings.WAYPOINT_JOB_TMP_DIR) / f"{job.pk}.{job.started_at:%Y%m%dT%H%M%S%f}"


def claim(job_id: int) -> Job | None:
    """Take a queued job, or a running one whose worker vanished (a redelivered message)."""
    now = timezone.now()
    orphaned = Q(status=JobStatus.RUNNING, heartbeat_at__lt=stale_before())
    claimed = (
        Job.objects.filter(pk=job_id)
        .filter(Q(status=JobStatus.QUEUED) | orphaned)
        .update(
            status=JobStatus.RUNNING,
            started_at=now,
            heartbeat_at=now,
            worker=worker_name(),
            attempts=F("attempts") + 1,
        )
    )
    return Job.objects.select_related("project", "created_by").get(pk=job_id) if claimed else None


class _Heartbeat:
    """Touch the job's heartbeat from a thread while the job runs, however long a step takes."""

    def __init__(self, job: Job):
        self.job = job
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"job-{job.pk}-heartbeat")

    def _beat(self) -> None:
        try:
            while not self.stop.wait(settings.WAYPOINT_JOB_HEARTBEAT_S):
                Job.objects.filter(
                    pk=self.job.pk, status=JobStatus.RUNNING, worker=self.job.worker
                ).update(heartbeat_at=timezone.now())
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop.set()
        self.thread.join()


def run_job(job_id: int) -> None:
    job = claim(job_id)
    if job is None:
        log.info("job %s is not queued (already run, running, or gone): skipped", job_id)
        return
    if job.attempts > settings.WAYPOINT_JOB_MAX_ATTEMPTS:
        _finish(job, JobStatus.FAILED, message=lost_worker_message(job.attempts - 1))
        return
    progress = _Progress(job)
    tmp = job_tmp_dir(job)
    tmp.mkdir(parents=True)
    try:
        with _Heartbeat(job):
            counts = RUNNERS[job.kind](job, progress)
    except InvalidData as exc:
        _finish(job, JobStatus.FAILED, message=str(exc))
    except Exception as exc:
        log.exception("job %s failed", job.pk)
        _finish(job, JobStatus.FAILED, message=internal_error_message(job, exc))
    else:
        if counts != DETACHED:
            _finish(job, JobStatus.SUCCEEDED, counts=counts)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def internal_error_message(job: Job, exc: BaseException) -> str:
    """What the job's page says about an error no check named: its kind, not its text.

    The text of an unexpected error can carry the worker's local paths (the job's folder) or
    a traceback's details; they go to the worker's log, which this message points to.
    """
    return f"internal error ({type(exc).__name__}); the worker's log has the details (job {job.pk})"


def lost_worker_message(runs: int) -> str:
    return (
        f"the worker running this job stopped ({runs} time{'s' if runs != 1 else ''}); "
        "nothing it wrote was kept. Retry the job."
    )


def reap_stale_jobs() -> dict[str, int]:
    """Requeue running jobs whose worker vanished, or fail them after too many runs.

    Also removes the local folders of jobs that no longer run, and upload leftovers of web
    requests cut off mid-upload. Safe to call from any process, at any time.
    """
    reaped = {"requeued": 0, "failed": 0, "folders": 0}
    stale = Job.objects.filter(status=JobStatus.RUNNING).filter(
        Q(heartbeat_at__lt=stale_before()) | Q(heartbeat_at__isnull=True)
    )
    for job in stale.select_related("project", "created_by"):
        if job.attempts >= settings.WAYPOINT_JOB_MAX_ATTEMPTS:
            if _finish(job, JobStatus.FAILED, message=lost_worker_message(job.attempts)):
                reaped["failed"] += 1
            continue
        requeued = Job.objects.filter(
            pk=job.pk, status=JobStatus.RUNNING, worker=job.worker
        ).update(status=JobStatus.QUEUED, heartbeat_at=None)
        if requeued:
            record_event(
                events.JOB_REQUEUED,
                actor=None,
                project=job.project,
                obj=job,
                after={"reason": "worker lost", "worker": job.worker, "attempts": job.attempts},
            )
            transaction.on_commit(lambda pk=job.pk: _send(pk))
            reaped["requeued"] += 1
    reaped["folders"] = _remove_leftovers()
    return reaped


def with_true_status(job: Job) -> Job:
    """The job as it really is: a running job whose worker vanished is reaped first."""
    if job.status == JobStatus.RUNNING and (
        job.heartbeat_at is None or job.heartbeat_at < stale_before()
    ):
        reap_stale_jobs()
        job.refresh_from_db()
    return job


RECENT_JOBS = 5


def recent_jobs(project: Project) -> list[Job]:
    """The project's newest jobs, each with its true status (:func:`with_true_status`)."""
    newest = (
        Job.objects.filter(project=project)
        .select_related("created_by")
        .order_by("-created_at", "-id")[:RECENT_JOBS]
    )
    return [with_true_status(job) for job in newest]


def _remove_leftovers() -> int:
    removed = 0
    root = Path(settings.WAYPOINT_JOB_TMP_DIR)
    if root.is_dir():
        live = {
            job_tmp_dir(job).name
            for job in Job.objects.filter(status=JobStatus.RUNNING).only("pk", "started_at")
        }
        # A job claimed after the query above has just made its folder: leave folders changed
        # within the stale limit to a later pass, as the jobs they may belong to are left.
        # The folders of the job's earlier runs are nobody's.
        settled = time.time() - settings.WAYPOINT_JOB_STALE_S
        for folder in root.iterdir():
            if folder.name in live:
                continue
            try:
                if folder.stat().st_mtime > settled:
                    continue
            except OSError:
                continue
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    uploads = Path(settings.FILE_UPLOAD_TEMP_DIR)
    if uploads.is_dir():
        too_old = time.time() - settings.WAYPOINT_UPLOAD_TMP_MAX_AGE_S
        for leftover in uploads.iterdir():
            try:
                if leftover.stat().st_mtime < too_old:
                    leftover.unlink()
                    removed += 1
            except OSError:
                continue
    return removed


def do_retry_job(job: Job, actor) -> Job:
    """Run a failed job again from the start, with the same input and parameters (an export
    in a gold format only for those who may see the project's gold)."""
    check_job_file(actor, job, "export")
    if job.status != JobStatus.FAILED:
        raise InvalidData(
            f"job {job.pk}: only a failed job can be retried (this one is {job.status})"
        )
    with transaction.atomic():
        retried = Job.objects.filter(pk=job.pk, status=JobStatus.FAILED).update(
            status=JobStatus.QUEUED,
            message="",
            done=0,
            total=0,
            attempts=0,
            started_at=None,
            finished_at=None,
            heartbeat_at=None,
        )
        if retried:
            record_event(events.JOB_RETRIED, actor=actor, project=job.project, obj=job, after={})
            enqueue_job(job)
    job.refresh_from_db()
    return job


def export_name(job: Job) -> str:
    """An export's file name without ``.zip``: project, format and day, as a person files it
    (``shops-stamp-sft-2026-12-01``). The job's folder keeps two of the same day apart."""
    project = slugify(job.project.name) or "project"
    day = timezone.localdate(job.created_at) if job.created_at else timezone.localdate()
    return f"{project}-{slugify(job.format)}-{day.isoformat()}"


def download_name(job: Job) -> str:
    """The file name a job's output is downloaded as: an export's :func:`export_name`, even
    when storage had to store it under another (a name already taken)."""
    if job.kind == JobKind.EXPORT:
        return f"{export_name(job)}{PurePath(job.output_path).suffix or '.zip'}"
    return PurePath(job.output_path).name


def touch_detached_job(job_id: int, done: int = 0) -> None:
    """A detached task of the job did ``done`` more of it (and is alive)."""
    Job.objects.filter(pk=job_id, status=JobStatus.RUNNING).update(
        done=F("done") + done, heartbeat_at=timezone.now()
    )


def end_detached_job(job_id: int, counts: dict[str, Any]) -> bool:
    """End a detached job as succeeded once all of it is done; True for the one call that
    ends it."""
    job = Job.objects.select_related("project", "created_by").get(pk=job_id)
    if job.status != JobStatus.RUNNING or job.done < job.total:
        return False
    return _finish(job, JobStatus.SUCCEEDED, counts=counts, any_worker=True)


def _finish(
    job: Job,
    status: str,
    *,
    message: str = "",
    counts: dict | None = None,
    any_worker: bool = False,
) -> bool:
    """Record how the job ended, unless another worker has taken it over meanwhile."""
    updates: dict[str, Any] = {"status": status, "message": message, "finished_at": timezone.now()}
    if counts is not None:
        updates["counts"] = counts
    running = Job.objects.filter(pk=job.pk, status=JobStatus.RUNNING)
    if not any_worker:
        running = running.filter(worker=job.worker)
    ended = running.update(**updates)
    if not ended:
        log.warning("job %s was taken over by another worker; %s not recorded", job.pk, status)
        return False
    record_event(
        events.JOB_ENDED[status],
        actor=job.created_by,
        project=job.project,
        obj=job,
        after={"kind": job.kind, "format": job.format, "message": message, "counts": counts},
    )
    return True
