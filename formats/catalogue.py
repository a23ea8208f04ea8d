"""Import and export formats, registered by name.

An importer turns a folder into (where, record) pairs; an exporter writes a queryset of
trajectories into a new folder. :func:`import_trajectories` validates every record before it
writes any, then writes the trajectories in chunks, each in one transaction (a chunk the database
refuses is written again a trajectory at a time); importing the same data twice adds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.db import IntegrityError
from django.db.models import QuerySet

from trajectories.access import role_in
from trajectories.models import Project, Trajectory
from trajectories.records import TrajectoryRecord
from trajectories.services import (
    as_copy,
    check_import_authority,
    check_uid_free,
    copy_uid,
    do_import_trajectories,
    do_import_trajectory,
)
from trajectories.validation import InvalidData, check_trajectory_record, fail

from . import (
    aitw,
    aitw_export,
    androidcontrol,
    androidcontrol_import,
    androidcontrol_tfrecord,
    androtmem,
    androtmem_import,
    droidbot,
    gui_odyssey,
    gui_odyssey_export,
    memory_world,
    stamp_sft,
    waypoint,
)
from .archive import open_source
from .dataset import Split, check_no_options, check_plain_options
from .detect import AUTO, detect_folder_format
from .parquet import check_parquet_extra
from .spool import spool_closed

# A reader takes the folder and a dict in which it may remember what it already verified.
Reader = Callable[[Path, dict[str, Any]], Iterator[tuple[str, TrajectoryRecord]]]
Counter = Callable[[Path], int]
Exporter = Callable[..., dict[str, Any]]

IMPORTERS: dict[str, tuple[Reader, Counter]] = {
    "waypoint": (waypoint.read_waypoint, waypoint.count_lines),
    "droidbot": (droidbot.read_droidbot, droidbot.count_trajectories),
    "androtmem": (androtmem_import.read_androtmem, androtmem_import.count_tasks),
    "androidcontrol": (
        androidcontrol_import.read_androidcontrol,
        androidcontrol_import.count_episodes,
    ),
    "gui-odyssey": (gui_odyssey.read_gui_odyssey, gui_odyssey.count_episodes),
    "aitw": (aitw.read_aitw, aitw.count_episodes),
}
EXPORTERS: dict[str, Exporter] = {
    "waypoint": waypoint.export_waypoint,
    "stamp-sft": stamp_sft.export_stamp_sft,
    "androtmem": androtmem.export_androtmem,
    "memory-world": memory_world.export_memory_world,
    "androidcontrol": androidcontrol.export_androidcontrol,
    "gui-odyssey": gui_odyssey_export.export_gui_odyssey,
    "aitw": aitw_export.export_aitw,
    "androidcontrol-tfrecord": androidcontrol_tfrecord.export_androidcontrol_tfrecord,
}
# Exports in a dataset's own layout (importable again as that dataset): a split, no options.
LAYOUT_EXPORTS = frozenset({"gui-odyssey", "aitw", "androidcontrol-tfrecord"})


def check_export_request(
    fmt: str, options: dict[str, Any] | None, split: dict[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Options and split checked before a job is queued (the job checks them again)."""
    _format(fmt, EXPORTERS, "export")
    if fmt == "waypoint":
        if options or split:
            raise InvalidData("the waypoint format takes no options and no split")
        return {}, None
    if fmt == "stamp-sft":
        options = {k: v for k, v in stamp_sft.check_options(options).items() if v is not None}
    elif fmt == "androtmem":
        options = {k: v for k, v in androtmem.check_options(options).items() if v}
    elif fmt in LAYOUT_EXPORTS:
        options = check_no_options(fmt, options)
    else:
        options = {k: v for k, v in check_plain_options(fmt, options).items() if v}
    if options.get("parquet"):
        check_parquet_extra()
    Split.parse(split, "train")
    return options or {}, split or None


def _format(name: str, catalogue: dict[str, Any], what: str) -> Any:
    try:
        return catalogue[name]
    except KeyError:
        known = ", ".join(sorted(catalogue))
        raise InvalidData(f"unknown {what} format {name!r} (known: {known})") from None


class ImportStopped(InvalidData):
    """An import that had written some trajectories when a write was refused."""


