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
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.files.storage import default_storage
from django.db.models import Prefetch, QuerySet

from ..blobs import check_image, sha256_hex
from ..models import AnchorLink, Blob, Screen, Step, Trajectory
from ..records import ScreenRecord, StepRecord, TaskRecord, TrajectoryRecord
from ..uixml import UIXmlError, parse_ui_xml
from ..validation import InvalidData, fail, field_at
from .archive import read_file

FORMAT = "waypoint"
SCHEMA = "waypoint/1"
SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
DATA_FILE = "trajectories.jsonl"

Progress = Callable[[int, int], None]


# ---------------------------------------------------------------- export


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def export_queryset(trajectories: QuerySet[Trajectory]) -> QuerySet[Trajectory]:
    """The trajectories with everything an export reads, in a fixed order."""
    return (
        trajectories.select_related("task", "recorded_by")
        .prefetch_related(
            Prefetch(
                "screens",
                queryset=Screen.objects.select_related("screenshot", "ui_xml").order_by("id"),
            ),
            Prefetch("steps", queryset=Step.objects.order_by("index")),
            "subgoals",
            "memory_targets",
            "anchors",
            Prefetch(
                "anchors__links_out",
                queryset=AnchorLink.objects.select_related("target").order_by(
                    "target__step_index", "target_id", "relation"
                ),
            ),
        )
        .order_by("uid")
    )


def blob_file(blob: Blob) -> str:
    folder = "xml" if blob.content_type == "text/xml" else "screens"
    return f"{folder}/{blob.sha256}.{blob.extension}"


def trajectory_to_dict(trajectory: Trajectory) -> dict[str, Any]:
    """The native record of one trajectory (from a queryset of :func:`export_queryset`)."""
    task = trajectory.task
    screens = list(trajectory.screens.all())
    position = {screen.pk: i for i, screen in enumerate(screens)}
    anchors = sorted(trajectory.anchors.all(), key=lambda a: (a.step_index, a.pk))
    return {
        "schema": SCHEMA,
        "id": str(trajectory.uid),
        "task": {
            "id": task.uid,
            "goal": task.goal,
            "apps": task.apps,
            "intent": task.intent,
            "difficulty": task.difficulty,
            "gold_answer": task.gold_answer,
            "grading_rule": task.grading_rule,
            "memory_items": task.memory_items,
        },
        "device": {
            "serial": trajectory.device_serial,
            "model": trajectory.device_model,
            "android_version": trajectory.android_version,
            "width": trajectory.screen_width,
            "height": trajectory.screen_height,
            "density": trajectory.density,
        },
        "source": trajectory.source,
        "status": trajectory.status,
        "outcome": trajectory.outcome,
        "recorded_by": trajectory.recorder_name or None,
        "recorded_at": _iso(trajectory.recorded_at),
        "metadata": trajectory.metadata,
        "screens": [
            {
                "screenshot": blob_file(screen.screenshot),
                "ui_xml": blob_file(screen.ui_xml) if screen.ui_xml else None,
                "width": screen.width,
                "height": screen.height,
                "package": screen.package,
                "activity": screen.activity,
                "captured_at": _iso(screen.captured_at),
                "features": screen.features,
                "visible_memory": screen.visible_memory,
            }
            for screen in screens
        ],
        "steps": [
            {
                "index": step.index,
                "screen": position[step.screen_id],
                "action": {"type": step.action_type, **step.action},
                "target": step.target,
                "thought": step.thought,
                "summary": step.summary,
                "memory": step.memory,
                "trainable": step.trainable,
                "action_sent_at": _iso(step.action_sent_at),
                "settled_at": _iso(step.settled_at),
            }
            for step in trajectory.steps.all()
        ],
        "final_screen": position.get(trajectory.final_screen_id),
        "subgoals": [
            {
                "start": g.start,
                "end": g.end,
                "text": g.text,
                "effect": g.effect,
                "behaviour": g.behaviour,
                "success": g.success,
                "origin": g.origin,
            }
            for g in sorted(trajectory.subgoals.all(), key=lambda g: (g.start, g.pk))
        ],
        "memory_targets": [
            {
                "key": m.key,
                "value": m.value,
                "encode_step": m.encode_step,
                "retrieve_steps": m.retrieve_steps,
                "evidence": m.evidence,
            }
            for m in sorted(
                trajectory.memory_targets.all(), key=lambda m: (m.encode_step, m.key, m.pk)
            )
        ],
        "anchors": [
            {
                "id": a.key,
                "step": a.step_index,
                "type": a.type,
                "content": a.content,
                "description": a.description,
                "evidence": a.evidence,
            }
            for a in anchors
        ],
        "anchor_links": [
            {
                "source": a.key,
                "target": link.target.key,
                "relation": link.relation,
                "critical": link.critical,
            }
            for a in anchors
            for link in a.links_out.all()
        ],
    }


