"""Dataset exports with blob storage that has no local files (as on S3): blobs are read and the
archive is written and downloaded through the storage API only."""

from __future__ import annotations

import io
import json
import os
import zipfile

import pytest
from django.core.files.storage import InMemoryStorage, default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from formats.jobs import do_start_export
from tests.trajectories.builders import make_record, png
from trajectories.jobs import export_name, run_job
from trajectories.models import Job, Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


class PathlessStorage(InMemoryStorage):
    """Like S3Storage: no ``path()``, so nothing may assume a file on the local disk."""

    saved: list[str] = []

    def path(self, name):
        raise NotImplementedError("This backend doesn't support absolute paths.")

    def _relative_path(self, name):  # InMemoryStorage's own use of path()
        return os.path.relpath(super().path(name), self.location)

    def _save(self, name, content):
        PathlessStorage.saved.append(name)
        return super()._save(name, content)


@pytest.fixture
def pathless(settings):
    storages = {**settings.STORAGES, "default": {"BACKEND": f"{__name__}.PathlessStorage"}}
    PathlessStorage.saved = []
    with override_settings(STORAGES=storages):
        with pytest.raises(NotImplementedError):
            default_storage.path("x")
        yield default_storage


def test_an_export_job_reads_and_writes_through_the_storage_only(
    pathless, client, project, alice, django_capture_on_commit_callbacks
):
    do_import_trajectory(project, make_record(steps=3, seed=1))
    do_import_trajectory(project, make_record(steps=2, seed=2))
    with django_capture_on_commit_callbacks(execute=False):
        job = do_start_export(
            project,
            "stamp-sft",
            alice,
            options={"max_side": 60, "parquet": True},
            split={"ratios": {"train": 1, "test": 1}, "seed": 1},
        )
        bench = do_start_export(project, "androtmem", alice)
    run_job(job.pk)
    run_job(bench.pk)
    job, bench = Job.objects.get(pk=job.pk), Job.objects.get(pk=bench.pk)
    assert (job.status, bench.status) == ("succeeded", "succeeded"), (job.message, bench.message)
    assert job.output_path in PathlessStorage.saved
    with pathless.open(job.output_path, "rb") as handle:
        stored = handle.read()
    archive = zipfile.ZipFile(io.BytesIO(stored))
    name = export_name(job)
    manifest = json.loads(archive.read(f"{name}/manifest.json"))
    assert manifest["counts"]["samples"] == 5
    assert f"{name}/train.parquet" in archive.namelist()
    # The full-size screenshots of the other export are the stored blobs, byte for byte.
    with pathless.open(bench.output_path, "rb") as handle:
        tasks = zipfile.ZipFile(io.BytesIO(handle.read()))
    first = json.loads(tasks.read(f"{export_name(bench)}/test.jsonl").splitlines()[0])
    image = tasks.read(f"{export_name(bench)}/{first['steps'][0]['image_name']}")
    assert image in {png(31 * seed + i) for seed in (1, 2) for i in range(4)}

    client.force_login(alice)
    response = client.get(reverse("job-download", args=[job.pk]))
    assert response.status_code == 200 and response.streaming
    assert b"".join(response.streaming_content) == stored

    api = APIClient()
    api.force_authenticate(alice)
    task_id = str(Trajectory.objects.order_by("uid").first().uid)
    line = {"task_id": task_id, "step_index": 0, "prediction": {"action": {"action": "wait"}}}
    response = api.post(
        f"/api/v1/projects/{project.pk}/evaluations/",
        {
            "export_job": bench.pk,
            "predictions": SimpleUploadedFile("p.jsonl", json.dumps(line).encode()),
        },
    )
    assert response.status_code == 200, response.json()
    assert response.json()["benchmark"]["tasks"] == 2
