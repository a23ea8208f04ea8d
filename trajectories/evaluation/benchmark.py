"""Reading a benchmark: an ``androtmem`` export folder or .zip, or a ground-truth .jsonl."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..validation import InvalidData

SUPPORTED = ("androtmem",)


def _lines(handle: io.TextIOBase, where: str) -> Iterator[dict[str, Any]]:
    text = handle.read().strip()
    if not text:
        return
    if text.startswith("["):  # AndroTMem also reads a JSON array
        try:
            yield from json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidData(f"{where}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidData(f"{where} line {number}: invalid JSON ({exc.msg})") from None
        if not isinstance(task, dict) or "task_id" not in task:
            raise InvalidData(f"{where} line {number}: not a task record (no task_id)")
        yield task


def _check_format(manifest: dict[str, Any], where: str) -> list[str]:
    fmt = manifest.get("format")
    if fmt not in SUPPORTED:
        raise InvalidData(
            f"{where}: a {fmt!r} export is not a benchmark the evaluator scores "
            f"(it scores: {', '.join(SUPPORTED)})"
        )
    return list(manifest.get("split", {}).get("ratios", {})) or ["test"]


def _pick(splits: list[str], split: str | None, where: str) -> list[str]:
    if split is None:
        return splits
    if split not in splits:
        raise InvalidData(f"{where}: no split {split!r} (it has {', '.join(splits)})")
    return [split]


def load_benchmark(source: Path | str, split: str | None = None) -> list[dict[str, Any]]:
    """The task records of a benchmark, every split unless one is named."""
    source = Path(source)
    if not source.exists():
        raise InvalidData(f"{source}: no such file or folder")
    if source.is_dir():
        manifest_path = source / "manifest.json"
        if not manifest_path.is_file():
            raise InvalidData(f"{source}: no manifest.json; is it a Waypoint export?")
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        tasks = []
        for name in _pick(_check_format(manifest, source.name), split, source.name):
            with open(source / f"{name}.jsonl", encoding="utf-8") as handle:
                tasks.extend(_lines(handle, f"{name}.jsonl"))
        return tasks
    if zipfile.is_zipfile(source):
        return _from_zip(source, split)
    with open(source, encoding="utf-8") as handle:
        return list(_lines(handle, source.name))


def _from_zip(source: Path, split: str | None) -> list[dict[str, Any]]:
    with zipfile.ZipFile(source) as archive:
        names = archive.namelist()
        manifests = [n for n in names if n.endswith("manifest.json") and n.count("/") <= 1]
        if not manifests:
            raise InvalidData(f"{source.name}: no manifest.json; is it a Waypoint export?")
        prefix = manifests[0][: -len("manifest.json")]
        manifest = json.loads(archive.read(manifests[0]))
        tasks = []
        for name in _pick(_check_format(manifest, source.name), split, source.name):
            with archive.open(f"{prefix}{name}.jsonl") as raw:
                tasks.extend(_lines(io.TextIOWrapper(raw, encoding="utf-8"), f"{name}.jsonl"))
        return tasks
