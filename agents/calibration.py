"""A suite's calibration (issue 35, point 4): how its four scripted control agents score on it.

- ``solver``, the reference: it must solve every instance;
- ``window+memory``, the solver seeing only its last K observations and writing what it reads
  into its memory field: it must solve every instance too;
- ``window``, the same with no memory field: it must fail every instance that needs memory
  (the suite's memory check says which) and solve the others;
- ``random``: near zero.

A suite whose instances need memory separates ``window`` from ``window+memory``; one whose
``window`` score is close to the solver's does not measure memory. Each control's score is
that of its latest run over the suite (``do_calibrate_suite`` starts the four).
"""

from __future__ import annotations

from typing import Any, TypedDict

from django.conf import settings

from trajectories.jobs import with_true_status

from .models import Episode, EpisodeStatus, Run, Suite
from .suites import instance_key, level_of

# The controls, in the order a calibration lists them, as the agent specs it runs.
CONTROLS = ("solver", "window+memory", "window", "random")


class ControlScore(TypedDict):
    agent: str
    spec: str
    run: int | None
    status: str  # the run's job status, or "not run"
    finished: int
    solved: int
    memory_solved: int  # of the instances that need memory (the suite's check)
    expected: str  # what it must score for the suite to measure memory


class Calibration(TypedDict):
    k: int
    instances: int
    need_memory: int | None  # None: the suite was not checked (make_suite --check-memory)
    controls: list[ControlScore]


def window_of(suite: Suite) -> int:
    """The K the suite was checked at (WAYPOINT_MEMORY_WINDOW when it was not)."""
    memory = suite.document.get("memory")
    if isinstance(memory, dict) and isinstance(memory.get("k"), int):
        return memory["k"]
    return settings.WAYPOINT_MEMORY_WINDOW


def control_specs(suite: Suite) -> dict[str, str]:
    """Each control as the agent spec its calibration run uses."""
    k = window_of(suite)
    return {
        "solver": "solver",
        "window+memory": f"window+memory,k={k}",
        "window": f"window,k={k}",
        "random": "random,seed=1",
    }


def needing_memory(suite: Suite) -> set[tuple[str, int, int]] | None:
    """The instances the suite's memory check found needing memory (None: not checked)."""
    blocks = [(i, i.get("memory")) for i in suite.instances]
    if not blocks or not all(isinstance(block, dict) for _, block in blocks):
        return None
    return {instance_key(i) for i, block in blocks if block.get("needs_memory")}


EXPECTED = {
    "solver": "all",
    "window+memory": "all",
    "window": "none of those needing memory",
    "random": "about none",
}


def calibration(suite: Suite) -> Calibration:
    """The four controls' latest scores on the suite."""
    needing = needing_memory(suite)
    specs = control_specs(suite)
    keys = {instance_key(i) for i in suite.instances}
    controls: list[ControlScore] = []
    for agent in CONTROLS:
        run = (
            Run.objects.filter(suite=suite, agent_spec=specs[agent])
            .select_related("job")
            .order_by("-created_at", "-id")
            .first()
        )
        score = ControlScore(
            agent=agent,
            spec=specs[agent],
            run=run.pk if run else None,
            status=with_true_status(run.job).status if run else "not run",
            finished=0,
            solved=0,
            memory_solved=0,
            expected=EXPECTED[agent],
        )
        if run is not None:
            solved: set[tuple[str, int, int]] = set()
            for episode in Episode.objects.filter(run=run, status=EpisodeStatus.FINISHED):
                score["finished"] += 1
                if episode.success:
                    solved.add((episode.template, episode.seed, episode.level))
            solved &= keys
            score["solved"] = len(solved)
            score["memory_solved"] = len(solved & needing) if needing is not None else 0
        controls.append(score)
    return Calibration(
        k=window_of(suite),
        instances=len(keys),
        need_memory=None if needing is None else len(needing),
        controls=controls,
    )


def suite_summary(suite: Suite) -> dict[str, Any]:
    """A suite as the Runs page and the API list it: its size, levels and memory check."""
    memory = suite.document.get("memory")
    return {
        "name": suite.name,
        "version": suite.version,
        "instances": len(suite.instances),
        "levels": sorted({level_of(i) for i in suite.instances}),
        "memory": memory if isinstance(memory, dict) else None,
        "created_at": suite.created_at.isoformat(),
    }
