"""A suite's memory check (issue 35, point 4): does each instance need memory on the reference
solver's own path?

The solver plays every instance as any agent does (a run of agent ``solver``: the runner, the
project's devices, Celery workers), its episodes are kept as verified demonstrations, and each
one's path, read back from the stored steps (the UI XML of the screen before each action, and
the action), is measured by :func:`agents.memory_need.measure` against the instance's memory
values. The suite document then carries, per instance, a ``memory`` block and, for the suite, a
``memory`` summary: how many instances need memory beyond the window ``K``.

An instance the solver did not solve is not measured: its block says why, and it never counts
as needing memory.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from devices.services.packages import installed_manifests
from devices.virtual.apps import Catalog, load_apps
from trajectories.blobs import read_blob
from trajectories.models import Step, Trajectory

from .memory_need import InstanceNeed, SolverStep, measure
from .models import Episode, Run
from .suites import instance_key

Key = tuple[str, int, int]  # template, seed, level


def solver_path(episode: Episode) -> list[SolverStep]:
    """The episode's steps up to its answer (the recorder's closing ``terminate`` after an
    answer left out), each the UI XML of the screen before the action, and the action."""
    return trajectory_path(episode.trajectory)


def trajectory_path(trajectory: Trajectory) -> list[SolverStep]:
    """:func:`solver_path` of any trajectory (a generated environment's verified run)."""
    rows = (
        Step.objects.filter(trajectory=trajectory)
        .select_related("screen__ui_xml")
        .order_by("index")
    )
    path: list[SolverStep] = []
    for row in rows:
        if row.action_type == "terminate" and path and path[-1].action["type"] == "answer":
            break
        xml = read_blob(row.screen.ui_xml).decode("utf-8", "replace") if row.screen.ui_xml else None
        path.append(SolverStep(xml, {"type": row.action_type, **(row.action or {})}))
    return path


def instance_values(catalog: Catalog, template: str) -> dict[str, str]:
    """The memory values of the template's instance in ``catalog`` (ref -> value)."""
    return {ref: catalog.variable(ref).value for ref in catalog.task(template).variables}


def measure_run(run: Run, k: int) -> dict[Key, InstanceNeed | str]:
    """Each instance of a solver run: its memory need at window ``k``, or why it was not
    measured (the solver did not solve it). The first successful attempt of an instance is
    measured."""
    catalogs: dict[tuple[int, int], Catalog] = {}
    found: dict[Key, InstanceNeed | str] = {}
    episodes = Episode.objects.filter(run=run).select_related("trajectory").order_by("attempt")
    for episode in episodes:
        key = (episode.template, episode.seed, episode.level)
        if isinstance(found.get(key), InstanceNeed):
            continue
        if not episode.success or episode.trajectory is None:
            found[key] = f"the solver did not solve it: {episode.message or episode.status}"
            continue
        world = (episode.seed, episode.level)
        if world not in catalogs:
            catalogs[world] = load_apps(
                episode.seed, level=episode.level, packages=installed_manifests()
            )
        values = instance_values(catalogs[world], episode.template)
        found[key] = measure(solver_path(episode), values, k)
    return found


def memory_block(need: InstanceNeed | str, k: int) -> dict[str, Any]:
    """What a suite document says of one instance's memory need."""
    if isinstance(need, str):
        return {"k": k, "needs_memory": False, "checked": False, "reason": need}
    return {
        "k": k,
        "needs_memory": need.needs_memory,
        "checked": True,
        "solver_steps": need.steps,
        # each value's largest memory distance on the solver's path (None: no screen showed
        # it before a use); beyond the window when it is k or more
        "distances": {value.ref: value.distance for value in need.values},
    }


def summary(blocks: Iterable[dict[str, Any]], k: int, left_out: list[str]) -> dict[str, Any]:
    """The suite's memory summary: how many of its instances need memory beyond ``k``."""
    blocks = list(blocks)
    steps = [b["solver_steps"] for b in blocks if b["checked"]]
    return {
        "k": k,
        "instances": len(blocks),
        "checked": len(steps),
        "need_memory": sum(b["needs_memory"] for b in blocks),
        "solver_steps": (
            {"min": min(steps), "median": statistics.median(steps), "max": max(steps)}
            if steps
            else None
        ),
        "left_out": left_out,
    }


def mark_suite(
    document: dict[str, Any],
    needs: dict[Key, InstanceNeed | str],
    k: int,
    require: bool = False,
) -> dict[str, Any]:
    """The suite document with each instance's ``memory`` block and the suite's summary; with
    ``require``, the instances that do not need memory beyond ``k`` (or were not solved) left
    out, and named in the summary."""
    kept, left_out = [], []
    for instance in document["instances"]:
        key = instance_key(instance)
        block = memory_block(needs.get(key, "not played"), k)
        if require and not block["needs_memory"]:
            template, seed, level = key
            why = block.get("reason") or f"no value leaves the last {k} screens"
            left_out.append(f"{template} at seed {seed}, L{level}: {why}")
            continue
        kept.append({**instance, "memory": block})
    marked = {**document, "instances": kept}
    marked["memory"] = summary((i["memory"] for i in kept), k, left_out)
    return marked