def import_trajectories(
    project: Project,
    source: Path,
    fmt: str = "waypoint",
    actor=None,
    progress: Callable[[int, int], None] | None = None,
    *,
    as_copies: bool = False,
    workdir: Path | None = None,
) -> dict[str, int]:
    """Import a folder, .zip or .tar; return counts of created and already present.

    ``fmt`` may be ``"auto"``: the format is then told from the content. With ``as_copies``
    every trajectory gets a new id in this project and records where it came from (for an
    export of another project on this instance, whose ids are taken). An archive is unpacked
    under ``workdir`` (a job's own folder), else the system's temp folder.
    """
    with open_source(Path(source), workdir) as folder, spool_closed({}) as verified:
        if fmt == AUTO:
            fmt = detect_folder_format(folder, Path(source).name)
        reader, counter = _format(fmt, IMPORTERS, "import")
        origin = waypoint.exported_project(folder) if fmt == "waypoint" else ""
        total = counter(folder)
        # First pass: check everything, ids included, so bad input changes nothing.
        seen: dict[str, str] = {}
        role = role_in(project, actor) if actor is not None else None
        uids = _UidCheck(project, progress, 2 * total)
        try:
            for where, record in reader(folder, verified):
                check_trajectory_record(record, where)
                check_import_authority(record, actor, role, where)
                if record.uid in seen:
                    raise fail(
                        where,
                        f"trajectory {record.uid} appears twice: already at {seen[record.uid]}",
                    )
                seen[record.uid] = where.rstrip(":")
                uids.add(copy_uid(project, record.uid) if as_copies else record.uid, where)
        finally:
            uids.flush()  # an id taken on an earlier line is the first error to tell
        counts = {"created": 0, "existing": 0, "steps": 0}
        chunk: list[tuple[str, TrajectoryRecord]] = []
        for where, record in reader(folder, verified):
            if as_copies:
                record = as_copy(record, project, origin)
            chunk.append((where, record))
            # The first trajectory goes alone, so the first write is tried at once.
            if _chunk_full(chunk) or counts["created"] + counts["existing"] == 0:
                _write_chunk(project, chunk, actor, counts, progress, total)
                chunk = []
        _write_chunk(project, chunk, actor, counts, progress, total)
    return counts


CHUNK_STEPS = 5000  # steps written per transaction (and per chunk of trajectories in memory)
CHUNK_TRAJECTORIES = 200


def _chunk_full(chunk: list[tuple[str, TrajectoryRecord]]) -> bool:
    return (
        len(chunk) >= CHUNK_TRAJECTORIES
        or sum(len(record.steps) for _, record in chunk) >= CHUNK_STEPS
    )


class _UidCheck:
    """The first pass's check that no id is taken by another project, a query per batch of
    lines instead of one per line; the error names the first line at fault, as line by line.
    A line counts as checked (``progress``) once its id is."""

    BATCH = 500

    def __init__(self, project: Project, progress: Callable[[int, int], None] | None, of: int):
        self.project = project
        self.pending: list[tuple[str, str]] = []
        self.progress, self.of, self.checked = progress, of, 0

    def add(self, uid: str, where: str) -> None:
        self.pending.append((uid, where))
        if len(self.pending) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        if not pending:
            return
        taken = {
            str(uid)
            for uid in Trajectory.objects.filter(uid__in=[uid for uid, _ in pending])
            .exclude(project=self.project)
            .values_list("uid", flat=True)
        }
        for uid, where in pending:
            if uid in taken:
                check_uid_free(self.project, uid, where)  # raises, in its own words
            self.checked += 1
            if self.progress:
                self.progress(self.checked, self.of)


def _write_chunk(
    project: Project,
    chunk: list[tuple[str, TrajectoryRecord]],
    actor,
    counts: dict[str, int],
    progress: Callable[[int, int], None] | None,
    total: int,
) -> None:
    """Write a chunk in one transaction; if it is refused, one trajectory at a time (each in its
    own transaction, as before chunks), which keeps what can be written and names the fault."""
    if not chunk:
        return
    created: list[bool] | None = None
    if len(chunk) > 1:
        try:
            created = do_import_trajectories(project, chunk, actor=actor)
        except (InvalidData, IntegrityError):
            created = None  # another writer at work: see which one, line by line
    if created is None:
        created = []
        for where, record in chunk:
            try:
                _, new = do_import_trajectory(project, record, actor=actor, where=where)
            except InvalidData as exc:
                if not counts["created"]:
                    raise
                # Only a concurrent write can get here (every check passed above): say so.
                n = counts["created"]
                written = f"{n} trajectory was" if n == 1 else f"{n} trajectories were"
                raise ImportStopped(
                    f"import stopped: {exc}; {written} imported before it "
                    "(importing the same archive again resumes)"
                ) from None
            _count(counts, record, new, progress, total)
        return
    for (_, record), new in zip(chunk, created, strict=True):
        _count(counts, record, new, progress, total)


def _count(
    counts: dict[str, int],
    record: TrajectoryRecord,
    created: bool,
    progress: Callable[[int, int], None] | None,
    total: int,
) -> None:
    counts["created" if created else "existing"] += 1
    counts["steps"] += len(record.steps) if created else 0
    if progress:
        progress(total + counts["created"] + counts["existing"], 2 * total)


def export_trajectories(
    trajectories: QuerySet[Trajectory],
    dest: Path,
    fmt: str = "waypoint",
    progress: Callable[[int, int], None] | None = None,
    *,
    options: dict[str, Any] | None = None,
    filters: dict[str, Any] | None = None,
    split: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Export into the new folder ``dest``; ``filters`` only describe the selection made.

    The dataset formats take ``options`` (per format), ``split`` (see
    :class:`formats.dataset.Split`) and record ``filters`` in their manifest.
    """
    exporter = _format(fmt, EXPORTERS, "export")
    if fmt == "waypoint":
        if options or split:
            raise InvalidData("the waypoint format takes no options and no split")
        return exporter(trajectories, Path(dest), progress=progress, filters=filters)
    return exporter(
        trajectories, Path(dest), progress=progress, options=options, filters=filters, split=split
    )
