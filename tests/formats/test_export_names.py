"""An export is named for the people who file it, and its task filter tells tasks apart."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from formats.jobs import do_start_export
from tests.annotate.test_workspace_browser import page_as
from tests.conftest import shot
from tests.trajectories.builders import make_record
from trajectories.jobs import run_job
from trajectories.models import Job, Task
from trajectories.services import do_create_project, do_import_trajectory
from trajectories.views import distinct_labels

HEAD = "In ShopMate, compare the prices of the Acme Smart Watch, the Nimbus Smart Watch and the "
GOALS = [HEAD + f"{brand} Smart Watch; write them down." for brand in ("Orbit", "Vertex")]


def _import_with_goal(project, seed: int, goal: str):
    trajectory, _ = do_import_trajectory(project, make_record(steps=1, seed=seed))
    Task.objects.filter(pk=trajectory.task_id).update(goal=goal)
    return trajectory


@pytest.mark.django_db
def test_the_download_is_named_by_project_format_and_day(
    alice, client, django_capture_on_commit_callbacks
):
    project = do_create_project("Shops & Notes (2026)", alice)
    do_import_trajectory(project, make_record(steps=1, seed=1))
    with django_capture_on_commit_callbacks(execute=False):
        job = do_start_export(project, "stamp-sft", alice)
    run_job(job.pk)
    job = Job.objects.get(pk=job.pk)
    day = timezone.localdate(job.created_at).isoformat()
    client.force_login(alice)
    response = client.get(f"/jobs/{job.pk}/download/")
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        f'attachment; filename="shops-notes-2026-stamp-sft-{day}.zip"'
    )
    b"".join(response.streaming_content)  # close the file


def test_long_goals_that_begin_alike_get_labels_that_differ():
    labels = distinct_labels(GOALS)
    assert len(set(labels)) == 2
    assert all(len(label) <= 95 for label in labels)
    assert "Orbit Smart Watch" in labels[0] and "Vertex Smart Watch" in labels[1]
    assert labels[0].startswith("In ShopMate, compare")
    assert distinct_labels(["Open the settings"]) == ["Open the settings"]


@pytest.mark.django_db
def test_the_export_form_names_tasks_with_the_same_goal_by_uid(project, alice, client):
    first = _import_with_goal(project, 1, "Open the settings")
    second = _import_with_goal(project, 2, "Open the settings")
    client.force_login(alice)
    page = client.get(f"/projects/{project.pk}/export/").content.decode()
    assert f"Open the settings ({first.task.uid})" in page
    assert f"Open the settings ({second.task.uid})" in page


@pytest.mark.django_db(transaction=True)
def test_in_the_browser_tasks_are_told_apart_and_the_download_is_named(
    browser, live_server, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the export runs in the request
    alice = get_user_model().objects.create_user("alice", password="alice-password")
    project = do_create_project("Shops", alice)
    for seed, goal in enumerate(GOALS):
        _import_with_goal(project, seed, goal)

    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/projects/{project.pk}/export/")
    options = page.locator("#id_task option").all_inner_texts()[1:]
    assert len(options) == 2 and len(set(options)) == 2, options
    assert "Orbit" in options[0] and "Vertex" in options[1]
    shot(page, "lists-export-form")

    page.select_option("#id_format", "waypoint")
    page.select_option("#id_status", "")  # none is approved: export them all
    page.click("text=Start export")
    page.wait_for_selector("text=Download waypoint export")
    with page.expect_download() as download:
        page.click("text=Download waypoint export")
    day = timezone.localdate().isoformat()
    assert download.value.suggested_filename == f"shops-waypoint-{day}.zip"
