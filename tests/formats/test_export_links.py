"""WAYPOINT_EXPORT_LINK_BLOBS: a native export's blobs hard-linked to the stored ones where it is
asked for and possible, copied otherwise; the export is the same either way."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from django.core.files.storage import default_storage

from formats.catalogue import export_trajectories
from tests.trajectories.builders import make_record
from trajectories.models import Trajectory, blob_storage_name
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def blobs_of(folder: Path) -> list[Path]:
    return sorted(
        p for p in folder.rglob("*") if p.is_file() and p.parent.name in ("screens", "xml")
    )


def stored(blob: Path) -> Path:
    sha, extension = blob.name.split(".")
    return Path(default_storage.path(blob_storage_name(sha, extension)))


@pytest.fixture
def trajectories(project):
    do_import_trajectory(project, make_record(steps=3, seed=1))
    do_import_trajectory(project, make_record(steps=5, seed=2))
    return Trajectory.objects.filter(project=project)


def test_blobs_are_copied_by_default(trajectories, tmp_path):
    out = tmp_path / "copied"
    export_trajectories(trajectories, out)
    assert blobs_of(out)
    for blob in blobs_of(out):
        assert not os.path.samefile(blob, stored(blob))


def test_blobs_are_linked_when_asked_and_the_export_is_the_same(trajectories, tmp_path, settings):
    export_trajectories(trajectories, tmp_path / "copied")
    settings.WAYPOINT_EXPORT_LINK_BLOBS = True
    export_trajectories(trajectories, tmp_path / "linked")
    assert files_of(tmp_path / "linked") == files_of(tmp_path / "copied")
    for blob in blobs_of(tmp_path / "linked"):
        assert os.path.samefile(blob, stored(blob))


def test_a_link_that_cannot_be_made_is_a_copy(trajectories, tmp_path, settings, monkeypatch):
    export_trajectories(trajectories, tmp_path / "copied")
    settings.WAYPOINT_EXPORT_LINK_BLOBS = True

    def cross_device(source, target):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    export_trajectories(trajectories, tmp_path / "linked")
    assert files_of(tmp_path / "linked") == files_of(tmp_path / "copied")
    for blob in blobs_of(tmp_path / "linked"):
        assert not os.path.samefile(blob, stored(blob))
