"""Imports and exports as background jobs with progress, run by a Celery worker.

A job's input and output live in blob storage (``jobs/<id>/...``), so the web server and the
workers need not share a disk. A job is claimed with a conditional UPDATE: a message delivered
twice runs the job once. The output is saved under its final name before the job is marked
succeeded, so a job shown as done always has its whole file.
"""

from __future__ import annotations

import logging
import shutil
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path, PurePath
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from .formats import EXPORTERS, IMPORTERS, export_trajectories, import_trajectories
from .formats.archive import human_size
from .formats.detect import AUTO, detect_archive_format
from .models import Job, JobKind, JobStatus, Project, Trajectory
from .services import record_event
from .validation import InvalidData

log = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.5


def _enqueue(job: Job) -> None:
    from .tasks import run_job_task

    transaction.on_commit(lambda: run_job_task.delay(job.pk))


def check_format(fmt: str, kind: str) -> str:
    catalogue = IMPORTERS if kind == JobKind.IMPORT else EXPORTERS
    if fmt not in catalogue:
        raise InvalidData(
            f"format: unknown {kind} format {fmt!r} (known: {', '.join(sorted(catalogue))})"
        )
    return fmt


ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")


def check_archive(upload) -> None:
    """Refuse what is plainly not a .zip or .tar before it is queued."""
    name = (upload.name or "").lower()
    if not name.endswith(ARCHIVE_SUFFIXES):
        raise InvalidData(f"file: {upload.name} is not a .zip or .tar archive")
    readable = zipfile.is_zipfile if name.endswith(".zip") else _is_tarfile
    position = upload.tell()
    try:
        ok = readable(upload)
    finally:
        upload.seek(position)
    if not ok:
        raise InvalidData(f"file: {upload.name} is not a readable {PurePath(name).suffix} archive")


def _is_tarfile(upload) -> bool:
    try:
        with tarfile.open(fileobj=upload, mode="r:*") as archive:
            archive.next()
    except (tarfile.TarError, OSError, EOFError):
        return False
    return True


def do_start_import(project: Project, upload, fmt: str, actor, *, as_copies: bool = False) -> Job:
    """Queue the import of an uploaded .zip or .tar (a Django ``UploadedFile`` or ``File``).

    ``fmt`` ``"auto"`` tells the format from the archive's content; ``as_copies`` gives the
    trajectories new ids (see :func:`trajectories.formats.import_trajectories`).
    """
    if fmt not in (AUTO, *IMPORTERS):
        known = ", ".join([AUTO, *sorted(IMPORTERS)])
        raise InvalidData(f"format: unknown import format {fmt!r} (known: {known})")
    limit = settings.WAYPOINT_MAX_UPLOAD_BYTES
    if upload.size > limit:
        raise InvalidData(
            f"file: {upload.name} is {human_size(upload.size)}, over the limit of "
            f"{human_size(limit)} (WAYPOINT_MAX_UPLOAD_BYTES)"
        )
    check_archive(upload)
    name = Path(upload.name or "upload").name
    if fmt == AUTO:
        fmt = detect_archive_format(upload, f"file: {name}")
    with transaction.atomic():
        job = Job.objects.create(
            project=project,
            kind=JobKind.IMPORT,
            format=fmt,
            created_by=actor,
            params={"filename": name, "as_copies": as_copies},
        )
        job.input_path = default_storage.save(f"jobs/{job.pk}/input/{name}", upload)
        job.save(update_fields=["input_path"])
        record_event(
            "job.import_queued",
            actor=actor,
            project=project,
            obj=job,
            after={"format": fmt, "file": name, "as_copies": as_copies},
        )
        _enqueue(job)
    return job


EXPORT_FILTERS = ("status", "outcome", "task", "source")


