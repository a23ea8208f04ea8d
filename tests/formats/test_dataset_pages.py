"""The export page's dataset choices and the evaluator page, for alice, bob and charlie."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from formats.jobs import do_start_export
from tests.trajectories.builders import make_record
from trajectories.jobs import run_job
from trajectories.models import Job, Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def test_the_export_page_queues_a_split_sft_export_with_options(client, project, alice, bob):
    for user in (alice, bob):
        client.force_login(user)
        page = client.get(reverse("project-export", args=[project.pk]))
        assert b"STAMP SFT (ms-swift / LLaMA-Factory chat samples)" in page.content
        assert b"grouped by task" in page.content
        response = client.post(
            reverse("project-export", args=[project.pk]),
            {
                "format": "stamp-sft",
                "status": "approved",
                "apps": "com.example.shop, com.example.maps",
                "recorded_from": "2026-11-01",
                "split_by": "task",
                "split_ratios": "train=0.8, test=0.2",
                "split_seed": "7",
                "k": "3",
                "memory_ratio": "3",
                "thought": "on",
                "parquet": "on",
            },
        )
        assert response.status_code == 302
        job = Job.objects.filter(created_by=user).get()
        assert job.format == "stamp-sft"
        assert job.params == {
            "filters": {
                "status": "approved",
                "apps": ["com.example.shop", "com.example.maps"],
                "recorded_from": "2026-11-01",
            },
            "options": {
                "k": 3,
                "memory_ratio": 3.0,
                "thought": True,
                "trainable_only": False,
                "parquet": True,
            },
            "split": {"by": "task", "ratios": {"train": 0.8, "test": 0.2}, "seed": 7},
        }


def test_the_export_page_names_a_bad_split(client, project, alice):
    client.force_login(alice)
    response = client.post(
        reverse("project-export", args=[project.pk]),
        {"format": "androtmem", "split_by": "trajectory", "split_ratios": "train=lots"},
    )
    assert response.status_code == 200
    assert "&#x27;train=lots&#x27; is not name=ratio, e.g. train=0.9" in response.content.decode()
    assert not Job.objects.exists()


@pytest.fixture
def benchmark(project, alice, django_capture_on_commit_callbacks) -> Job:
    do_import_trajectory(project, make_record(steps=3, seed=1))
    with django_capture_on_commit_callbacks(execute=False):
        job = do_start_export(project, "androtmem", alice)
    run_job(job.pk)
    return Job.objects.get(pk=job.pk)


def test_members_score_predictions_on_the_evaluator_page(client, project, alice, bob, benchmark):
    task_id = str(Trajectory.objects.get().uid)
    lines = [
        {
            "task_id": task_id,
            "step_index": i,
            "prediction": {"action": {"action": "tap", "x": 60, "y": 120}},
        }
        for i in range(2)
    ]
    body = ("".join(json.dumps(line) + "\n" for line in lines) + "oops\n").encode()
    url = reverse("project-evaluate", args=[project.pk])
    for user in (alice, bob):
        client.force_login(user)
        page = client.get(url)
        assert page.status_code == 200
        assert f'<option value="{benchmark.pk}"'.encode() in page.content
        response = client.post(
            url,
            {"export_job": benchmark.pk, "predictions": SimpleUploadedFile("p.jsonl", body)},
        )
        html = response.content.decode()
        assert response.status_code == 200
        assert '<dt>AMS</dt><dd class="score">0.6667</dd>' in html
        assert "line 3: invalid JSON (Expecting value)" in html
        assert "Purchase / Order" in html  # the per-intent chart
        assert "0-9" in html  # the per-length chart


def test_the_evaluator_page_is_hidden_from_charlie(client, project, charlie, benchmark):
    client.force_login(charlie)
    assert client.get(reverse("project-evaluate", args=[project.pk])).status_code == 404


def test_the_job_page_shows_split_counts_and_leads_to_the_evaluator(
    client, project, alice, benchmark
):
    client.force_login(alice)
    html = client.get(reverse("job-detail", args=[benchmark.pk])).content.decode()
    assert "splits: test 1" in html
    assert "unmapped_actions: none" in html
    assert reverse("project-evaluate", args=[project.pk]) in html


def test_the_export_form_defaults_to_approved_work_and_counts_each_status(client, project, alice):
    made = [do_import_trajectory(project, make_record(steps=1, seed=s))[0] for s in range(5)]
    Trajectory.objects.filter(pk__in=[t.pk for t in made[:2]]).update(status="approved")
    Trajectory.objects.filter(pk=made[2].pk).update(status="in_review")
    client.force_login(alice)
    page = client.get(reverse("project-export", args=[project.pk])).content.decode()
    select = page.split('name="status"')[1].split("</select>")[0]
    assert '<option value="approved" selected>Approved (2)</option>' in select
    assert '<option value="">any status (5)</option>' in select
    assert '<option value="annotating">Annotating (2)</option>' in select
    assert '<option value="in_review">In review (1)</option>' in select
    assert '<option value="rejected">Rejected (0)</option>' in select
    assert "No trajectory is approved yet" not in page
    # What the browser sends when nobody touches the status: approved only.
    response = client.post(
        reverse("project-export", args=[project.pk]), {"format": "waypoint", "status": "approved"}
    )
    assert response.status_code == 302
    assert Job.objects.get().params["filters"] == {"status": "approved"}


def test_the_export_form_says_when_nothing_is_approved(client, project, alice):
    do_import_trajectory(project, make_record(steps=1, seed=1))
    client.force_login(alice)
    page = client.get(reverse("project-export", args=[project.pk])).content.decode()
    assert "No trajectory is approved yet." in page
    assert '<option value="approved" selected>Approved (0)</option>' in page
