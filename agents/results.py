"""What runs scored, for the page, the API and the command alike: each run's summary (task
success, M-Acc, pass@k over seeds, steps, tokens, time, failure kinds, and the same broken
down by STAMP's difficulty level when a run plays more than L3), the task x run matrix, and
two runs compared (which episodes flipped). An episode is named by (template, seed, level,
attempt); a template at L1 or L2 is a task of its own for pass@k."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, TypedDict

from django.db.models import QuerySet

from evaluation.metrics import pass_at_k
from trajectories.jobs import with_true_status
from trajectories.models import Project
from trajectories.validation import InvalidData, InvalidRequest

from .models import Episode, EpisodeStatus, FailureKind, Run

NATURAL_LEVEL = 3  # STAMP's L3, the task alone (devices/virtual/templates.py)

EPISODE_FIELDS = (
    "id",
    "run_id",
    "template",
    "seed",
    "level",
    "attempt",
    "status",
    "success",
    "failure_kind",
    "answer",
    "steps",
    "invalid_outputs",
    "tokens_in",
    "tokens_out",
    "model_ms",
    "duration_ms",
    "memory_score",
    "device_serial",
    "trajectory_id",
    "message",
)


class LevelScore(TypedDict):
    """A run's scores at one difficulty level."""

    level: int
    episodes: int
    finished: int
    succeeded: int
    success_rate: float | None
    m_acc: float | None
    mean_steps: float | None


class Summary(TypedDict):
    run: int
    status: str
    agent: str
    agent_spec: str
    regime: str
    model: str
    suite: str
    created_at: str
    episodes: int
    finished: int
    succeeded: int
    success_rate: float | None
    m_acc: float | None
    memory_episodes: int
    pass_at_k: dict[str, Any]
    mean_steps: float | None
    tokens_in: int
    tokens_out: int
    mean_seconds: float | None
    failures: dict[str, int]
    by_level: list[LevelScore]


def runs_of(project: Project) -> QuerySet[Run]:
    return Run.objects.filter(project=project).select_related("job", "created_by")


