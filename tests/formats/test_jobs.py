"""Import and export jobs, run by a real Celery worker on the configured broker."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from formats.jobs import do_start_export, do_start_import
from tests.trajectories.builders import make_record
from trajectories.jobs import export_name, run_job
from trajectories.models import AuditEvent, Job, Trajectory
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

from ..conftest import wait_for_job

worker = pytest.mark.usefixtures("celery_worker")


def _export_zip(job: Job) -> zipfile.ZipFile:
    with default_storage.open(job.output_path, "rb") as handle:
        return zipfile.ZipFile(io.BytesIO(handle.read()))


@worker
@pytest.mark.django_db(transaction=True)
def test_the_worker_exports_then_imports_a_project(project, alice):
    do_import_trajectory(project, make_record(steps=4, seed=11))
    do_import_trajectory(project, make_record(steps=2, seed=12))

    export = wait_for_job(do_start_export(project, "waypoint", alice).pk)
    assert export.status == "succeeded", export.message
    assert export.percent == 100
    assert export.counts == {"trajectories": 2, "steps": 6, "screens": 8, "files": 15}
    archive = _export_zip(export)
    name = export_name(export)
    manifest = json.loads(archive.read(f"{name}/manifest.json"))
    assert manifest["counts"]["steps"] == 6

    Trajectory.objects.all().delete()
    with default_storage.open(export.output_path, "rb") as handle:
        upload = ContentFile(handle.read(), name="export.zip")
    imported = wait_for_job(do_start_import(project, upload, "waypoint", alice).pk)
    assert imported.status == "succeeded", imported.message
    assert imported.counts == {"created": 2, "existing": 0, "steps": 6}
    assert Trajectory.objects.filter(project=project).count() == 2
    kinds = list(AuditEvent.objects.filter(project=project).values_list("kind", flat=True))
    assert kinds[:4] == [
        "job.succeeded",
        "trajectory.imported",
        "trajectory.imported",
        "job.import_queued",
    ]


@worker
@pytest.mark.django_db(transaction=True)
def test_a_failed_import_says_why_and_imports_nothing(project, alice):
    do_import_trajectory(project, make_record(steps=2, seed=41))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        manifest = {"format": "waypoint", "schema_version": 7, "files": {}}
        archive.writestr("export/manifest.json", json.dumps(manifest))
    upload = ContentFile(out.getvalue(), name="future.zip")
    job = wait_for_job(do_start_import(project, upload, "waypoint", alice).pk)
    assert job.status == "failed"
    assert job.message == (
        "manifest.json.schema_version: unknown schema version 7 (this Waypoint reads version 1)"
    )
    assert Trajectory.objects.count() == 1


@pytest.mark.django_db
def test_it_refuses_an_upload_that_is_not_an_archive(project, alice):
    with pytest.raises(InvalidData) as caught:
        do_start_import(project, ContentFile(b"plain text", name="notes.zip"), "waypoint", alice)
    assert str(caught.value) == "file: notes.zip is not a readable .zip archive"
    assert Job.objects.count() == 0


@worker
@pytest.mark.django_db(transaction=True)
def test_the_export_filters_by_status(project, alice):
    do_import_trajectory(project, make_record(steps=2, seed=21, status="approved"))
    do_import_trajectory(project, make_record(steps=3, seed=22, status="annotating"))
    job = wait_for_job(do_start_export(project, "waypoint", alice, {"status": "approved"}).pk)
    assert job.counts["trajectories"] == 1
    assert job.counts["steps"] == 2


@pytest.mark.django_db
def test_a_job_runs_once_even_if_delivered_twice(
    project, alice, django_capture_on_commit_callbacks
):
    do_import_trajectory(project, make_record(steps=2, seed=31))
    with django_capture_on_commit_callbacks(execute=False):
        job = do_start_export(project, "waypoint", alice)
    run_job(job.pk)
    first = Job.objects.get(pk=job.pk)
    run_job(job.pk)
    second = Job.objects.get(pk=job.pk)
    assert first.status == second.status == "succeeded"
    assert first.finished_at == second.finished_at
    assert AuditEvent.objects.filter(kind="job.succeeded").count() == 1


@pytest.mark.django_db
def test_it_refuses_unknown_formats_and_filters(project, alice):
    with pytest.raises(InvalidData) as caught:
        do_start_export(project, "csv", alice)
    assert str(caught.value) == (
        "format: unknown export format 'csv' "
        "(known: aitw, androidcontrol, androidcontrol-tfrecord, androtmem, gui-odyssey, "
        "memory-world, stamp-sft, waypoint)"
    )
    with pytest.raises(InvalidData) as caught:
        do_start_export(project, "waypoint", alice, {"colour": "red"})
    assert str(caught.value) == (
        "filters: unknown filter 'colour' (known: status, outcome, source, task, tasks, "
        "recorder, app, apps, recorded_from, recorded_to, annotator, trajectories)"
    )
    assert Job.objects.count() == 0


@pytest.mark.django_db
def test_it_refuses_uploads_over_the_limit(project, alice, settings):
    settings.WAYPOINT_MAX_UPLOAD_BYTES = 10
    with pytest.raises(InvalidData) as caught:
        do_start_import(project, ContentFile(b"x" * 11, name="big.zip"), "waypoint", alice)
    assert str(caught.value) == (
        "file: big.zip is 11 bytes, over the limit of 10 bytes (WAYPOINT_MAX_UPLOAD_BYTES)"
    )
    assert Job.objects.count() == 0
