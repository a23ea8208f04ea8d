"""In Chromium: choose a dataset export, then score predictions and read the charts."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.files.storage import default_storage

from formats.catalogue import export_trajectories
from formats.jobs import zip_folder
from tests.annotate.test_workspace_browser import page_as
from tests.conftest import shot
from tests.trajectories.builders import make_record
from trajectories.models import Job, JobKind, JobStatus, Trajectory
from trajectories.services import do_create_project, do_import_trajectory


@pytest.mark.django_db(transaction=True)
def test_a_member_exports_a_dataset_and_scores_predictions(browser, live_server, tmp_path):
    alice = get_user_model().objects.create_user("alice", password="alice-password")
    project = do_create_project("Shops", alice)
    intents = ["purchase_order", "lookup", "booking"]
    for seed in range(6):
        record = make_record(steps=4 + 5 * seed, seed=seed)
        record.task.uid, record.task.intent = f"task-{seed}", intents[seed % 3]
        do_import_trajectory(project, record)

    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/projects/{project.pk}/export/")
    page.select_option("select[name=format]", "waypoint")
    assert not page.is_visible("#export-split") and not page.is_visible("#export-sft")
    page.select_option("select[name=format]", "androtmem")
    assert page.is_visible("#export-split") and not page.is_visible("#export-sft")
    page.select_option("select[name=format]", "stamp-sft")
    assert page.is_visible("#export-sft")
    page.select_option("select[name=split_by]", "task")
    page.fill("input[name=memory_ratio]", "3")
    page.fill("input[name=apps]", "com.example.shop")
    shot(page, "datasets-export", full_page=True)
    assert page.locator("select[name=split_by] option").count() == 4

    # A benchmark export, made here rather than by a worker.
    folder = tmp_path / "bench"
    export_trajectories(Trajectory.objects.filter(project=project), folder, "androtmem")
    zip_folder(folder, tmp_path / "bench.zip")
    job = Job.objects.create(
        project=project,
        kind=JobKind.EXPORT,
        format="androtmem",
        status=JobStatus.SUCCEEDED,
        created_by=alice,
        counts={"trajectories": 6},
    )
    with open(tmp_path / "bench.zip", "rb") as handle:
        job.output_path = default_storage.save(f"jobs/{job.pk}/bench.zip", File(handle))
    job.save()
    predictions = tmp_path / "predictions.jsonl"
    with open(predictions, "w") as out:
        for task in map(json.loads, (folder / "test.jsonl").read_text().splitlines()):
            for step in task["steps"]:
                y = 120 if step["step_index"] % 3 else 0  # every third step misses
                action = {"action": "tap", "x": 60, "y": y}
                out.write(
                    json.dumps(
                        {
                            "task_id": task["task_id"],
                            "step_index": step["step_index"],
                            "prediction": {"action": action},
                        }
                    )
                    + "\n"
                )
        out.write("not json\n")

    page.goto(f"{live_server.url}/projects/{project.pk}/evaluate/")
    page.set_input_files("input[name=predictions]", str(predictions))
    page.click("button:has-text('Score')")
    page.wait_for_selector("section.result")
    assert page.locator("figure.chart").count() == 3
    assert page.locator("dd.score").first.inner_text() == "0.6465"  # 64 of 99 steps
    assert page.locator("text=line 100: invalid JSON (Expecting value)").count() == 1
    shot(page, "datasets-evaluate", full_page=True)
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_evaluate_is_in_the_top_bar_and_an_export_takes_approved_work_by_default(
    browser, live_server, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the export runs in the request
    alice = get_user_model().objects.create_user("alice", password="alice-password")
    project = do_create_project("Shops", alice)
    made = [do_import_trajectory(project, make_record(steps=2, seed=s))[0] for s in range(3)]
    Trajectory.objects.filter(pk=made[0].pk).update(status="approved")

    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/projects/{project.pk}/trajectories/")
    page.click("nav.projectnav >> text=Evaluate")
    page.wait_for_selector('h1:has-text("Score an agent\'s predictions")')
    assert page.url.endswith(f"/projects/{project.pk}/evaluate/")
    nav = page.locator("nav.topnav").bounding_box()
    assert nav["height"] < 60, nav  # still one line

    page.click("nav.projectnav >> text=Export")
    assert page.input_value("#id_status") == "approved"
    options = page.locator("#id_status option").all_inner_texts()
    assert options[0] == "any status (3)" and "Approved (1)" in options
    assert "Annotating (2)" in options
    note = page.inner_text("#export-status-note")
    assert "In this project: annotating 2 · approved 1." in note
    shot(page, "datasets-export-default-approved", full_page=True)
    page.select_option("#id_format", "waypoint")
    page.click("text=Start export")
    page.wait_for_selector("text=Download waypoint export")
    job = Job.objects.get(kind=JobKind.EXPORT)
    assert job.params["filters"] == {"status": "approved"}
    assert job.counts["trajectories"] == 1
