"""The generator's report (issue 37, point 4): how many environments were verified and why the
others failed, how diverse the verified ones are (distinct layouts by the structural hash of
the XML of their pages, palettes and densities, domains, memory types), their solver paths,
and how fast they came (environments per hour, wall time from the job's start to its end)."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from .models import EnvironmentStatus, Generation

REASONS_SHOWN = 8


def _spread(values: list[Any]) -> dict[str, int]:
    return dict(Counter(str(v) for v in values if v not in (None, "")).most_common())


def generation_report(generation: Generation) -> dict[str, Any]:
    rows = list(
        generation.environments.values(
            "index", "status", "stage", "reason", "domain", "report", "seconds"
        )
    )
    verified = [r for r in rows if r["status"] == EnvironmentStatus.VERIFIED]
    failed = [r for r in rows if r["status"] == EnvironmentStatus.FAILED]
    reports = [r["report"] or {} for r in verified]
    styles = [rep.get("style") or {} for rep in reports]
    pages = {page for rep in reports for page in rep.get("page_hashes", [])}
    steps = [rep["memory"]["steps"] for rep in reports if rep.get("memory")]
    farthest = [
        max(d for d in rep["memory"]["distances"].values() if d is not None)
        for rep in reports
        if rep.get("memory") and any(d is not None for d in rep["memory"]["distances"].values())
    ]
    job = generation.job
    wall = (
        (job.finished_at - job.started_at).total_seconds()
        if job and job.started_at and job.finished_at
        else None
    )
    return {
        "asked": generation.count,
        "generated": len(rows),
        "verified": len(verified),
        "failed": len(failed),
        "failed_by_stage": _spread([r["stage"] for r in failed]),
        "failure_reasons": [
            f"#{r['index']} ({r['stage']}): {r['reason']}" for r in failed[:REASONS_SHOWN]
        ],
        "distinct_layouts": len({rep.get("layout_hash") for rep in reports} - {None}),
        "distinct_pages": len(pages),
        "domains": _spread([r["domain"] for r in verified]),
        "memory_types": _spread([rep.get("memory_type") for rep in reports]),
        "answers": _spread([rep.get("answer") for rep in reports]),
        "memory_items": _spread([rep.get("memory_items") for rep in reports]),
        "palettes": len({(s.get("palette") or {}).get("primary") for s in styles} - {None}),
        "densities": _spread([s.get("density") for s in styles]),
        "fonts": len({s.get("font") for s in styles} - {None}),
        "headers": _spread([s.get("header") for s in styles]),
        "list_styles": _spread([s.get("list_style") for s in styles]),
        "icon_sets": _spread([s.get("icon_set") for s in styles]),
        "solver_steps": _summary(steps),
        "farthest_memory_distance": _summary(farthest),
        "seconds_per_environment": _summary([r["seconds"] for r in rows if r["seconds"]]),
        "wall_seconds": round(wall, 1) if wall is not None else None,
        "environments_per_hour": round(len(verified) * 3600 / wall, 1) if wall else None,
    }


def _summary(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "min": round(min(values), 2),
        "median": round(statistics.median(values), 2),
        "max": round(max(values), 2),
    }


def report_lines(report: dict[str, Any]) -> list[str]:
    """The report as the command prints it."""

    def spread(counts: dict[str, int]) -> str:
        return ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"

    def summary(s: dict[str, float] | None) -> str:
        return f"{s['min']:g} / {s['median']:g} / {s['max']:g}" if s else "-"

    lines = [
        f"verified {report['verified']} of {report['asked']} asked "
        f"({report['generated']} generated, {report['failed']} failed)",
        f"failed by stage: {spread(report['failed_by_stage'])}",
        *[f"  {reason}" for reason in report["failure_reasons"]],
        f"distinct layouts: {report['distinct_layouts']} "
        f"(pages of distinct structure: {report['distinct_pages']})",
        f"palettes: {report['palettes']}, fonts: {report['fonts']}, "
        f"densities: {spread(report['densities'])}",
        f"headers: {spread(report['headers'])}; lists: {spread(report['list_styles'])}; "
        f"icons: {spread(report['icon_sets'])}",
        f"domains: {spread(report['domains'])}",
        f"memory types: {spread(report['memory_types'])}",
        f"answers: {spread(report['answers'])}; memory items: {spread(report['memory_items'])}",
        f"solver steps min/median/max: {summary(report['solver_steps'])}",
        f"farthest memory distance min/median/max: {summary(report['farthest_memory_distance'])}",
        f"seconds per environment min/median/max: {summary(report['seconds_per_environment'])}",
    ]
    if report["wall_seconds"] is not None:
        lines.append(
            f"wall time {report['wall_seconds']:g} s: {report['environments_per_hour']:g} "
            "verified environments per hour"
        )
    return lines
