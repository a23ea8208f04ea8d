"""Reading a benchmark: an ``androtmem`` export folder or .zip, or a ground-truth .jsonl."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from core.limits import limit
from formats.archive import check_zip_members, check_zip_size, read_file
from trajectories.bounds import bounded_lines, check_file_size, line_too_long, load_json
from trajectories.invalid import InvalidData, check_grading_rule, shown

SUPPORTED = ("androtmem",)


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidData(f"{where}: must be a list")
    return value


def _objects(value: Any, where: str) -> list[dict[str, Any]]:
    items = _list(value, where)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InvalidData(f"{where}[{i}]: must be an object")
    return items


def _object(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidData(f"{where}: must be an object")
    return value


def _check_step(step: dict[str, Any], where: str) -> None:
    if "step_index" not in step:
        raise InvalidData(f"{where}: no step_index")
    form = _object(step.get("actionForm"), f"{where}.actionForm")
    # An empty or unreadable box scores 0, as in AndroTMem's scorer; only its shape is checked.
    if not isinstance(form.get("bbox"), list | None):
        raise InvalidData(f"{where}.actionForm.bbox: must be [x_min, y_min, x_max, y_max]")
    for side in ("width", "height"):
        size = step.get(side)
        if size is not None and not (
            isinstance(size, int) and not isinstance(size, bool) and size > 0
        ):
            raise InvalidData(f"{where}.{side}: must be a positive integer")
    extra = _object(step.get("extra_info"), f"{where}.extra_info")
    _objects(extra.get("status"), f"{where}.extra_info.status")
    links = step.get("links")
    place = f"{where}.links" if links is not None else f"{where}.extra_info.links"
    for i, link in enumerate(_objects(links if links is not None else extra.get("links"), place)):
        source = link.get("source")
        if source is not None and not isinstance(source, str | int):
            raise InvalidData(f"{place}[{i}].source: must be a string or a number")


def _positive_or_none(size: Any) -> bool:
    return (
        size is None
        or (type(size) is int and size > 0)
        or (isinstance(size, int) and not isinstance(size, bool) and size > 0)
    )


def _step_passes(step: dict[str, Any]) -> bool:
    """Whether :func:`_check_step` would pass the step: the same checks, without wording the
    places (most steps pass; the one that does not is checked again, for its message)."""
    if "step_index" not in step:
        return False
    form = step.get("actionForm")
    if form is not None and not isinstance(form, dict):
        return False
    if form is not None and not isinstance(form.get("bbox"), list | None):
        return False
    if not (_positive_or_none(step.get("width")) and _positive_or_none(step.get("height"))):
        return False
    extra = step.get("extra_info")
    if extra is None:
        extra = {}
    elif not isinstance(extra, dict):
        return False
    status = extra.get("status")
    if status is not None and not (
        isinstance(status, list) and all(isinstance(anchor, dict) for anchor in status)
    ):
        return False
    links = step.get("links")
    if links is None:
        links = extra.get("links")
    if links is None:
        return True
    if not isinstance(links, list):
        return False
    for link in links:
        if not isinstance(link, dict):
            return False
        source = link.get("source")
        if source is not None and not isinstance(source, str | int):
            return False
    return True


def check_task(task: dict[str, Any], where: str) -> dict[str, Any]:
    """A task record has the shape the evaluator reads; else an error naming the place."""
    for i, step in enumerate(_objects(task.get("steps"), f"{where}: steps")):
        if not _step_passes(step):
            _check_step(step, f"{where}: steps[{i}]")
    _objects(task.get("memory_targets"), f"{where}: memory_targets")
    for name in ("primary_intent", "gold_answer", "grading_rule"):
        if task.get(name) is not None and not isinstance(task[name], str):
            raise InvalidData(f"{where}: {name}: must be a string")
    if task.get("grading_rule") is not None:
        check_grading_rule(task["grading_rule"], f"{where}: grading_rule")
    apps = task.get("apps")
    if apps is not None and not (isinstance(apps, list) and all(isinstance(a, str) for a in apps)):
        raise InvalidData(f"{where}: apps: must be a list of strings")
    return task


def _task(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or "task_id" not in value:
        raise InvalidData(f"{where}: not a task record (no task_id)")
    return check_task(value, where)


def _json(raw: str, where: str) -> Any:
    try:
        return load_json(raw, where)
    except json.JSONDecodeError as exc:
        raise InvalidData(f"{where}: invalid JSON ({exc.msg} at line {exc.lineno})") from None


def _lines(handle: IO[str], where: str) -> Iterator[dict[str, Any]]:
    """The task records of a .jsonl file, read a line at a time; or of a JSON array (which
    AndroTMem also reads), read whole: a file is at most ``WAYPOINT_MAX_FILE_BYTES``."""
    first = True
    for number, line in bounded_lines(handle):
        if line is None:
            raise InvalidData(f"{where} line {number}: {line_too_long()}")
        if not line.strip():
            continue
        if first and line.lstrip().startswith("["):
            rest = handle.read(limit("WAYPOINT_MAX_FILE_BYTES"))
            if handle.read(1):
                raise InvalidData(f"{where}: {line_too_long()}")
            tasks = _json(line + rest, where)
            for count, task in enumerate(tasks, start=1):
                yield _task(task, f"{where} task {count}")
            return
        first = False
        try:
            task = load_json(line, f"{where} line {number}")
        except json.JSONDecodeError as exc:
            raise InvalidData(f"{where} line {number}: invalid JSON ({exc.msg})") from None
        yield _task(task, f"{where} line {number}")


def _text_records(text: str, where: str) -> Iterator[dict[str, Any]]:
    """:func:`_lines` of a whole file already read within ``WAYPOINT_MAX_FILE_BYTES`` (so no
    line of it can be too long), without reading it again a line at a time."""
    if text.lstrip().startswith("["):
        yield from _lines(io.StringIO(text), where)
        return
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            task = load_json(line, f"{where} line {number}")
        except json.JSONDecodeError as exc:
            raise InvalidData(f"{where} line {number}: invalid JSON ({exc.msg})") from None
        yield _task(task, f"{where} line {number}")


def _check_format(manifest: Any, where: str) -> list[str]:
    if not isinstance(manifest, dict):
        raise InvalidData(f"{where}: manifest.json is not an object; is it a Waypoint export?")
    fmt = manifest.get("format")
    if fmt not in SUPPORTED:
        raise InvalidData(
            f"{where}: a {shown(fmt)} export is not a benchmark the evaluator scores "
            f"(it scores: {', '.join(SUPPORTED)})"
        )
    split = manifest.get("split")
    ratios = split.get("ratios") if isinstance(split, dict) else None
    return (list(ratios) if isinstance(ratios, dict) else []) or ["test"]


def _pick(splits: list[str], split: str | None, where: str) -> list[str]:
    if split is None:
        return splits
    if split not in splits:
        raise InvalidData(f"{where}: no split {shown(split)} (it has {', '.join(splits)})")
    return [split]


def load_benchmark(source: Path | str, split: str | None = None) -> list[dict[str, Any]]:
    """The task records of a benchmark, every split unless one is named.

    A benchmark is read as an import is: an archive within the import's limits (checked from
    its headers before a byte is unpacked), each file within ``WAYPOINT_MAX_FILE_BYTES``, and
    streamed, a line at a time, never unpacked whole."""
    source = Path(source)
    if not source.exists():
        raise InvalidData(f"{source}: no such file or folder")
    if source.is_dir():
        manifest_path = source / "manifest.json"
        if not manifest_path.is_file():
            raise InvalidData(f"{source}: no manifest.json; is it a Waypoint export?")
        manifest = _json(read_file(source, "manifest.json", source.name).decode(), "manifest.json")
        tasks = []
        for name in _pick(_check_format(manifest, source.name), split, source.name):
            # read_file keeps the name inside the folder and the file within its limit.
            text = read_file(source, f"{name}.jsonl", source.name).decode()
            tasks.extend(_text_records(text, f"{name}.jsonl"))
        return tasks
    if zipfile.is_zipfile(source):
        return _from_zip(source, split)
    check_file_size(source.stat().st_size, source.name)
    with open(source, encoding="utf-8") as handle:
        return list(_lines(handle, source.name))


def _from_zip(source: Path, split: str | None) -> list[dict[str, Any]]:
    with open(source, "rb") as raw:
        check_zip_members(raw, source.name)
    with zipfile.ZipFile(source) as archive:
        # The import's limits, from the headers: members, each file, in all, and the ratio.
        # What is read after can be no more: zipfile stops a member at its stated size.
        check_zip_size(archive, source.name, source.stat().st_size)
        names = archive.namelist()
        manifests = [n for n in names if n.endswith("manifest.json") and n.count("/") <= 1]
        if not manifests:
            raise InvalidData(f"{source.name}: no manifest.json; is it a Waypoint export?")
        prefix = manifests[0][: -len("manifest.json")]
        manifest = _json(archive.read(manifests[0]).decode(), "manifest.json")
        tasks = []
        for name in _pick(_check_format(manifest, source.name), split, source.name):
            member = f"{prefix}{name}.jsonl"
            if member not in names:
                raise InvalidData(f"{source.name}: {member} is missing")
            with archive.open(member) as raw:
                tasks.extend(_lines(io.TextIOWrapper(raw, encoding="utf-8"), f"{name}.jsonl"))
        return tasks
