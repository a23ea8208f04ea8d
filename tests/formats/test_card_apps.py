"""Dataset cards and app splits file a trajectory under the apps it used when its task names
none: a recording in Notes is a Notes trajectory, not "(no app)"."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from formats.catalogue import export_trajectories
from formats.dataset import apps_by_uid, record_apps
from formats.waypoint import iter_records
from tests.trajectories.builders import make_record
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db

NOTES = "com.waypoint.notes"
FORMATS = [
    "waypoint",
    "androtmem",
    "stamp-sft",
    "memory-world",
    "androidcontrol",
    "gui-odyssey",
    "aitw",
    "androidcontrol-tfrecord",
]


def recorded_in_notes(seed: int, *, packages=True):
    """From the home screen, open Notes and work in it; the task names no app."""
    record = make_record(steps=3, seed=seed)
    screens = [
        dataclasses.replace(s, package=("com.android.launcher3" if i == 0 else NOTES))
        if packages
        else dataclasses.replace(s, package="")
        for i, s in enumerate(record.screens)
    ]
    steps = list(record.steps)
    if packages:
        steps[0] = dataclasses.replace(
            steps[0], action={"type": "open_app", "package": NOTES}, target=None
        )
    task = dataclasses.replace(record.task, uid=f"free-{seed}", apps=[])
    return dataclasses.replace(record, task=task, screens=screens, steps=steps)


def app_rows(card: str) -> list[str]:
    return [line.split("|")[1].strip() for line in card.splitlines() if line.startswith("| ")]


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_card_files_a_notes_recording_under_notes(project, tmp_path, fmt):
    do_import_trajectory(project, recorded_in_notes(1))
    do_import_trajectory(project, make_record(steps=2, seed=2))  # its task names the shop
    out = tmp_path / fmt
    export_trajectories(Trajectory.objects.filter(project=project), out, fmt)
    card = (out / "README.md").read_text(encoding="utf-8")
    rows = app_rows(card)
    assert NOTES in rows and "com.example.shop" in rows, card
    assert "(no app)" not in card
    assert "com.android.launcher3" not in card  # the home screen is not an app it used


def test_only_a_trajectory_that_shows_no_app_is_filed_under_no_app(project, tmp_path):
    do_import_trajectory(project, recorded_in_notes(3, packages=False))
    out = tmp_path / "w"
    export_trajectories(Trajectory.objects.filter(project=project), out, "waypoint")
    assert "(no app)" in app_rows((out / "README.md").read_text(encoding="utf-8"))


def test_records_and_the_database_agree(project):
    made = [
        do_import_trajectory(project, recorded_in_notes(4))[0],
        do_import_trajectory(project, recorded_in_notes(5, packages=False))[0],
        do_import_trajectory(project, make_record(steps=1, seed=6))[0],
    ]
    trajectories = Trajectory.objects.filter(pk__in=[t.pk for t in made])
    from_records = {r["id"]: record_apps(r) for r in iter_records(trajectories)}
    assert from_records == apps_by_uid(trajectories)
    assert sorted(from_records.values()) == [["(no app)"], ["com.example.shop"], [NOTES]]


def test_a_split_by_app_keeps_a_notes_recording_with_the_notes_tasks(project, tmp_path):
    for seed in range(4):
        record = make_record(steps=1, seed=10 + seed)
        record.task.uid = f"task-{seed}"
        record.task.apps = [NOTES] if seed % 2 else [f"com.example.app{seed}"]
        do_import_trajectory(project, record)
    free, _ = do_import_trajectory(project, recorded_in_notes(20))
    for seed in range(6):
        out = tmp_path / f"s{seed}"
        split = {"ratios": {"train": 1, "test": 1}, "by": "app", "seed": seed}
        export_trajectories(
            Trajectory.objects.filter(project=project), out, "androtmem", split=split
        )
        where = {
            name: {t["task_uid"] for t in map(json.loads, (out / f"{name}.jsonl").open())}
            for name in ("train", "test")
            if Path(out / f"{name}.jsonl").exists()
        }
        together = [name for name, uids in where.items() if "free-20" in uids]
        assert len(together) == 1
        assert {"task-1", "task-3"} <= where[together[0]], (seed, where)
