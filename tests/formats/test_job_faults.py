"""Jobs survive their worker: a killed worker's job is requeued or failed, never left "running"."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.base import ContentFile
from django.utils import timezone

from formats.jobs import do_start_import
from tests.trajectories.builders import make_record
from trajectories.jobs import claim, job_tmp_dir, reap_stale_jobs, run_job
from trajectories.models import AuditEvent, Job, JobKind, JobStatus
from trajectories.services import do_import_trajectory
from trajectories.tasks import run_job_task

from ..conftest import FAULTS_QUEUE, REPO, start_worker, stop_worker, wait_for_job

STALLING_WORKER = [sys.executable, str(Path(__file__).with_name("stalling_worker.py"))]
# A live job beats every second; silent for 8 s, its worker is gone. (3 s was too tight for a
# loaded 2-core machine, where a beat can wait seconds for SQLite's write lock.)
FAST_REAPER = {"WAYPOINT_JOB_HEARTBEAT_S": "1", "WAYPOINT_JOB_STALE_S": "8"}


@pytest.fixture(autouse=True)
def own_job_folders(settings, tmp_path):
    """Each test's jobs (and the workers it starts) keep their folders apart from others'."""
    settings.WAYPOINT_JOB_TMP_DIR = tmp_path / "job-folders"


def run_folders(job: Job) -> list[Path]:
    """The local folders of the job's runs (one each), on this machine."""
    return sorted(Path(settings.WAYPOINT_JOB_TMP_DIR).glob(f"{job.pk}.*"))


