"""Import and export formats, registered by name.

An importer turns a folder into (where, record) pairs; an exporter writes a queryset of
trajectories into a new folder. :func:`import_trajectories` validates every record before it
writes any, then writes each trajectory atomically; importing the same data twice adds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from ..models import Project, Trajectory
from ..records import TrajectoryRecord
from ..services import do_import_trajectory
from ..validation import InvalidData, check_trajectory_record
from . import droidbot, waypoint
from .archive import open_source

# A reader takes the folder and a dict in which it may remember what it already verified.
Reader = Callable[[Path, dict[str, Any]], Iterator[tuple[str, TrajectoryRecord]]]
Counter = Callable[[Path], int]
Exporter = Callable[..., dict[str, Any]]

IMPORTERS: dict[str, tuple[Reader, Counter]] = {
    "waypoint": (waypoint.read_waypoint, waypoint.count_lines),
    "droidbot": (droidbot.read_droidbot, droidbot.count_trajectories),
}
EXPORTERS: dict[str, Exporter] = {
    "waypoint": waypoint.export_waypoint,
}


def _format(name: str, catalogue: dict[str, Any], what: str) -> Any:
    try:
        return catalogue[name]
    except KeyError:
        known = ", ".join(sorted(catalogue))
        raise InvalidData(f"unknown {what} format {name!r} (known: {known})") from None


def import_trajectories(
    project: Project,
    source: Path,
    fmt: str = "waypoint",
    actor=None,
    progress: Callable[[int, int], None] | None = None,
    workdir: Path | None = None,
) -> dict[str, int]:
    """Import a folder, .zip or .tar; return counts of created and already present.

    An archive is unpacked under ``workdir`` (a job's own folder), else the system's temp folder.
    """
    reader, counter = _format(fmt, IMPORTERS, "import")
    with open_source(Path(source), workdir) as folder:
        total = counter(folder)
        # First pass: check everything, so bad input changes nothing.
        checked = 0
        verified: dict[str, Any] = {}
        for where, record in reader(folder, verified):
            check_trajectory_record(record, where)
            checked += 1
            if progress:
                progress(checked, 2 * total)
        counts = {"created": 0, "existing": 0, "steps": 0}
        for where, record in reader(folder, verified):
            _, created = do_import_trajectory(project, record, actor=actor, where=where)
            counts["created" if created else "existing"] += 1
            counts["steps"] += len(record.steps) if created else 0
            if progress:
                progress(total + counts["created"] + counts["existing"], 2 * total)
    return counts


def export_trajectories(
    trajectories: QuerySet[Trajectory],
    dest: Path,
    fmt: str = "waypoint",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    exporter = _format(fmt, EXPORTERS, "export")
    return exporter(trajectories, Path(dest), progress=progress)
