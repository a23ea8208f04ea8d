"""Waypoint's native format, version 1: lossless and re-importable.

Layout of an export folder::

    manifest.json        format, schema version, counts, sha256 of every other file
    trajectories.jsonl   one trajectory per line, every field and label
    screens/<sha256>.png screenshots (content-addressed, each stored once)
    xml/<sha256>.xml     UI XML dumps

Export → import → export gives byte-identical files: nothing depends on database ids, the
export time or the machine. Exports stream (memory does not grow with the dataset) and
appear atomically: the folder is written under a temporary name and renamed when complete.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from datetime import datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Any, NamedTuple

import orjson
from django.conf import settings
from django.core.files.storage import default_storage
from django.db import connection
from django.db.models import QuerySet

from trajectories.blobs import sha256_hex
from trajectories.bounds import load_json, read_db_json
from trajectories.images import ImageInfo, check_image
from trajectories.models import (
    Anchor,
    AnchorLink,
    Blob,
    MemoryTarget,
    Screen,
    Step,
    Subgoal,
    Trajectory,
    blob_storage_name,
)
from trajectories.records import FileRef, ScreenRecord, StepRecord, TaskRecord, TrajectoryRecord
from trajectories.uixml import UIXmlError, clean_ui_xml, parse_ui_xml
from trajectories.validation import InvalidData, check_kind, check_no_nul, fail

from .archive import read_file
from .dataset import record_apps
from .imported import Fields

FORMAT = "waypoint"
SCHEMA = "waypoint/1"
SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
CARD = "README.md"
DATA_FILE = "trajectories.jsonl"

Progress = Callable[[int, int], None]


# ---------------------------------------------------------------- export


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


CHUNK = 100  # trajectories fetched per round of queries


def _group(rows: list[dict[str, Any]], key: str = "trajectory_id") -> dict[int, list[dict]]:
    grouped: dict[int, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row.pop(key), []).append(row)
    return grouped


def _blob_file(sha256: str, content_type: str) -> str:
    extension = Blob.EXTENSIONS.get(content_type, "bin")
    folder = "xml" if content_type == "text/xml" else "screens"
    return f"{folder}/{sha256}.{extension}"


def _fetch_chunk(rows: list[dict[str, Any]], lean: bool = False) -> list[dict[str, Any]]:
    """Every label of a chunk of trajectories in one query per kind, as plain rows.

    Plain rows, not model instances: building thousands of model objects per chunk would
    cost more than the export's writing itself. Screens and steps, the bulk of the rows, are
    read as tuples by SQL of their own and their JSON and times decoded here (orjson), which
    costs a fraction of what the querysets' converters do.
    """
    ids = [row["id"] for row in rows]
    screens = _screen_rows(ids, lean)
    steps = _step_rows(ids, lean, screens)
    subgoals = _group(
        list(
            Subgoal.objects.filter(trajectory_id__in=ids)
            .order_by("start", "id")
            .values(
                "trajectory_id", "start", "end", "text", "effect", "behaviour", "success", "origin"
            )
        )
    )
    memory_targets = _group(
        list(
            MemoryTarget.objects.filter(trajectory_id__in=ids)
            .order_by("encode_step", "key", "id")
            .values("trajectory_id", "key", "value", "encode_step", "retrieve_steps", "evidence")
        )
    )
    anchors = _group(
        list(
            Anchor.objects.filter(trajectory_id__in=ids)
            .order_by("step_index", "id")
            .values(
                "trajectory_id",
                "id",
                "key",
                "step_index",
                "type",
                "content",
                "description",
                "evidence",
            )
        )
    )
    links = _group(
        list(
            AnchorLink.objects.filter(source__trajectory_id__in=ids)
            .order_by(
                "source__step_index", "source_id", "target__step_index", "target_id", "relation"
            )
            .values("source__trajectory_id", "source__key", "target__key", "relation", "critical")
        ),
        key="source__trajectory_id",
    )
    return [
        _record(
            row,
            screens.get(row["id"], ([], {})),
            steps.get(row["id"], []),
            subgoals.get(row["id"], []),
            memory_targets.get(row["id"], []),
            anchors.get(row["id"], []),
            links.get(row["id"], []),
        )
        for row in rows
    ]


def _select(sql: str, ids: list[int]) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql.replace("%s", ", ".join(["%s"] * len(ids))), ids)
        return cursor.fetchall()


def _db_json(value: Any) -> Any:
    """A JSON column as the database gives it (text, or already decoded) as Python values."""
    return read_db_json(value) if isinstance(value, str | bytes) else value


def _time_sql(column: str) -> str:
    """The SQL that reads the time ``column`` as text :func:`_db_time` turns into ISO 8601:
    on PostgreSQL formatted by the server (UTC, always six digits of microseconds), which
    costs a fraction of loading a datetime and formatting it again; SQLite stores the text."""
    if connection.vendor == "postgresql":
        return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US')"
    return column


def _db_time(value: Any) -> str | None:
    """A time column read through :func:`_time_sql` (UTC) in ISO 8601, as
    ``datetime.isoformat()`` writes it: microseconds only when there are some, ``+00:00``.

    The text of both databases (``2026-12-03 16:30:04.120000`` from SQLite, with a ``T`` from
    PostgreSQL, or no fraction at all) takes string operations; anything else goes through
    :class:`datetime`."""
    if value is None:
        return None
    if type(value) is str and (len(value) == 26 or len(value) == 19):
        if value.endswith(".000000"):
            value = value[:-7]
        return f"{value[:10]}T{value[11:]}+00:00"
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:  # UTC: what replace(tzinfo=UTC).isoformat() writes, without a copy
        return value.isoformat() + "+00:00"
    return value.isoformat()


def _screen_rows(ids: list[int], lean: bool) -> dict[int, tuple[list[dict], dict[int, int]]]:
    """Each trajectory's screens as records, and where each screen id is among them.

    Only the JSON columns (:data:`SCREEN_JSON`) can hold a float: :func:`_has_odd_float`
    walks no other field of a screen."""
    q = connection.ops.quote_name
    screen, blob = q(Screen._meta.db_table), q(Blob._meta.db_table)
    extra = "" if lean else f", {_time_sql('s.captured_at')}, s.features, s.visible_memory"
    sql = (
        f"SELECT s.trajectory_id, s.id, s.screenshot_id, shot.content_type, s.ui_xml_id,"
        f" xml.content_type, s.width, s.height, s.package, s.activity{extra}"
        f" FROM {screen} s JOIN {blob} shot ON shot.sha256 = s.screenshot_id"
        f" LEFT JOIN {blob} xml ON xml.sha256 = s.ui_xml_id"
        f" WHERE s.trajectory_id IN (%s) ORDER BY s.id"
    )
    grouped: dict[int, tuple[list[dict], dict[int, int]]] = {}
    for row in _select(sql, ids):
        found = grouped.get(row[0])
        if found is None:
            found = grouped[row[0]] = ([], {})
        records, position = found
        position[row[1]] = len(records)
        records.append(
            {
                "screenshot": _blob_file(row[2], row[3]),
                "ui_xml": _blob_file(row[4], row[5]) if row[4] else None,
                "width": row[6],
                "height": row[7],
                "package": row[8],
                "activity": row[9],
                "captured_at": None if lean else _db_time(row[10]),
                "features": {} if lean else _db_json(row[11]),
                "visible_memory": [] if lean else _db_json(row[12]),
            }
        )
    return grouped


def _step_rows(
    ids: list[int], lean: bool, screens: dict[int, tuple[list[dict], dict[int, int]]]
) -> dict[int, list[dict]]:
    """Each trajectory's steps as records, in order.

    Only the JSON columns (:data:`STEP_JSON`) can hold a float: :func:`_has_odd_float` walks
    no other field of a step."""
    q = connection.ops.quote_name
    extra = "" if lean else f", {_time_sql('action_sent_at')}, {_time_sql('settled_at')}"
    sql = (
        f"SELECT trajectory_id, {q('index')}, screen_id, action_type, action, target, thought,"
        f" summary, memory, trainable{extra} FROM {q(Step._meta.db_table)}"
        f" WHERE trajectory_id IN (%s) ORDER BY trajectory_id, {q('index')}"
    )
    grouped: dict[int, list[dict]] = {}
    for row in _select(sql, ids):
        steps = grouped.get(row[0])
        if steps is None:
            steps = grouped[row[0]] = []
        steps.append(
            {
                "index": row[1],
                "screen": screens[row[0]][1][row[2]],
                "action": {"type": row[3], **_db_json(row[4])},
                "target": _db_json(row[5]),
                "thought": row[6],
                "summary": row[7],
                "memory": row[8],
                "trainable": bool(row[9]),
                "action_sent_at": None if lean else _db_time(row[10]),
                "settled_at": None if lean else _db_time(row[11]),
            }
        )
    return grouped


TRAJECTORY_FIELDS = (
    "id",
    "uid",
    "device_serial",
    "device_model",
    "android_version",
    "screen_width",
    "screen_height",
    "density",
    "recorder_name",
    "source",
    "status",
    "outcome",
    "recorded_at",
    "metadata",
    "final_screen_id",
    "task__uid",
    "task__goal",
    "task__apps",
    "task__intent",
    "task__difficulty",
    "task__gold_answer",
    "task__grading_rule",
    "task__memory_items",
)


def _record(t, screens_of, steps, subgoals, memory_targets, anchors, links) -> dict[str, Any]:
    screens, position = screens_of
    return {
        "schema": SCHEMA,
        "id": str(t["uid"]),
        "task": {
            "id": t["task__uid"],
            "goal": t["task__goal"],
            "apps": t["task__apps"],
            "intent": t["task__intent"],
            "difficulty": t["task__difficulty"],
            "gold_answer": t["task__gold_answer"],
            "grading_rule": t["task__grading_rule"],
            "memory_items": t["task__memory_items"],
        },
        "device": {
            "serial": t["device_serial"],
            "model": t["device_model"],
            "android_version": t["android_version"],
            "width": t["screen_width"],
            "height": t["screen_height"],
            "density": t["density"],
        },
        "source": t["source"],
        "status": t["status"],
        "outcome": t["outcome"],
        "recorded_by": t["recorder_name"] or None,
        "recorded_at": _iso(t["recorded_at"]),
        "metadata": t["metadata"],
        "screens": screens,
        "steps": steps,
        "final_screen": position.get(t["final_screen_id"]),
        "subgoals": subgoals,
        "memory_targets": memory_targets,
        "anchors": [
            {
                "id": a["key"],
                "step": a["step_index"],
                "type": a["type"],
                "content": a["content"],
                "description": a["description"],
                "evidence": a["evidence"],
            }
            for a in anchors
        ],
        "anchor_links": [
            {
                "source": link["source__key"],
                "target": link["target__key"],
                "relation": link["relation"],
                "critical": link["critical"],
            }
            for link in links
        ],
    }


def iter_records(
    trajectories: QuerySet[Trajectory], *, lean: bool = False
) -> Iterator[dict[str, Any]]:
    """The native records of the trajectories, ordered by uid, a chunk at a time.

    Keyset paging on the uid keeps memory flat however many trajectories there are. ``lean``
    leaves out capture times, perceptual features and visible memory (empty in the records).
    """
    base = trajectories.order_by("uid").values(*TRAJECTORY_FIELDS)
    last = None
    while True:
        page = base.filter(uid__gt=last) if last is not None else base
        rows = list(page[:CHUNK])
        if not rows:
            return
        yield from _fetch_chunk(rows, lean)
        last = rows[-1]["uid"]


class _BlobCopier:
    """Puts blobs into an export folder, each once, and lists each in the side file of sums in
    the order the records first name it (so the manifest does not depend on timing).

    From local storage the kernel copies the file (``sendfile``), not Python. Not a hard link
    unless ``WAYPOINT_EXPORT_LINK_BLOBS`` asks for one: the folder is the user's, and a file
    edited there in place would change the stored blob (a link that cannot be made, e.g.
    across file systems, falls back to the copy).
    From storage without local paths (S3) the file is streamed. Copies run in a few threads, so
    the time a file system takes to create files overlaps; at most ``IN_FLIGHT`` wait. The
    names put lately are remembered (a bounded number), so a screen shown again and again
    costs no system call.
    """

    RECENT = 20_000
    THREADS = 4
    IN_FLIGHT = 256

    def __init__(self, root: str, sums: Any, counts: dict[str, int]):
        self.root, self.sums, self.counts = root, sums, counts
        self.recent: set[str] = set()
        self.flight: deque[tuple[str, str, Future]] = deque()
        self.pool = ThreadPoolExecutor(self.THREADS, thread_name_prefix="export-blobs")
        try:
            self.local: str | None = default_storage.path("")
        except NotImplementedError:
            self.local = None
        self.link = settings.WAYPOINT_EXPORT_LINK_BLOBS

    def __enter__(self) -> _BlobCopier:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        try:
            if kind is None:
                while self.flight:
                    self._settle()
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def put(self, name: str) -> None:
        """Put the file ``name`` of the export (``screens/<sha>.png``) unless it is there."""
        if name in self.recent:
            return
        if len(self.recent) >= self.RECENT:
            while self.flight:  # a name forgotten may come again: none may be in flight then
                self._settle()
            self.recent.clear()
        self.recent.add(name)
        sha, extension = name.rsplit("/", 1)[1].split(".")
        job = self.pool.submit(self._put, blob_storage_name(sha, extension), f"{self.root}/{name}")
        self.flight.append((sha, name, job))
        while len(self.flight) > self.IN_FLIGHT:
            self._settle()

    def _settle(self) -> None:
        sha, name, job = self.flight.popleft()
        if job.result():
            self.sums.write(f"{sha} {name}\n")
            self.counts["files"] += 1

    def _put(self, stored: str, target: str) -> bool:
        try:
            if self.local is None:
                with open(target, "xb") as out, default_storage.open(stored, "rb") as src:
                    shutil.copyfileobj(src, out)
            elif self.link:
                self._link(os.path.join(self.local, stored), target)
            else:
                self._copy(os.path.join(self.local, stored), target)
        except FileExistsError:
            return False
        return True

    @classmethod
    def _link(cls, source: str, target: str) -> None:
        try:
            os.link(source, target)
        except FileExistsError:
            raise
        except OSError:  # another file system, links not allowed or too many: a copy
            cls._copy(source, target)

    @staticmethod
    def _copy(source: str, target: str) -> None:
        with open(source, "rb") as src, open(target, "xb") as out:
            if not hasattr(os, "sendfile"):
                shutil.copyfileobj(src, out)
                return
            size, done = os.fstat(src.fileno()).st_size, 0
            try:
                while done < size:
                    sent = os.sendfile(out.fileno(), src.fileno(), done, size - done)
                    if not sent:
                        break
                    done += sent
            except OSError:  # a file system sendfile() cannot copy between
                src.seek(done)
                shutil.copyfileobj(src, out)


def _dump(record: dict[str, Any]) -> bytes:
    """One line of ``trajectories.jsonl``: compact JSON in UTF-8, keys in the record's order.

    orjson, except for what it would write otherwise than ``json`` (an integer beyond 64
    bits, which it refuses; ``NaN`` or an infinity, which it would write as ``null``)."""
    try:
        line = orjson.dumps(record)
    except TypeError:
        line = None
    if line is None or _has_odd_float(record):
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
    return line


# The only values of a record's screens and steps that can hold a float: their JSON columns.
# The rest are the rows' text, integers and booleans (see _screen_rows and _step_rows).
SCREEN_JSON = ("features", "visible_memory")
STEP_JSON = ("action", "target")


def _has_odd_float(record: dict[str, Any]) -> bool:
    """Whether ``NaN`` or an infinity is anywhere in the record. Of the screens and steps (most
    of a record) only the JSON values are walked."""
    values = [value for key, value in record.items() if key != "screens" and key != "steps"]
    for screen in record["screens"]:
        values += [screen[key] for key in SCREEN_JSON]
    for step in record["steps"]:
        values += [step[key] for key in STEP_JSON]
    return _odd_float_in(values)


def _odd_float_in(value: list[Any] | dict[str, Any]) -> bool:
    pending = [value]
    while pending:
        item = pending.pop()
        for child in item.values() if type(item) is dict else item:
            kind = type(child)
            if kind is float:
                if not math.isfinite(child):
                    return True
            elif kind is dict or kind is list:
                pending.append(child)
    return False


def export_waypoint(
    trajectories: QuerySet[Trajectory],
    dest: Path,
    progress: Progress | None = None,
    *,
    filters: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the trajectories to the folder ``dest`` (which must not exist); return counts.

    ``filters`` describe how the trajectories were chosen, for the manifest and the card.
    """
    dest = Path(dest)
    if dest.exists():
        raise InvalidData(f"{dest}: already exists; choose a new folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    total = trajectories.count()
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
    try:
        (work / "screens").mkdir()
        (work / "xml").mkdir()
        counts = {"trajectories": 0, "steps": 0, "screens": 0, "files": 0}
        apps: Counter = Counter()
        # File checksums go to a side file as they are produced, so memory stays flat.
        sums_path = work / ".sums"
        data_hash = hashlib.sha256()
        with (
            open(work / DATA_FILE, "wb") as data,
            open(sums_path, "w", encoding="utf-8") as sums,
        ):
            with _BlobCopier(str(work), sums, counts) as blobs:
                for record in iter_records(trajectories):
                    line = _dump(record) + b"\n"
                    data.write(line)
                    data_hash.update(line)
                    for screen in record["screens"]:
                        blobs.put(screen["screenshot"])
                        if screen["ui_xml"] is not None:
                            blobs.put(screen["ui_xml"])
                    counts["trajectories"] += 1
                    counts["steps"] += len(record["steps"])
                    counts["screens"] += len(record["screens"])
                    for app in record_apps(record):
                        apps[app] += 1
                    if progress and (counts["trajectories"] % 20 == 0):
                        progress(counts["trajectories"], total)
            counts["files"] += 2  # the data file and the card
            project = _project_of(trajectories)
            card = _card(counts, apps, project, filters or {}).encode("utf-8")
            (work / CARD).write_bytes(card)
            sums.write(f"{hashlib.sha256(card).hexdigest()} {CARD}\n")
        _write_manifest(work, counts, data_hash.hexdigest(), sums_path, project, filters or {})
        sums_path.unlink()
        os.replace(work, dest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if progress:
        progress(counts["trajectories"], total)
    return counts


def _project_of(trajectories: QuerySet[Trajectory]) -> str:
    """The name of the project the trajectories come from ("" for none or several)."""
    names = list(trajectories.order_by().values_list("project__name", flat=True).distinct()[:2])
    return names[0] if len(names) == 1 else ""


def exported_project(folder: Path) -> str:
    """The name of the project an export came from, as its manifest says ("" if it does not)."""
    project = read_manifest(folder).get("project")
    if not isinstance(project, str):
        return ""
    check_no_nul(project, f"{MANIFEST}.project")  # copies record it in their metadata
    return project


def _card(counts: dict[str, int], apps: Counter, project: str, filters: dict[str, Any]) -> str:
    from .dataset import describe_filter, markdown_table

    table = markdown_table(["app", "trajectories"], sorted(apps.items()))
    return f"""# Waypoint export: waypoint (native, lossless)

{f"Project: {project}. " if project else ""}Trajectories: {counts["trajectories"]}, steps: \
{counts["steps"]}, screens: {counts["screens"]}.

- Selection: {describe_filter(filters)}.
- `{DATA_FILE}`: one trajectory per line (task, device, screens, steps, subgoals, memory
  targets, anchors and links); `screens/` and `xml/`: screenshots and UI dumps, each stored
  once under its sha256.

## Counts

{table}

## Loading

Import it into Waypoint (`python manage.py import_trajectories --project ID <this folder>`, or
the import page), or read it directly:

```python
from datasets import load_dataset
ds = load_dataset("json", data_files="{DATA_FILE}")
```

`manifest.json` lists the sha256 of every file.
"""


def _write_manifest(
    work: Path,
    counts: dict[str, int],
    data_sha: str,
    sums_path: Path,
    project: str,
    filters: dict[str, Any],
) -> None:
    """Stream the manifest: the file list is copied line by line from the side file."""
    from .dataset import waypoint_version

    with open(work / MANIFEST, "w", encoding="utf-8") as out:
        head: dict[str, Any] = {
            "format": FORMAT,
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "waypoint_version": waypoint_version(),
            "filter": filters,
            "split": None,
        }
        if project:
            head["project"] = project  # where an import as copies records they came from
        out.write(json.dumps(head, indent=1)[:-2] + ",\n")
        out.write(f' "counts": {json.dumps(counts, sort_keys=True)},\n')
        out.write(' "files": {\n')
        out.write(f'  "{DATA_FILE}": "{data_sha}"')
        with open(sums_path, encoding="utf-8") as sums:
            for entry in sums:
                sha, name = entry.rstrip("\n").split(" ", 1)
                out.write(f',\n  {json.dumps(name)}: "{sha}"')
        out.write("\n }\n}\n")


# ---------------------------------------------------------------- import


class _Fields(Fields):
    """Typed access to a JSON object, with errors naming the line and field: the datasets'
    reader's, with the native format's messages for a value of another kind, and times."""

    def get(self, key: str, kind: type, default: Any = ...) -> Any:
        value = self.obj.get(key)
        if value is None:
            if default is ...:
                raise InvalidData(f"{self.at(key)}: is required")
            return default
        if type(value) is kind:  # the usual case, without naming the place (True is a bool)
            return value
        return check_kind(value, kind, self.at(key))

    def time(self, key: str) -> datetime | None:
        value = self.get(key, str, None)
        if value is None:
            return None
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidData(f"{self.at(key)}: not an ISO 8601 time: {value!r}") from None
        if parsed.tzinfo is None:
            raise InvalidData(f"{self.at(key)}: time {value!r} has no time zone")
        return parsed


def read_manifest(folder: Path) -> dict[str, Any]:
    raw = read_file(folder, MANIFEST, MANIFEST)
    try:
        manifest = load_json(raw, MANIFEST)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidData(f"{MANIFEST}: invalid JSON ({exc})") from None
    fields = _Fields(manifest, MANIFEST)
    if fields.get("format", str) != FORMAT:
        raise InvalidData(f"{MANIFEST}.format: expected {FORMAT!r}, got {manifest['format']!r}")
    version = fields.get("schema_version", int)
    if version != SCHEMA_VERSION:
        raise InvalidData(
            f"{MANIFEST}.schema_version: unknown schema version {version} "
            f"(this Waypoint reads version {SCHEMA_VERSION})"
        )
    fields.get("files", dict)
    return manifest


def _read_screen(
    folder: Path, obj: Any, where: str, files: dict[str, str], checked: dict[Any, Any]
) -> ScreenRecord:
    f = _Fields(obj, where)
    shot_name = f.get("screenshot", str)
    shot, info = _checked_image(folder, shot_name, f.at("screenshot"), files, checked)
    xml_name = f.get("ui_xml", str, None)
    xml = None
    if xml_name is not None:
        xml = _checked_xml(folder, xml_name, f.at("ui_xml"), files, checked)
    width, height = f.get("width", int, info.width), f.get("height", int, info.height)
    if (width, height) != (info.width, info.height):
        raise InvalidData(
            f"{where}: declared size {width}x{height} but {shot_name} is {info.width}x{info.height}"
        )
    return ScreenRecord(
        screenshot=shot,
        screenshot_type=info.content_type,
        ui_xml=xml,
        width=width,
        height=height,
        package=f.get("package", str, ""),
        activity=f.get("activity", str, ""),
        captured_at=f.time("captured_at"),
        features=f.get("features", dict, {}),
        visible_memory=f.get("visible_memory", list, []),
    )


def _checked_image(
    folder: Path, name: str, where: str, files: dict[str, str], checked: dict[Any, Any]
) -> tuple[FileRef, ImageInfo]:
    """A screenshot verified once (path, sha256, whole decode), then stood for by its FileRef."""
    known = _settled(checked, ("image", name), folder, files)
    if known is None:
        data = _read_listed(folder, name, where, files)
        info = check_image(data, f"{where} ({name})")
        known = checked["image", name] = (FileRef(folder / name, files[name], len(data)), info)
    return known


def _checked_xml(
    folder: Path, name: str, where: str, files: dict[str, str], checked: dict[Any, Any]
) -> FileRef | bytes:
    """A UI dump verified once (path, sha256, parse). Stored clean: a control character an
    older Waypoint kept becomes "." (uiautomator's choice), so the screen imports and strict
    XML tools can read it again; such a dump is read and cleaned again where it is used."""
    key = ("xml", name)
    known = _settled(checked, key, folder, files)
    if known is None:
        raw = _read_listed(folder, name, where, files)
        xml = clean_ui_xml(raw)
        try:
            parse_ui_xml(xml)
        except UIXmlError as exc:
            raise InvalidData(f"{where} ({name}): {exc}") from None
        if xml != raw:
            checked[key] = _DIRTY
            return xml
        known = checked[key] = FileRef(folder / name, files[name], len(raw))
    if known is _DIRTY:
        return clean_ui_xml(read_file(folder, name, where))
    return known


_DIRTY = "dirty"  # a dump that cleaning changes: its bytes are not the listed file's


def _read_listed(folder: Path, name: str, where: str, files: dict[str, str]) -> bytes:
    """A file's bytes, its path and checksum verified."""
    expected = files.get(name)
    if expected is None:
        raise InvalidData(f"{where}: file {name!r} is not listed in {MANIFEST}")
    data = read_file(folder, name, where)
    if sha256_hex(data) != expected:
        raise InvalidData(f"{where}: file {name!r} does not match its sha256 in {MANIFEST}")
    return data


def record_from_dict(
    obj: Any, where: str, folder: Path, files: dict[str, str], checked: dict[Any, Any]
) -> TrajectoryRecord:
    """Parse one native line into a record; structural errors name the line and field."""
    f = _Fields(obj, where)
    schema = f.get("schema", str)
    if schema != SCHEMA:
        raise InvalidData(
            f"{f.at('schema')}: unknown schema {schema!r} (this Waypoint reads {SCHEMA})"
        )
    t = _Fields(f.get("task", dict), f.at("task"))
    task = TaskRecord(
        uid=t.get("id", str),
        goal=t.get("goal", str),
        apps=t.get("apps", list, []),
        intent=t.get("intent", str, ""),
        difficulty=t.get("difficulty", str, ""),
        gold_answer=t.get("gold_answer", str, ""),
        grading_rule=t.get("grading_rule", str, "exact"),
        memory_items=t.get("memory_items", list, []),
    )
    at_screens, at_steps = f.at("screens"), f.at("steps")
    screens = [
        _read_screen(folder, s, f"{at_screens}[{i}]", files, checked)
        for i, s in enumerate(f.get("screens", list))
    ]
    steps = []
    for i, raw in enumerate(f.get("steps", list)):
        s = _Fields(raw, f"{at_steps}[{i}]")
        steps.append(
            StepRecord(
                index=s.get("index", int),
                screen=s.get("screen", int),
                action=s.get("action", dict),
                target=s.get("target", dict, None),
                thought=s.get("thought", str, ""),
                summary=s.get("summary", str, ""),
                memory=s.get("memory", str, ""),
                trainable=s.get("trainable", bool, True),
                action_sent_at=s.time("action_sent_at"),
                settled_at=s.time("settled_at"),
            )
        )
    uid = f.get("id", str)
    try:
        uid = str(uuid.UUID(uid))
    except ValueError:
        raise InvalidData(f"{f.at('id')}: not a UUID: {uid!r}") from None
    return TrajectoryRecord(
        uid=uid,
        task=task,
        screens=screens,
        steps=steps,
        final_screen=f.get("final_screen", int, None),
        device=f.get("device", dict, {}),
        source=f.get("source", str, "imported"),
        status=f.get("status", str, "annotating"),
        outcome=f.get("outcome", str, "uncertain"),
        recorded_by=f.get("recorded_by", str, None),
        recorded_at=f.time("recorded_at"),
        metadata=f.get("metadata", dict, {}),
        subgoals=[
            _Fields(g, f"{f.at('subgoals')}[{i}]").obj
            for i, g in enumerate(f.get("subgoals", list, []))
        ],
        memory_targets=[
            _Fields(m, f"{f.at('memory_targets')}[{i}]").obj
            for i, m in enumerate(f.get("memory_targets", list, []))
        ],
        anchors=[
            _Fields(a, f"{f.at('anchors')}[{i}]").obj
            for i, a in enumerate(f.get("anchors", list, []))
        ],
        anchor_links=[
            _Fields(x, f"{f.at('anchor_links')}[{i}]").obj
            for i, x in enumerate(f.get("anchor_links", list, []))
        ],
    )


def _data_file(folder: Path) -> Path:
    path = folder / DATA_FILE
    if not path.is_file():
        raise InvalidData(f"{DATA_FILE}: file is missing")
    return path


def count_lines(folder: Path) -> int:
    """The number of trajectories in a native export (its manifest is checked first)."""
    read_manifest(folder)
    with open(_data_file(folder), "rb") as handle:
        return sum(1 for line in handle if line.strip())


def read_waypoint(
    folder: Path, checked: dict[Any, Any] | None = None
) -> Iterator[tuple[str, TrajectoryRecord]]:
    """Yield (where, record) for every line of a native export folder.

    ``checked`` remembers the files already verified (path, checksum, content), so a file
    shared by many screens, or read again by a second pass, is verified once. Files not yet
    verified are checked by worker processes a few lines ahead of the line that needs them
    (see :class:`_Checker`); what they cannot pass is checked again here, in order, so an
    error names the same line and says the same as it would without them.
    """
    checked = {} if checked is None else checked
    manifest = read_manifest(folder)
    files = manifest["files"]
    path = _data_file(folder)
    expected = files.get(DATA_FILE)
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    if expected != digest.hexdigest():
        raise InvalidData(f"{DATA_FILE}: does not match its sha256 in {MANIFEST}")
    with open(path, "rb") as handle, _Checker(folder, files, checked) as checker:
        ahead: deque[tuple[str, Any]] = deque()
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            where = f"{DATA_FILE} line {number}:"
            ahead.append((where, checker.parse(raw, where)))
            if len(ahead) > checker.window:
                yield _line_record(*ahead.popleft(), folder, files, checked)
        while ahead:
            yield _line_record(*ahead.popleft(), folder, files, checked)


def _parse_line(raw: bytes, where: str) -> Any:
    try:
        return load_json(raw.rstrip(), where)
    except json.JSONDecodeError as exc:
        raise fail(where, f"invalid JSON at column {exc.colno}: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise fail(where, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _line_record(
    where: str, parsed: Any, folder: Path, files: dict[str, str], checked: dict[Any, Any]
) -> tuple[str, TrajectoryRecord]:
    if isinstance(parsed, InvalidData):
        raise parsed  # the line's own error, raised when its turn comes
    return where, record_from_dict(parsed, where, folder, files, checked)


class _Checker:
    """Checks the files a line names in worker processes, while earlier lines are read.

    Each file not yet verified is sent once, with the other new files of the first line naming
    it, as soon as that line is parsed; the check (path, size, sha256, full image decode or XML
    parse) leaves a :class:`_Sent` in ``checked``, which :func:`_checked_image` and
    :func:`_checked_xml` wait for. A worker that finds a
    fault reports only that it did: the file is then checked again in this process when its
    line's turn comes, which raises the error in the usual words. Without workers (one CPU,
    ``WAYPOINT_IMPORT_WORKERS=1``, few files, a process that may not start any) nothing is
    sent and every file is checked in its turn.
    """

    MIN_FILES = 64  # fewer files than this are checked in turn: starting workers costs more
    WINDOW = 32  # lines parsed ahead of the one being turned into a record
    BATCH = 16  # files sent to a worker at once (at most: a line's new files)

    def __init__(self, folder: Path, files: dict[str, str], checked: dict[Any, Any]):
        self.folder, self.files, self.checked = folder, files, checked
        self.pool: ProcessPoolExecutor | None = None
        workers = settings.WAYPOINT_IMPORT_WORKERS or os.cpu_count() or 1
        if workers > 1 and len(files) >= self.MIN_FILES:
            try:
                self.pool = ProcessPoolExecutor(workers, mp_context=get_context("fork"))
            except (OSError, ValueError, AssertionError):
                self.pool = None
        self.window = self.WINDOW if self.pool is not None else 0
        self.started = self.pool

    def __enter__(self) -> _Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.started is not None:
            self.started.shutdown(wait=True, cancel_futures=True)

    def parse(self, raw: bytes, where: str) -> Any:
        """The line's JSON (or its error, to raise in turn), its new files sent to be checked."""
        try:
            obj = _parse_line(raw, where)
        except InvalidData as exc:
            return exc
        if self.pool is not None and isinstance(obj, dict):
            screens = obj.get("screens")
            new: dict[tuple[str, str], str] = {}
            for screen in screens if isinstance(screens, list) else ():
                if isinstance(screen, dict):
                    self._add(new, "image", screen.get("screenshot"))
                    self._add(new, "xml", screen.get("ui_xml"))
            items = list(new.items())
            for start in range(0, len(items), self.BATCH):
                self._send(items[start : start + self.BATCH])
        return obj

    def _add(self, new: dict[tuple[str, str], str], kind: str, name: Any) -> None:
        """Note the file ``name`` and its sha256 in ``new`` unless it is checked or sent."""
        if not isinstance(name, str) or (kind, name) in self.checked or name not in self.files:
            return
        expected = self.files[name]
        if isinstance(expected, str):
            new[kind, name] = expected

    def _send(self, items: list[tuple[tuple[str, str], str]]) -> None:
        """Send files to be checked by one worker (one call for a few files: a call to the
        pool costs the importing process more than a file's check)."""
        if self.pool is None:
            return
        try:
            job = self.pool.submit(_check_files, str(self.folder), items)
        except Exception:  # the workers could not start or died: check in turn from here
            self.pool = None
            return
        for position, (key, _) in enumerate(items):
            self.checked[key] = _Sent(job, position)


class _Sent(NamedTuple):
    """A file sent to a worker: its facts will be ``job``'s result at ``position``."""

    job: Future
    position: int


def _check_files(folder: str, items: list[tuple[tuple[str, str], str]]) -> list[tuple | None]:
    """In a worker: for each ((kind, name), sha256), what :func:`_check_file` finds."""
    return [_check_file(folder, name, expected, kind) for (kind, name), expected in items]


def _check_file(folder: str, name: str, expected: str, kind: str) -> tuple | None:
    """In a worker: the facts of a file that passes every check, or None (no reason given:
    the importing process checks such a file again to name the fault)."""
    try:
        data = read_file(Path(folder), name, name)
        if sha256_hex(data) != expected:
            return None
        if kind == "image":
            info = check_image(data, name)
            return (len(data), info.content_type, info.width, info.height)
        xml = clean_ui_xml(data)
        parse_ui_xml(xml)
        return (len(data), xml != data)
    except Exception:
        return None


def _settled(
    checked: dict[Any, Any], key: tuple[str, str], folder: Path, files: dict[str, str]
) -> Any:
    """``checked[key]``, once a worker's check of it is over (None if it found a fault)."""
    known = checked.get(key)
    if not isinstance(known, _Sent):
        return known
    try:
        facts = known.job.result()[known.position]
    except Exception:  # a worker that died, or a check cancelled
        facts = None
    if facts is None:
        del checked[key]
        return None
    kind, name = key
    if kind == "image":
        size, content_type, width, height = facts
        known = (FileRef(folder / name, files[name], size), ImageInfo(content_type, width, height))
    else:
        size, dirty = facts
        known = _DIRTY if dirty else FileRef(folder / name, files[name], size)
    checked[key] = known
    return known