def do_start_export(
    project: Project, fmt: str, actor, filters: dict[str, Any] | None = None
) -> Job:
    check_format(fmt, JobKind.EXPORT)
    filters = {k: v for k, v in (filters or {}).items() if v not in (None, "")}
    unknown = set(filters) - set(EXPORT_FILTERS)
    if unknown:
        raise InvalidData(
            f"filters: unknown filter {sorted(unknown)[0]!r} (known: {', '.join(EXPORT_FILTERS)})"
        )
    with transaction.atomic():
        job = Job.objects.create(
            project=project,
            kind=JobKind.EXPORT,
            format=fmt,
            created_by=actor,
            params={"filters": filters},
        )
        record_event(
            "job.export_queued",
            actor=actor,
            project=project,
            obj=job,
            after={"format": fmt, "filters": filters},
        )
        _enqueue(job)
    return job


def export_scope(job: Job):
    trajectories = Trajectory.objects.filter(project=job.project).originals()
    filters = job.params.get("filters", {})
    if "task" in filters:
        trajectories = trajectories.filter(task__uid=filters["task"])
    for name in ("status", "outcome", "source"):
        if name in filters:
            trajectories = trajectories.filter(**{name: filters[name]})
    return trajectories


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


def claim(job_id: int) -> Job | None:
    claimed = Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(
        status=JobStatus.RUNNING, started_at=timezone.now()
    )
    return Job.objects.select_related("project", "created_by").get(pk=job_id) if claimed else None


def run_job(job_id: int) -> None:
    job = claim(job_id)
    if job is None:
        log.info("job %s is not queued (already run, or gone): skipped", job_id)
        return
    progress = _Progress(job)
    try:
        with tempfile.TemporaryDirectory(prefix=f"waypoint-job-{job.pk}-") as tmp:
            if job.kind == JobKind.IMPORT:
                counts = _run_import(job, Path(tmp), progress)
            else:
                counts = _run_export(job, Path(tmp), progress)
    except InvalidData as exc:
        _finish(job, JobStatus.FAILED, message=str(exc))
    except Exception as exc:
        log.exception("job %s failed", job.pk)
        _finish(job, JobStatus.FAILED, message=f"internal error: {type(exc).__name__}: {exc}")
    else:
        _finish(job, JobStatus.SUCCEEDED, counts=counts)


def _local_input(job: Job, tmp: Path) -> Path:
    try:
        return Path(default_storage.path(job.input_path))
    except NotImplementedError:
        local = tmp / Path(job.input_path).name
        with default_storage.open(job.input_path, "rb") as src, open(local, "wb") as out:
            shutil.copyfileobj(src, out)
        return local


def _run_import(job: Job, tmp: Path, progress: _Progress) -> dict[str, Any]:
    source = _local_input(job, tmp)
    return import_trajectories(
        job.project,
        source,
        job.format,
        actor=job.created_by,
        progress=progress,
        as_copies=bool(job.params.get("as_copies")),
    )


def _run_export(job: Job, tmp: Path, progress: _Progress) -> dict[str, Any]:
    name = f"waypoint-{job.format}-export-{job.pk}"
    folder = tmp / name
    counts = export_trajectories(export_scope(job), folder, job.format, progress=progress)
    archive = tmp / f"{name}.zip"
    zip_folder(folder, archive)
    with open(archive, "rb") as handle:
        job.output_path = default_storage.save(f"jobs/{job.pk}/{name}.zip", File(handle))
    Job.objects.filter(pk=job.pk).update(output_path=job.output_path)
    return counts


def zip_folder(folder: Path, archive: Path) -> None:
    """Zip a folder under its own name; images are stored, text is deflated."""
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                compress = (
                    zipfile.ZIP_STORED
                    if path.suffix in (".png", ".jpg", ".webp")
                    else zipfile.ZIP_DEFLATED
                )
                out.write(path, f"{folder.name}/{path.relative_to(folder)}", compress)


def _finish(job: Job, status: str, *, message: str = "", counts: dict | None = None) -> None:
    updates: dict[str, Any] = {"status": status, "message": message, "finished_at": timezone.now()}
    if counts is not None:
        updates["counts"] = counts
    Job.objects.filter(pk=job.pk).update(**updates)
    record_event(
        f"job.{status}",
        actor=job.created_by,
        project=job.project,
        obj=job,
        after={"kind": job.kind, "format": job.format, "message": message, "counts": counts},
    )