def picked_runs(project: Project, values: list[str], limit: int) -> list[Run]:
    """The runs named by id (each a run of the project), in the order given, at most ``limit``."""
    ids = []
    for value in values:
        try:
            ids.append(int(value))
        except (TypeError, ValueError):
            raise InvalidRequest(f"runs: {value!r} is not a run id") from None
    if len(ids) > limit:
        raise InvalidData(f"runs: at most {limit} at once, got {len(ids)}")
    found = {run.pk: run for run in runs_of(project).filter(pk__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise InvalidData(f"runs: the project has no run {missing[0]}")
    return [found[i] for i in dict.fromkeys(ids)]


def two_runs(project: Project, values: list[str]) -> tuple[Run, Run]:
    picked = picked_runs(project, values, 2)
    if len(picked) != 2:
        raise InvalidData("runs: pick two runs to compare")
    return picked[0], picked[1]


def episode_rows(runs: list[Run]) -> dict[int, list[dict[str, Any]]]:
    """Every episode of the runs as a dict, by run, in one query."""
    rows: dict[int, list[dict[str, Any]]] = {run.pk: [] for run in runs}
    found = Episode.objects.filter(run__in=runs).order_by("template", "seed", "level", "attempt")
    for row in found.values(*EPISODE_FIELDS):
        rows[row["run_id"]].append(row)
    return rows


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def task_name(template: str, level: int) -> str:
    """A template at a level as pass@k counts tasks: ``template``, ``template/L2``."""
    return template if level == NATURAL_LEVEL else f"{template}/L{level}"


def level_scores(rows: list[dict[str, Any]]) -> list[LevelScore]:
    """The episodes' scores level by level (the levels they have, in order)."""
    scores: list[LevelScore] = []
    for level in sorted({r["level"] for r in rows}):
        at = [r for r in rows if r["level"] == level]
        finished = [r for r in at if r["status"] == EpisodeStatus.FINISHED]
        scored = [r["memory_score"] for r in finished if r["memory_score"] is not None]
        scores.append(
            {
                "level": level,
                "episodes": len(at),
                "finished": len(finished),
                "succeeded": sum(bool(r["success"]) for r in finished),
                "success_rate": _mean([float(bool(r["success"])) for r in finished]),
                "m_acc": _mean(scored),
                "mean_steps": _mean([r["steps"] for r in finished]),
            }
        )
    return scores


def summarize(run: Run, rows: list[dict[str, Any]]) -> Summary:
    finished = [r for r in rows if r["status"] == EpisodeStatus.FINISHED]
    scored = [r["memory_score"] for r in finished if r["memory_score"] is not None]
    attempts: dict[str, list[bool]] = defaultdict(list)
    for r in finished:
        attempts[task_name(r["template"], r["level"])].append(bool(r["success"]))
    failures = Counter(r["failure_kind"] for r in finished if r["failure_kind"])
    return {
        "run": run.pk,
        "status": with_true_status(run.job).status,
        "agent": run.label,
        "agent_spec": run.agent_spec,
        "regime": run.regime,
        "model": run.model,
        "suite": run.suite_label,
        "created_at": run.created_at.isoformat(),
        "episodes": len(rows),
        "finished": len(finished),
        "succeeded": sum(bool(r["success"]) for r in finished),
        "success_rate": _mean([float(bool(r["success"])) for r in finished]),
        "m_acc": _mean(scored),
        "memory_episodes": len(scored),
        "pass_at_k": pass_at_k(attempts),
        "mean_steps": _mean([r["steps"] for r in finished]),
        "tokens_in": sum(r["tokens_in"] for r in finished),
        "tokens_out": sum(r["tokens_out"] for r in finished),
        "mean_seconds": _mean([r["duration_ms"] / 1000 for r in finished]),
        "failures": {kind: failures[kind] for kind in FailureKind.values if failures[kind]},
        "by_level": level_scores(rows),
    }


def summaries(runs: list[Run]) -> list[Summary]:
    rows = episode_rows(runs)
    return [summarize(run, rows[run.pk]) for run in runs]


def instance_key(row: dict[str, Any]) -> tuple[str, int, int, int]:
    return row["template"], row["seed"], row["level"], row["attempt"]


def matrix(runs: list[Run]) -> dict[str, Any]:
    """One row per episode key (template, seed, level, attempt) any of the runs has, one cell
    per run: the episode there (None when the run has no such episode)."""
    rows = episode_rows(runs)
    cells: dict[tuple[str, int, int, int], dict[int, dict[str, Any]]] = defaultdict(dict)
    for run in runs:
        for row in rows[run.pk]:
            cells[instance_key(row)][run.pk] = row
    return {
        "runs": [summarize(run, rows[run.pk]) for run in runs],
        "rows": [
            {
                "template": key[0],
                "seed": key[1],
                "level": key[2],
                "attempt": key[3],
                "cells": [cells[key].get(run.pk) for run in runs],
            }
            for key in sorted(cells)
        ],
    }


def compare(a: Run, b: Run) -> dict[str, Any]:
    """Which episodes flipped from run ``a`` to run ``b`` (both finished), and how many stayed."""
    rows = episode_rows([a, b])
    left = {instance_key(r): r for r in rows[a.pk] if r["status"] == EpisodeStatus.FINISHED}
    right = {instance_key(r): r for r in rows[b.pk] if r["status"] == EpisodeStatus.FINISHED}
    both = sorted(set(left) & set(right))
    fixed = [(left[k], right[k]) for k in both if not left[k]["success"] and right[k]["success"]]
    broken = [(left[k], right[k]) for k in both if left[k]["success"] and not right[k]["success"]]
    return {
        "a": summarize(a, rows[a.pk]),
        "b": summarize(b, rows[b.pk]),
        "compared": len(both),
        "fixed": [_flip(x, y) for x, y in fixed],
        "broken": [_flip(x, y) for x, y in broken],
        "both_succeeded": sum(1 for k in both if left[k]["success"] and right[k]["success"]),
        "both_failed": sum(1 for k in both if not left[k]["success"] and not right[k]["success"]),
        "only_in_a": len(set(left) - set(right)),
        "only_in_b": len(set(right) - set(left)),
    }


def _flip(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {
        "template": a["template"],
        "seed": a["seed"],
        "level": a["level"],
        "attempt": a["attempt"],
        "a": {k: a[k] for k in ("id", "success", "failure_kind", "trajectory_id")},
        "b": {k: b[k] for k in ("id", "success", "failure_kind", "trajectory_id")},
    }
