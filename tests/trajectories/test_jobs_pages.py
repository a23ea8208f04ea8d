"""Import, export, job and download pages, for alice (admin), bob (annotator) and charlie."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from trajectories.models import Job, JobKind, JobStatus, Membership

pytestmark = pytest.mark.django_db


def zip_upload(name: str = "data.zip") -> SimpleUploadedFile:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("data/trajectories.jsonl", "")
    return SimpleUploadedFile(name, out.getvalue(), content_type="application/zip")


def make_job(project, alice, **fields) -> Job:
    defaults = {"kind": JobKind.EXPORT, "format": "waypoint", "created_by": alice}
    return Job.objects.create(project=project, **{**defaults, **fields})


# ---------------------------------------------------------------------------- import


def test_it_shows_the_import_form_to_members(client, project, alice, bob):
    for user in (alice, bob):
        client.force_login(user)
        response = client.get(reverse("project-import", args=[project.pk]))
        assert response.status_code == 200
        assert b'enctype="multipart/form-data"' in response.content
        assert b'<option value="waypoint"' in response.content


def test_it_hides_the_import_page_from_charlie(client, project, charlie):
    client.force_login(charlie)
    url = reverse("project-import", args=[project.pk])
    assert client.get(url).status_code == 404
    assert client.post(url, {"file": zip_upload(), "format": "waypoint"}).status_code == 404
    assert not Job.objects.exists()


def test_it_queues_an_import(client, project, bob):
    client.force_login(bob)
    response = client.post(
        reverse("project-import", args=[project.pk]),
        {"file": zip_upload(), "format": "waypoint"},
    )
    job = Job.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("job-detail", args=[job.pk])
    assert (job.kind, job.format, job.status, job.created_by) == (
        JobKind.IMPORT,
        "waypoint",
        JobStatus.QUEUED,
        bob,
    )
    assert default_storage.exists(job.input_path)


def test_it_refuses_a_file_that_is_not_an_archive(client, project, alice):
    client.force_login(alice)
    upload = SimpleUploadedFile("notes.txt", b"hello", content_type="text/plain")
    response = client.post(
        reverse("project-import", args=[project.pk]), {"file": upload, "format": "waypoint"}
    )
    assert response.status_code == 200
    assert "file: notes.txt is not a .zip or .tar archive" in response.content.decode()
    assert not Job.objects.exists()


def test_it_refuses_a_broken_zip(client, project, alice):
    client.force_login(alice)
    upload = SimpleUploadedFile("data.zip", b"PK\x03\x04 truncated", content_type="application/zip")
    response = client.post(
        reverse("project-import", args=[project.pk]), {"file": upload, "format": "waypoint"}
    )
    assert "file: data.zip is not a readable .zip archive" in response.content.decode()
    assert not Job.objects.exists()


def test_it_shows_the_service_error_for_an_oversized_upload(client, project, alice, settings):
    settings.WAYPOINT_MAX_UPLOAD_BYTES = 10
    client.force_login(alice)
    response = client.post(
        reverse("project-import", args=[project.pk]),
        {"file": zip_upload(), "format": "waypoint"},
    )
    assert response.status_code == 200
    assert "over the limit of 10 bytes (WAYPOINT_MAX_UPLOAD_BYTES)" in response.content.decode()
    assert not Job.objects.exists()


def test_it_refuses_an_unknown_format(client, project, alice):
    client.force_login(alice)
    response = client.post(
        reverse("project-import", args=[project.pk]),
        {"file": zip_upload(), "format": "nonsense"},
    )
    assert response.status_code == 200
    assert response.context["form"].errors["format"]
    assert not Job.objects.exists()


# ---------------------------------------------------------------------------- export


def test_it_queues_an_export_with_filters(client, project, alice, bob):
    for user in (alice, bob):
        client.force_login(user)
        page = client.get(reverse("project-export", args=[project.pk]))
        assert page.status_code == 200
        response = client.post(
            reverse("project-export", args=[project.pk]),
            {"format": "waypoint", "status": "approved", "outcome": "", "source": "", "task": ""},
        )
        job = Job.objects.filter(created_by=user).get()
        assert response.status_code == 302
        assert response["Location"] == reverse("job-detail", args=[job.pk])
        assert job.kind == JobKind.EXPORT
        assert job.params == {"filters": {"status": "approved"}}
        detail = client.get(response["Location"])
        assert detail.status_code == 200
        assert b"Queued" in detail.content


def test_it_hides_the_export_page_from_charlie(client, project, charlie):
    client.force_login(charlie)
    url = reverse("project-export", args=[project.pk])
    assert client.get(url).status_code == 404
    assert client.post(url, {"format": "waypoint"}).status_code == 404
    assert not Job.objects.exists()


def test_it_refuses_members_without_a_role(client, project, bob):
    Membership.objects.filter(project=project, user=bob).update(role="")
    client.force_login(bob)
    assert client.get(reverse("project-export", args=[project.pk])).status_code == 403
    assert client.get(reverse("project-import", args=[project.pk])).status_code == 403


# ---------------------------------------------------------------------------- job page


def test_it_polls_while_the_job_runs(client, project, alice):
    job = make_job(project, alice, status=JobStatus.RUNNING, done=3, total=12)
    client.force_login(alice)
    html = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "hx-trigger=\"every 1s [document.visibilityState === 'visible']\"" in html
    assert "width: 25%" in html and "3 / 12" in html
    partial = client.get(reverse("job-detail", args=[job.pk]), headers={"HX-Request": "true"})
    assert b"<html" not in partial.content
    assert b'id="job-status"' in partial.content and b"hx-trigger" in partial.content


def test_it_stops_polling_when_the_job_is_finished(client, project, alice):
    job = make_job(
        project, alice, status=JobStatus.FAILED, message="line 3: task.goal: must not be empty"
    )
    client.force_login(alice)
    partial = client.get(reverse("job-detail", args=[job.pk]), headers={"HX-Request": "true"})
    html = partial.content.decode()
    assert "hx-trigger" not in html
    assert "line 3: task.goal: must not be empty" in html
    assert reverse("job-download", args=[job.pk]) not in html


def test_it_hides_the_job_from_charlie(client, project, alice, charlie):
    job = make_job(project, alice)
    client.force_login(charlie)
    assert client.get(reverse("job-detail", args=[job.pk])).status_code == 404
    assert client.get(reverse("job-download", args=[job.pk])).status_code == 404


def test_the_project_page_lists_recent_jobs(client, project, alice, bob):
    job = make_job(project, alice, status=JobStatus.SUCCEEDED)
    client.force_login(bob)
    response = client.get(reverse("trajectory-list", args=[project.pk]))
    assert reverse("job-detail", args=[job.pk]).encode() in response.content


def test_the_project_page_lists_the_five_newest_jobs_newest_first(client, project, alice):
    jobs = [make_job(project, alice, status=JobStatus.SUCCEEDED) for _ in range(7)]
    base = timezone.now()
    for age, job in zip((3, 1, 6, 0, 5, 2, 4), jobs, strict=True):  # not in id order
        Job.objects.filter(pk=job.pk).update(created_at=base - timedelta(hours=age))
    client.force_login(alice)
    html = client.get(reverse("trajectory-list", args=[project.pk])).content.decode()
    newest = sorted(jobs, key=lambda job: Job.objects.get(pk=job.pk).created_at, reverse=True)
    positions = [html.find(reverse("job-detail", args=[job.pk]) + '"') for job in newest]
    assert all(p > 0 for p in positions[:5]) and all(p < 0 for p in positions[5:])
    assert positions[:5] == sorted(positions[:5])


def test_the_project_page_says_when_a_running_jobs_worker_vanished(client, project, alice):
    job = make_job(
        project,
        alice,
        status=JobStatus.RUNNING,
        attempts=3,
        heartbeat_at=timezone.now() - timedelta(minutes=10),
    )
    client.force_login(alice)
    html = client.get(reverse("trajectory-list", args=[project.pk])).content.decode()
    assert Job.objects.get(pk=job.pk).status == JobStatus.FAILED
    assert f'<span class="pill job-{JobStatus.FAILED}">' in html
    assert f'<span class="pill job-{JobStatus.RUNNING}">' not in html


# ---------------------------------------------------------------------------- download


def test_it_downloads_a_succeeded_export(client, project, alice, bob, charlie):
    path = default_storage.save("jobs/test/waypoint-export.zip", ContentFile(b"zip bytes \x00\xff"))
    job = make_job(project, alice, status=JobStatus.SUCCEEDED, output_path=path)
    url = reverse("job-download", args=[job.pk])
    for user in (alice, bob):
        client.force_login(user)
        page = client.get(reverse("job-detail", args=[job.pk]))
        assert url.encode() in page.content
        response = client.get(url)
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == b"zip bytes \x00\xff"
        assert "attachment" in response["Content-Disposition"]
        # Named for people, whatever storage called the file.
        day = timezone.localdate(job.created_at).isoformat()
        assert f'filename="shops-waypoint-{day}.zip"' in response["Content-Disposition"]
    client.force_login(charlie)
    assert client.get(url).status_code == 404


def test_it_has_nothing_to_download_before_success(client, project, alice):
    job = make_job(project, alice, status=JobStatus.RUNNING, output_path="jobs/x/never.zip")
    client.force_login(alice)
    assert client.get(reverse("job-download", args=[job.pk])).status_code == 404
