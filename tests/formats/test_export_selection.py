"""Choosing what a dataset export holds: filters and splits, from the API to the job's archive."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime

import pytest
from django.core.files.storage import default_storage
from rest_framework.test import APIClient

from formats.jobs import do_start_export
from tests.trajectories.builders import make_record
from trajectories import events
from trajectories.jobs import export_name, run_job
from trajectories.models import Job, Trajectory
from trajectories.selectors import check_trajectory_filters, trajectory_list
from trajectories.services import do_import_trajectory, record_event
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db


def _import(project, seed, **overrides):
    record = make_record(steps=1, seed=seed, **overrides)
    do_import_trajectory(project, record)
    return record.uid


def selected(project, filters) -> set[str]:
    chosen = trajectory_list(None, project, filters)
    return {str(uid) for uid in chosen.values_list("uid", flat=True)}


def test_it_selects_by_task_app_date_annotator_and_list(project, alice, bob):
    first = _import(project, 1, recorded_at=datetime(2026, 10, 1, 9, tzinfo=UTC))
    second = _import(project, 2, recorded_at=datetime(2026, 11, 5, 9, tzinfo=UTC))
    record = make_record(steps=1, seed=3, recorded_by="carol")
    record.task.uid, record.task.apps = "task-other", ["com.example.maps"]
    do_import_trajectory(project, record)
    third = record.uid
    everything = {first, second, third}
    assert selected(project, {}) == everything
    assert selected(project, {"tasks": ["task-1", "task-2"]}) == {first, second}
    assert selected(project, {"apps": "com.example.maps"}) == {third}
    assert selected(project, {"apps": ["com.example.shop"]}) == everything  # every screen's app
    # The third was recorded on 2026-11-01 (the builder's default).
    assert selected(project, {"recorded_from": "2026-10-02", "recorded_to": "2026-11-30"}) == {
        second,
        third,
    }
    assert selected(project, {"recorded_to": "2026-10-01"}) == {first}
    assert selected(project, {"annotator": "carol"}) == {third}
    trajectory = Trajectory.objects.get(uid=first)
    record_event(
        events.STEP_UPDATED, actor=bob, project=project, trajectory=trajectory, obj=trajectory
    )
    assert selected(project, {"annotator": "bob"}) == {first}
    assert selected(project, {"trajectories": [second, third]}) == {second, third}


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"recorded_from": "01/02/2026"}, "filters.recorded_from: '01/02/2026' is not a date"),
        ({"trajectories": ["nope"]}, "filters.trajectories: 'nope' is not a trajectory id"),
        ({"apps": [1]}, "filters.apps: must be a list of strings"),
        (
            {"recorded_from": "2026-02-02", "recorded_to": "2026-01-01"},
            "filters: recorded_from is after recorded_to",
        ),
    ],
)
def test_bad_filters_are_refused_by_name(filters, message):
    with pytest.raises(InvalidData, match=message.replace("(", r"\(")):
        check_trajectory_filters(filters)


def test_an_api_export_runs_with_its_format_options_split_and_filter(
    project, alice, django_capture_on_commit_callbacks
):
    for seed in range(4):
        _import(project, seed, status="approved" if seed < 3 else "rejected")
    client = APIClient()
    client.force_authenticate(alice)
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            f"/api/v1/projects/{project.pk}/exports/",
            {
                "format": "stamp-sft",
                "filters": {"status": "approved"},
                "options": {"k": 2, "thought": False},
                "split": {"ratios": {"train": 2, "test": 1}, "seed": 4},
            },
            format="json",
        )
    assert response.status_code == 202, response.json()
    run_job(response.json()["id"])
    job = Job.objects.get(pk=response.json()["id"])
    assert job.status == "succeeded", job.message
    assert job.counts["splits"] == {"train": 2, "test": 1}
    with default_storage.open(job.output_path, "rb") as handle:
        archive = zipfile.ZipFile(io.BytesIO(handle.read()))
    name = export_name(job)
    manifest = json.loads(archive.read(f"{name}/manifest.json"))
    assert manifest["filter"] == {"status": "approved"}
    assert manifest["options"]["k"] == 2 and manifest["options"]["thought"] is False
    assert manifest["split"]["ratios"] == {"train": 2 / 3, "test": 1 / 3}
    assert {f"{name}/train.jsonl", f"{name}/test.jsonl", f"{name}/README.md"} <= set(
        archive.namelist()
    )


def test_the_waypoint_format_refuses_a_split(project, alice):
    with pytest.raises(InvalidData, match="the waypoint format takes no options and no split"):
        do_start_export(project, "waypoint", alice, split={"ratios": {"a": 1}})


def test_the_command_line_exports_with_filter_split_and_options(project, tmp_path):
    from io import StringIO

    from django.core.management import CommandError, call_command

    for seed in range(4):
        _import(project, seed, status="approved" if seed else "rejected")
    out = StringIO()
    call_command(
        "export_trajectories",
        "--project", project.pk,
        "--format", "stamp-sft",
        "--out", tmp_path / "sft",
        "--status", "approved",
        "--split-by", "task",
        "--split-ratios", "train=2,test=1",
        "--option", "k=2",
        "--option", "thought=false",
        stdout=out,
    )  # fmt: skip
    assert out.getvalue().strip() == f"exported 3 trajectories (3 steps) to {tmp_path / 'sft'}"
    manifest = json.loads((tmp_path / "sft" / "manifest.json").read_text())
    assert manifest["filter"] == {"status": "approved"}
    assert manifest["options"]["k"] == 2 and manifest["options"]["thought"] is False
    assert manifest["split"]["by"] == "task"
    assert sum(manifest["counts"]["splits"].values()) == 3
    with pytest.raises(CommandError, match="options: unknown option 'K' for stamp-sft"):
        call_command(
            "export_trajectories", "--project", project.pk, "--format", "stamp-sft",
            "--out", tmp_path / "bad", "--option", "K=2",
        )  # fmt: skip


def test_a_native_export_records_its_filter_and_has_a_card(
    project, alice, django_capture_on_commit_callbacks
):
    _import(project, 1, status="approved")
    _import(project, 2)
    with django_capture_on_commit_callbacks(execute=False):
        job = do_start_export(project, "waypoint", alice, {"status": "approved"})
    run_job(job.pk)
    job = Job.objects.get(pk=job.pk)
    with default_storage.open(job.output_path, "rb") as handle:
        archive = zipfile.ZipFile(io.BytesIO(handle.read()))
    name = export_name(job)
    manifest = json.loads(archive.read(f"{name}/manifest.json"))
    assert manifest["filter"] == {"status": "approved"}
    assert manifest["counts"]["trajectories"] == 1
    card = archive.read(f"{name}/README.md").decode()
    assert 'Selection: status = "approved".' in card
