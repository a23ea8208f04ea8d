"""Proposers: who suggests labels for a trajectory, by name (see :mod:`.base`)."""

from __future__ import annotations

from typing import Any

from trajectories.blobs import read_blob
from trajectories.models import Step, Trajectory
from trajectories.records import TrajectoryRecord
from trajectories.validation import InvalidData

from .base import Episode, Proposed, Proposer, ScreenView, check_payload
from .heuristic import HeuristicProposer
from .llm import LLMProposer

__all__ = [
    "PROPOSERS",
    "Episode",
    "Proposed",
    "Proposer",
    "ScreenView",
    "check_payload",
    "episode_of_record",
    "episode_of_trajectory",
    "get_proposer",
]

PROPOSERS: dict[str, type] = {"heuristic": HeuristicProposer, "llm": LLMProposer}
DEFAULT_PROPOSER = "heuristic"


def get_proposer(name: str) -> Proposer:
    if name not in PROPOSERS:
        raise InvalidData(
            f"proposer: unknown proposer {name!r} (known: {', '.join(sorted(PROPOSERS))})"
        )
    return PROPOSERS[name]()


def episode_of_record(record: TrajectoryRecord) -> Episode:
    """A record as a proposer sees it (the screens before each step, then the final one)."""
    screens = [record.screens[s.screen] for s in record.steps]
    final = record.final_screen if record.final_screen is not None else len(record.screens) - 1
    screens.append(record.screens[final])
    return Episode(
        goal=record.task.goal,
        actions=[dict(s.action) for s in record.steps],
        screens=[ScreenView(s.package, s.activity, s.ui_xml, s.visible_memory) for s in screens],
    )


def episode_of_trajectory(trajectory: Trajectory, *, images: bool = False) -> Episode:
    """A stored trajectory as a proposer sees it; each blob is read once."""
    steps = list(
        Step.objects.filter(trajectory=trajectory)
        .select_related("screen__ui_xml", "screen__screenshot")
        .order_by("index")
    )
    screens = [s.screen for s in steps]
    final = trajectory.final_screen
    if final is not None:
        screens.append(final)
    elif screens:
        screens.append(screens[-1])
    else:
        raise InvalidData("trajectory: it has no steps to propose labels for")
    cache: dict[str, bytes] = {}

    def blob(b: Any) -> bytes | None:
        if b is None:
            return None
        if b.sha256 not in cache:
            cache[b.sha256] = read_blob(b)
        return cache[b.sha256]

    return Episode(
        goal=trajectory.task.goal,
        actions=[{"type": s.action_type, **s.action} for s in steps],
        screens=[
            ScreenView(s.package, s.activity, blob(s.ui_xml), s.visible_memory) for s in screens
        ],
        images=[blob(s.screenshot) for s in screens] if images else [],
    )