def wait_until(condition, timeout: float = 60, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@contextlib.contextmanager
def stalled_worker(tmp_path: Path, database_url: str, stalled: bytes) -> Iterator[None]:
    """A stalling worker on the session's faults queue, until its log says ``stalled``; the block
    looks at the job then, and the worker is SIGKILLed when it ends."""
    log = tmp_path / "doomed.log"
    doomed = start_worker(
        log, database_url, "-Q", FAULTS_QUEUE, program=STALLING_WORKER, **FAST_REAPER
    )
    try:
        wait_until(lambda: stalled in log.read_bytes(), what=stalled.decode())
        yield
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(timeout=20)
    finally:
        if doomed.poll() is None:
            doomed.kill()


def finished_by_a_new_worker(job: Job, tmp_path: Path, database_url: str) -> Job:
    rescuer = start_worker(
        tmp_path / "rescuer.log", database_url, "-Q", f"celery,{FAULTS_QUEUE}", **FAST_REAPER
    )
    try:
        return wait_for_job(job.pk)
    finally:
        stop_worker(rescuer)


def queued_export(project, alice) -> Job:
    """An export job sent to the fault tests' own queue, out of reach of any other worker."""
    job = Job.objects.create(
        project=project, kind=JobKind.EXPORT, format="waypoint", created_by=alice
    )
    run_job_task.apply_async((job.pk,), queue=FAULTS_QUEUE)
    return job


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_worker_is_killed_is_requeued_and_finished_by_another(
    project, alice, client, settings, worker_database_url, tmp_path
):
    settings.WAYPOINT_JOB_STALE_S = int(FAST_REAPER["WAYPOINT_JOB_STALE_S"])
    do_import_trajectory(project, make_record(steps=3, seed=21))
    job = queued_export(project, alice)
    with stalled_worker(tmp_path, worker_database_url, b"export written, stalling"):
        assert Job.objects.get(pk=job.pk).status == JobStatus.RUNNING
        (folder,) = run_folders(job)
        assert any(folder.rglob("*.jsonl")), "the job writes in its own folder"

    # No worker is left. The job page must not say "running" about a job nobody runs.
    client.force_login(alice)
    stopped = "Its worker stopped during run 1; the job waits for a worker to run it again."

    def page_once_stopped() -> str | None:
        page = client.get(f"/jobs/{job.pk}/").content.decode()
        return page if stopped in page else None

    page = wait_until(
        page_once_stopped, timeout=30, what="the job page to say that its worker stopped"
    )
    assert 'class="pill job-queued"' in page
    # The reaper requeues the job, then removes the dead run's files: in the same pass, or in
    # a later one (as every worker's reaper runs) when they changed within the stale limit.
    wait_until(
        lambda: reap_stale_jobs() and not run_folders(job),
        timeout=30,
        what="the reaper to remove the dead run's files",
    )

    finished = finished_by_a_new_worker(job, tmp_path, worker_database_url)
    assert finished.status == JobStatus.SUCCEEDED, finished.message
    assert finished.attempts == 2
    assert finished.counts["trajectories"] == 1
    assert not run_folders(job)
    kinds = list(AuditEvent.objects.filter(object_id=str(job.pk)).values_list("kind", flat=True))
    assert "job.requeued" in kinds and kinds[0] == "job.succeeded"


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_restarts_reaps_what_its_killed_self_left(
    project, alice, settings, worker_database_url, tmp_path
):
    """The reaper runs inside every worker: a restarted worker finds and finishes the job."""
    do_import_trajectory(project, make_record(steps=2, seed=22))
    job = queued_export(project, alice)
    doomed = start_worker(
        tmp_path / "doomed.log",
        worker_database_url,
        "-Q",
        FAULTS_QUEUE,
        program=STALLING_WORKER,
        **FAST_REAPER,
    )
    wait_until(
        lambda: b"export written, stalling" in (tmp_path / "doomed.log").read_bytes(),
        what="the export to be written",
    )
    doomed.kill()
    doomed.wait(timeout=20)

    restarted = start_worker(
        tmp_path / "restarted.log",
        worker_database_url,
        "-Q",
        f"celery,{FAULTS_QUEUE}",
        **FAST_REAPER,
    )
    try:
        finished = wait_for_job(job.pk)
    finally:
        stop_worker(restarted)
    assert (finished.status, finished.attempts) == (JobStatus.SUCCEEDED, 2), finished.message


@pytest.mark.django_db(transaction=True)
def test_an_import_whose_worker_is_killed_halfway_is_finished_without_duplicates(
    project, alice, settings, worker_database_url, tmp_path, monkeypatch
):
    """Killed after its first trajectory: the next run imports the rest and keeps the first."""
    from formats.catalogue import export_trajectories

    from .test_import_as_copies import zip_of

    for seed in (31, 32):
        do_import_trajectory(project, make_record(steps=3, seed=seed))
    export_trajectories(project.trajectories.all(), tmp_path / "export")
    project.trajectories.all().delete()
    monkeypatch.setattr("trajectories.jobs._send", lambda pk: None)  # queued below, by hand
    upload = ContentFile(zip_of(tmp_path / "export"), name="two.zip")
    job = do_start_import(project, upload, "waypoint", alice)
    run_job_task.apply_async((job.pk,), queue=FAULTS_QUEUE)
    with stalled_worker(tmp_path, worker_database_url, b"one trajectory imported, stalling"):
        assert project.trajectories.count() == 1
        (folder,) = run_folders(job)
        assert any(folder.rglob("*.jsonl")), "the archive unpacks in the job's folder"

    finished = finished_by_a_new_worker(job, tmp_path, worker_database_url)
    assert (finished.status, finished.attempts) == (JobStatus.SUCCEEDED, 2), finished.message
    assert (finished.counts["created"], finished.counts["existing"]) == (1, 1)
    assert project.trajectories.count() == 2
    assert not folder.exists(), "the killed run's folder is removed"
    assert not run_folders(job), "and so is the second run's, when it ends"


def running_job_of_a_dead_worker(project, alice, attempts: int) -> Job:
    return Job.objects.create(
        project=project,
        kind=JobKind.EXPORT,
        format="waypoint",
        created_by=alice,
        status=JobStatus.RUNNING,
        worker="gone-host:4242",
        attempts=attempts,
        started_at=timezone.now() - timedelta(minutes=5),
        heartbeat_at=timezone.now() - timedelta(minutes=5),
    )


@pytest.mark.django_db
def test_a_job_that_lost_its_worker_too_often_fails_and_can_be_retried(
    project, alice, bob, client, settings, django_capture_on_commit_callbacks, monkeypatch
):
    settings.WAYPOINT_JOB_MAX_ATTEMPTS = 2
    sent = []
    monkeypatch.setattr("trajectories.jobs._send", sent.append)
    job = running_job_of_a_dead_worker(project, alice, attempts=2)
    folder = job_tmp_dir(job)
    folder.mkdir(parents=True)
    (folder / "partial.zip").write_bytes(b"half")
    written = time.time() - 300  # when its worker last wrote, 5 minutes ago as its heartbeat
    os.utime(folder, (written, written))

    client.force_login(bob)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert (
        "Failed:</b> the worker running this job stopped (2 times); nothing it wrote was kept."
        in page
    )
    assert "Retry</button>" in page
    assert not folder.exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/jobs/{job.pk}/retry/")
    assert response.status_code == 302
    job.refresh_from_db()
    assert (job.status, job.attempts, job.message) == (JobStatus.QUEUED, 0, "")
    assert sent == [job.pk]
    assert AuditEvent.objects.filter(kind="job.retried", actor=bob).count() == 1


@pytest.mark.django_db
def test_the_api_tells_the_truth_about_a_dead_job_and_retries_it(
    project, alice, client, settings, django_capture_on_commit_callbacks, monkeypatch
):
    settings.WAYPOINT_JOB_MAX_ATTEMPTS = 1
    monkeypatch.setattr("trajectories.jobs._send", lambda pk: None)
    job = running_job_of_a_dead_worker(project, alice, attempts=1)
    client.force_login(alice)

    body = client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert body["status"] == "failed"
    assert body["message"].startswith("the worker running this job stopped (1 time)")

    with django_capture_on_commit_callbacks(execute=True):
        retried = client.post(f"/api/v1/jobs/{job.pk}/retry/")
    assert retried.status_code == 202
    assert retried.json()["status"] == "queued"
    again = client.post(f"/api/v1/jobs/{job.pk}/retry/")
    assert again.status_code == 409
    assert again.json()["detail"] == f"job {job.pk} is queued: only a failed job can be retried"


@pytest.mark.django_db
def test_the_outsider_cannot_retry_a_job(project, alice, charlie, client, monkeypatch):
    monkeypatch.setattr("trajectories.jobs._send", lambda pk: None)
    job = running_job_of_a_dead_worker(project, alice, attempts=9)
    client.force_login(charlie)
    assert client.post(f"/jobs/{job.pk}/retry/").status_code == 404
    assert client.post(f"/api/v1/jobs/{job.pk}/retry/").status_code == 404


@pytest.mark.django_db
def test_a_job_with_a_fresh_heartbeat_is_left_alone(project, alice):
    job = running_job_of_a_dead_worker(project, alice, attempts=1)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())
    assert reap_stale_jobs()["requeued"] == 0
    assert Job.objects.get(pk=job.pk).status == JobStatus.RUNNING