def _copy_blob(blob: Blob, target: Path) -> None:
    try:
        source = default_storage.path(blob.storage_name)
    except NotImplementedError:
        with default_storage.open(blob.storage_name, "rb") as src, open(target, "wb") as out:
            shutil.copyfileobj(src, out)
    else:
        shutil.copyfile(source, target)


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def export_waypoint(
    trajectories: QuerySet[Trajectory], dest: Path, progress: Progress | None = None
) -> dict[str, Any]:
    """Write the trajectories to the folder ``dest`` (which must not exist); return counts."""
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
        # File checksums go to a side file as they are produced, so memory stays flat.
        sums_path = work / ".sums"
        data_hash = hashlib.sha256()
        with (
            open(work / DATA_FILE, "w", encoding="utf-8") as data,
            open(sums_path, "w", encoding="utf-8") as sums,
        ):
            for trajectory in export_queryset(trajectories).iterator(chunk_size=100):
                record = trajectory_to_dict(trajectory)
                line = _dump(record) + "\n"
                data.write(line)
                data_hash.update(line.encode("utf-8"))
                for screen in trajectory.screens.all():
                    for blob in (screen.screenshot, screen.ui_xml):
                        if blob is None:
                            continue
                        name = blob_file(blob)
                        target = work / name
                        if not target.exists():
                            _copy_blob(blob, target)
                            sums.write(f"{blob.sha256} {name}\n")
                            counts["files"] += 1
                counts["trajectories"] += 1
                counts["steps"] += len(record["steps"])
                counts["screens"] += len(record["screens"])
                if progress and (counts["trajectories"] % 20 == 0):
                    progress(counts["trajectories"], total)
        counts["files"] += 1
        _write_manifest(work, counts, data_hash.hexdigest(), sums_path)
        sums_path.unlink()
        os.replace(work, dest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    if progress:
        progress(counts["trajectories"], total)
    return counts


def _write_manifest(work: Path, counts: dict[str, int], data_sha: str, sums_path: Path) -> None:
    """Stream the manifest: the file list is copied line by line from the side file."""
    with open(work / MANIFEST, "w", encoding="utf-8") as out:
        head = {"format": FORMAT, "schema": SCHEMA, "schema_version": SCHEMA_VERSION}
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


class _Fields:
    """Typed access to a JSON object, with errors naming the line and field."""

    def __init__(self, obj: Any, where: str):
        if not isinstance(obj, dict):
            raise fail(where, f"must be an object, got {type(obj).__name__}")
        self.obj = obj
        self.where = where

    def at(self, key: str) -> str:
        return field_at(self.where, key)

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        if key not in self.obj or self.obj[key] is None:
            if default is ...:
                raise InvalidData(f"{self.at(key)}: is required")
            return default
        value = self.obj[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise InvalidData(
                f"{self.at(key)}: must be {_kind_name(names)}, got {type(value).__name__}"
            )
        return value

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


def _kind_name(names: str) -> str:
    return {
        "str": "a string",
        "int": "an integer",
        "bool": "true or false",
        "dict": "an object",
        "list": "a list",
    }.get(names, names)


def read_manifest(folder: Path) -> dict[str, Any]:
    raw = read_file(folder, MANIFEST, MANIFEST)
    try:
        manifest = json.loads(raw)
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


def _read_screen(folder: Path, obj: Any, where: str, files: dict[str, str]) -> ScreenRecord:
    f = _Fields(obj, where)
    shot_name = f.get("screenshot", str)
    shot = _read_listed(folder, shot_name, f.at("screenshot"), files)
    info = check_image(shot, f"{f.at('screenshot')} ({shot_name})")
    xml_name = f.get("ui_xml", str, None)
    xml = None
    if xml_name is not None:
        xml = _read_listed(folder, xml_name, f.at("ui_xml"), files)
        try:
            parse_ui_xml(xml)
        except UIXmlError as exc:
            raise InvalidData(f"{f.at('ui_xml')} ({xml_name}): {exc}") from None
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


def _read_listed(folder: Path, name: str, where: str, files: dict[str, str]) -> bytes:
    expected = files.get(name)
    if expected is None:
        raise InvalidData(f"{where}: file {name!r} is not listed in {MANIFEST}")
    data = read_file(folder, name, where)
    if sha256_hex(data) != expected:
        raise InvalidData(f"{where}: file {name!r} does not match its sha256 in {MANIFEST}")
    return data


def record_from_dict(obj: Any, where: str, folder: Path, files: dict[str, str]) -> TrajectoryRecord:
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
    screens = [
        _read_screen(folder, s, f"{f.at('screens')}[{i}]", files)
        for i, s in enumerate(f.get("screens", list))
    ]
    steps = []
    for i, raw in enumerate(f.get("steps", list)):
        s = _Fields(raw, f"{f.at('steps')}[{i}]")
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


def read_waypoint(folder: Path) -> Iterator[tuple[str, TrajectoryRecord]]:
    """Yield (where, record) for every line of a native export folder."""
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
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            where = f"{DATA_FILE} line {number}:"
            try:
                obj = json.loads(raw.rstrip())
            except json.JSONDecodeError as exc:
                raise fail(where, f"invalid JSON at column {exc.colno}: {exc.msg}") from None
            except UnicodeDecodeError as exc:
                raise fail(where, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
            yield where, record_from_dict(obj, where, folder, files)
