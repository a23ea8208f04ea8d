"""Scoring an uploaded predictions file against a project's benchmark export, for the API and
the evaluator page."""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.core.files.storage import default_storage

from formats.archive import human_size
from trajectories.models import Job, JobKind, JobStatus, Project
from trajectories.validation import InvalidData

from .benchmark import load_benchmark
from .metrics import evaluate
from .predictions import read_predictions


def benchmark_jobs(project: Project):
    """The project's succeeded androtmem exports, newest first: what can be scored against."""
    return Job.objects.filter(
        project=project, kind=JobKind.EXPORT, status=JobStatus.SUCCEEDED, format="androtmem"
    ).order_by("-created_at", "-id")


def _check_size(upload: Any, field: str) -> None:
    size = getattr(upload, "size", 0) or 0
    if size > settings.WAYPOINT_MAX_UPLOAD_BYTES:
        raise InvalidData(
            f"{field}: the file is {human_size(size)}, over the limit of "
            f"{human_size(settings.WAYPOINT_MAX_UPLOAD_BYTES)} (WAYPOINT_MAX_UPLOAD_BYTES)"
        )


def do_evaluate(
    project: Project,
    export_job_id: Any,
    predictions: IO[bytes],
    split: str | None = None,
    benchmark: Any = None,
) -> dict[str, Any]:
    """Score ``predictions`` (an upload) against an androtmem export job of ``project``, or
    against an uploaded ``benchmark`` (an androtmem export .zip, or AndroTMem ground truth
    as .jsonl / .json)."""
    _check_size(predictions, "predictions")
    if (export_job_id in (None, "")) == (benchmark is None):
        raise InvalidData("benchmark: give either export_job or a benchmark file")
    if benchmark is not None:
        _check_size(benchmark, "benchmark")
        name = Path(getattr(benchmark, "name", "") or "benchmark.jsonl").name
        if not name.lower().endswith((".zip", ".jsonl", ".json")):
            raise InvalidData(f"benchmark: {name} is not a .zip, .jsonl or .json file")
        with tempfile.TemporaryDirectory(prefix="waypoint-evaluate-") as tmp:
            local = Path(tmp) / name
            with open(local, "wb") as out:
                for chunk in (
                    benchmark.chunks() if hasattr(benchmark, "chunks") else [benchmark.read()]
                ):
                    out.write(chunk)
            try:
                tasks = load_benchmark(local, split or None)
            except (json.JSONDecodeError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
                raise InvalidData(f"benchmark: {name} cannot be read ({exc})") from None
        return _score(tasks, predictions, {"file": name, "split": split or None})
    job = benchmark_jobs(project).filter(pk=_job_id(export_job_id)).first()
    if job is None or not job.output_path:
        raise InvalidData(
            f"export_job: {export_job_id!r} is not a succeeded androtmem export of this project"
        )
    with tempfile.TemporaryDirectory(prefix="waypoint-evaluate-") as tmp:
        local = Path(tmp) / "benchmark.zip"
        try:
            with default_storage.open(job.output_path, "rb") as src, open(local, "wb") as out:
                shutil.copyfileobj(src, out)
        except FileNotFoundError:
            raise InvalidData(
                f"export_job: job {job.pk}'s file is no longer in storage; export again"
            ) from None
        tasks = load_benchmark(local, split or None)
    return _score(tasks, predictions, {"export_job": job.pk, "split": split or None})


def _score(tasks: list[dict[str, Any]], predictions: Any, about: dict[str, Any]) -> dict[str, Any]:
    # The upload's own file object (in memory or a temporary file) reads as a binary stream.
    found, malformed = read_predictions(getattr(predictions, "file", predictions), tasks)
    result = evaluate(tasks, found, malformed)
    result["benchmark"] = {**about, "tasks": len(tasks)}
    return result


def _job_id(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidData(f"export_job: {value!r} is not a job id") from None
