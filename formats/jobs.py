"""Import and export jobs: checking a request, queueing it, and the runners a worker calls.

The job machinery itself (claiming, heartbeats, the reaper, retries) is
:mod:`trajectories.jobs`; this app registers its two kinds of job with it when it is ready.
"""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction

from trajectories import events
from trajectories.gold import check_export_format
from trajectories.jobs import enqueue_job, export_name, job_tmp_dir
from trajectories.models import Job, JobKind, Project
from trajectories.selectors import check_trajectory_filters, trajectory_list
from trajectories.services import record_event
from trajectories.validation import InvalidData

from .archive import check_zip_members, check_zip_size, human_size
from .catalogue import (
    EXPORTERS,
    IMPORTERS,
    check_export_request,
    export_trajectories,
    import_trajectories,
)
from .detect import AUTO, detect_archive_format

Progress = Callable[[int, int], None]


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
    if name.endswith(".zip"):
        # A zip's sizes are in its central directory: a zip bomb is refused before it is queued.
        try:
            check_zip_members(upload, f"file: {upload.name}")
            with zipfile.ZipFile(upload) as archive:
                check_zip_size(archive, f"file: {upload.name}", upload.size)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            message = f"file: {upload.name} is not a readable .zip archive ({exc})"
            raise InvalidData(message) from None
        finally:
            upload.seek(position)


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
    trajectories new ids (see :func:`formats.import_trajectories`).
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
            events.JOB_IMPORT_QUEUED,
            actor=actor,
            project=project,
            obj=job,
            after={"format": fmt, "file": name, "as_copies": as_copies},
        )
        enqueue_job(job)
    return job


def do_start_export(
    project: Project,
    fmt: str,
    actor,
    filters: dict[str, Any] | None = None,
    *,
    options: dict[str, Any] | None = None,
    split: dict[str, Any] | None = None,
) -> Job:
    """Queue an export; ``options`` per format and ``split`` as the dataset formats take them.
    A format that carries gold answers is for those who may see the project's gold (403)."""
    check_format(fmt, JobKind.EXPORT)
    check_export_format(actor, project, fmt)
    filters = check_trajectory_filters(filters)  # the list's filters, with its rules
    options, split = check_export_request(fmt, options, split)
    params: dict[str, Any] = {"filters": filters}
    if options:
        params["options"] = options
    if split:
        params["split"] = split
    with transaction.atomic():
        job = Job.objects.create(
            project=project,
            kind=JobKind.EXPORT,
            format=fmt,
            created_by=actor,
            params=params,
        )
        record_event(
            events.JOB_EXPORT_QUEUED,
            actor=actor,
            project=project,
            obj=job,
            after={"format": fmt, **params},
        )
        enqueue_job(job)
    return job


def export_scope(job: Job):
    """The trajectories an export job writes: the project's list with the job's filters."""
    return trajectory_list(None, job.project, job.params.get("filters", {}))


def _local_input(job: Job, tmp: Path) -> Path:
    try:
        return Path(default_storage.path(job.input_path))
    except NotImplementedError:
        local = tmp / Path(job.input_path).name
        with default_storage.open(job.input_path, "rb") as src, open(local, "wb") as out:
            shutil.copyfileobj(src, out)
        return local


def run_import_job(job: Job, progress: Progress) -> dict[str, Any]:
    """The runner of import jobs (registered in :mod:`formats.apps`)."""
    tmp = job_tmp_dir(job)
    source = _local_input(job, tmp)
    return import_trajectories(
        job.project,
        source,
        job.format,
        actor=job.created_by,
        progress=progress,
        as_copies=bool(job.params.get("as_copies")),
        workdir=tmp,
    )


def run_export_job(job: Job, progress: Progress) -> dict[str, Any]:
    """The runner of export jobs (registered in :mod:`formats.apps`)."""
    tmp = job_tmp_dir(job)
    name = export_name(job)
    folder = tmp / name
    counts = export_trajectories(
        export_scope(job),
        folder,
        job.format,
        progress=progress,
        options=job.params.get("options"),
        filters=job.params.get("filters"),
        split=job.params.get("split"),
    )
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