@pytest.mark.django_db
def test_the_reaper_leaves_the_fresh_folder_of_a_job_being_claimed(project, alice, settings):
    """The reaper lists the running jobs, then their folders: a job a worker claims in between
    is not running in its list, yet its folder is the live run's. Only an old one is removed."""
    job = Job.objects.create(
        project=project,
        kind=JobKind.EXPORT,
        format="waypoint",
        created_by=alice,
        started_at=timezone.now(),
    )
    folder = job_tmp_dir(job)
    folder.mkdir(parents=True)
    (folder / "export.jsonl").write_bytes(b"{}")
    reap_stale_jobs()
    assert folder.exists(), "a run that has just started keeps its folder"
    old = time.time() - 2 * settings.WAYPOINT_JOB_STALE_S
    os.utime(folder, (old, old))
    reap_stale_jobs()
    assert not folder.exists()


@pytest.mark.django_db
def test_the_reaper_removing_a_killed_runs_folder_spares_the_run_that_replaced_it(
    project, alice, monkeypatch
):
    """A new worker claims the requeued job while the reaper is removing the killed run's
    folder: the new run unpacks in a folder of its own, which the reaper leaves whole."""
    job = running_job_of_a_dead_worker(project, alice, attempts=1)
    killed = job_tmp_dir(job)
    killed.mkdir(parents=True)
    (killed / "half.jsonl").write_bytes(b"{")
    written = time.time() - 300
    os.utime(killed, (written, written))
    Job.objects.filter(pk=job.pk).update(status=JobStatus.QUEUED, heartbeat_at=None)

    real_rmtree = shutil.rmtree
    new_run = []

    def claimed_meanwhile(path, *args, **kwargs):
        if not new_run:  # between the reaper's choice of a folder and its removal
            claimed = claim(job.pk)
            folder = job_tmp_dir(claimed)
            folder.mkdir(parents=True)
            (folder / "export.jsonl").write_bytes(b"{}")
            new_run.append(folder)
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", claimed_meanwhile)
    assert reap_stale_jobs()["folders"] == 1
    assert not killed.exists()
    assert new_run and (new_run[0] / "export.jsonl").read_bytes() == b"{}"
    assert run_folders(job) == new_run


