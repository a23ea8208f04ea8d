"""An import's files checked by worker processes: the same result, and the same errors, as
checked one by one in the importing process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats import waypoint
from formats.catalogue import export_trajectories, import_trajectories
from tests.trajectories.builders import make_record
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

from .test_import_images import png_of_noise
from .test_native_format import _replace_file, assert_refused

pytestmark = pytest.mark.django_db


@pytest.fixture
def workers(settings, monkeypatch):
    """Two workers, whatever the machine, for however few files."""
    settings.WAYPOINT_IMPORT_WORKERS = 2
    monkeypatch.setattr(waypoint._Checker, "MIN_FILES", 0)
    sent = []
    real = waypoint._Checker._send

    def counting(self, items):
        real(self, items)
        sent.extend(name for (_, name), _ in items if self.pool is not None)

    monkeypatch.setattr(waypoint._Checker, "_send", counting)
    return sent


@pytest.fixture
def exported(project, tmp_path) -> Path:
    for seed in (41, 42, 43):
        do_import_trajectory(project, make_record(steps=4, seed=seed))
    out = tmp_path / "export"
    export_trajectories(Trajectory.objects.filter(project=project), out)
    Trajectory.objects.all().delete()
    return out


def _screenshot_of_line(folder: Path, number: int) -> Path:
    line = json.loads((folder / "trajectories.jsonl").read_text().splitlines()[number - 1])
    return folder / line["screens"][-1]["screenshot"]


def test_the_workers_import_what_one_process_imports(project, exported, workers, tmp_path):
    counts = import_trajectories(project, exported)
    assert workers, "the files went to the workers"
    assert (counts["created"], counts["existing"]) == (3, 0)
    again = tmp_path / "again"
    export_trajectories(Trajectory.objects.filter(project=project), again)
    for name in ("trajectories.jsonl", "manifest.json"):
        assert (again / name).read_bytes() == (exported / name).read_bytes()


def test_an_image_a_worker_cannot_decode_is_named_as_in_one_process(project, exported, workers):
    shot = _screenshot_of_line(exported, 3)
    _replace_file(exported, shot, png_of_noise())
    lines = (exported / "trajectories.jsonl").read_text().splitlines()
    first = next(i for i, line in enumerate(lines, start=1) if f"screens/{shot.name}" in line)
    screen = next(
        i
        for i, s in enumerate(json.loads(lines[first - 1])["screens"])
        if s["screenshot"] == f"screens/{shot.name}"
    )
    assert_refused(
        project,
        exported,
        f"trajectories.jsonl line {first}: screens[{screen}].screenshot (screens/{shot.name}): "
        "unreadable image (broken data stream when reading image file)",
    )
    assert workers


def test_a_file_changed_after_the_manifest_is_named_as_in_one_process(project, exported, workers):
    shot = _screenshot_of_line(exported, 2)
    shot.write_bytes(shot.read_bytes() + b"\0")
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, exported)
    assert f"file 'screens/{shot.name}' does not match its sha256 in manifest.json" in str(
        caught.value
    )
    assert Trajectory.objects.count() == 0
