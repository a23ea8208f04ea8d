"""What the tests of the exports into datasets' own layouts share."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from formats.catalogue import export_trajectories
from tests.trajectories.builders import make_record
from trajectories.models import Trajectory
from trajectories.records import FileRef
from trajectories.services import do_import_trajectory


def file_bytes(value) -> bytes | None:
    """The bytes of a screenshot or UI XML as a reader gives it."""
    return value.path.read_bytes() if isinstance(value, FileRef) else value


def export_to(project, tmp_path: Path, fmt: str, name: str = "out", **kwargs) -> Path:
    out = tmp_path / name
    export_trajectories(Trajectory.objects.filter(project=project), out, fmt, **kwargs)
    return out


def recorded_with(project, seed: int, actions: list[dict]) -> Trajectory:
    """A recording of these actions, one a step."""
    record = make_record(steps=len(actions), seed=seed)
    steps = [dataclasses.replace(s, action=a) for s, a in zip(record.steps, actions, strict=True)]
    trajectory, _ = do_import_trajectory(project, dataclasses.replace(record, steps=steps))
    return trajectory