@pytest.mark.django_db(transaction=True)
def test_an_import_unpacks_in_its_own_folder_and_leaves_nothing_behind(project, alice, monkeypatch):
    monkeypatch.setattr("trajectories.jobs._send", lambda pk: None)
    seen = []
    real_mkdtemp = tempfile.mkdtemp

    def spy(*args, **kwargs):
        folder = real_mkdtemp(*args, **kwargs)
        seen.append(Path(folder))
        return folder

    monkeypatch.setattr(tempfile, "mkdtemp", spy)
    upload = ContentFile(b"PK\x05\x06" + b"\0" * 18, name="empty.zip")
    job = do_start_import(project, upload, "waypoint", alice)
    run_job(job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED  # an empty archive
    assert seen and all(job_tmp_dir(job) in folder.parents for folder in seen)
    assert not run_folders(job)


@pytest.mark.django_db(transaction=True)
def test_an_upload_cut_off_by_a_killed_web_server_leaves_nothing_after_the_reaper(
    project, alice, settings, worker_database_url, tmp_path
):
    from rest_framework.authtoken.models import Token

    from ..devices.conftest import free_port

    token = Token.objects.create(user=alice)
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    port = free_port()
    env = dict(
        os.environ,
        DEBUG="1",
        DATABASE_URL=worker_database_url,
        FILE_UPLOAD_TEMP_DIR=str(uploads),
        WAYPOINT_VAR_DIR=str(settings.VAR_DIR),
    )
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _answers(port), what="the web server")
        boundary = "waypointboundary"
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="format"\r\n\r\nwaypoint\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="big.zip"\r\nContent-Type: application/zip\r\n\r\n'
        ).encode()
        with socket.create_connection(("127.0.0.1", port)) as upload:
            upload.sendall(
                (
                    f"POST /api/v1/projects/{project.pk}/imports/ HTTP/1.1\r\n"
                    f"Host: 127.0.0.1:{port}\r\nAuthorization: Token {token.key}\r\n"
                    f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                    f"Content-Length: {len(head) + 64 * 1024**2}\r\n\r\n"
                ).encode()
                + head
            )
            chunk = b"\0" * 1024**2
            for _ in range(12):  # 12 of the promised 64 MiB, then the server dies
                upload.sendall(chunk)
            wait_until(lambda: any(uploads.iterdir()), what="the upload to stream to disk")
            server.kill()
            server.wait(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
    leftovers = list(uploads.iterdir())
    assert leftovers, "a cut-off upload leaves its partial file"
    settings.FILE_UPLOAD_TEMP_DIR = str(uploads)
    settings.WAYPOINT_UPLOAD_TMP_MAX_AGE_S = 3600
    assert reap_stale_jobs()["folders"] == 0  # a recent upload may still be in progress
    settings.WAYPOINT_UPLOAD_TMP_MAX_AGE_S = 0
    time.sleep(0.01)
    assert reap_stale_jobs()["folders"] == len(leftovers)
    assert not any(uploads.iterdir())


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False
