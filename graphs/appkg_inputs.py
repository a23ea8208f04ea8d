"""A project's trajectories as the app knowledge graph builder's input."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from django.db.models import Prefetch, QuerySet

from trajectories.blobs import read_blob
from trajectories.models import Project, Screen, Step, Trajectory
from trajectories.selectors import app_filter, trajectory_list
from trajectories.validation import InvalidData

from .appkg import ScreenInput, StepInput, TrajectoryInput


def app_trajectories(
    project: Project, app: str, filters: Mapping[str, Any] | None = None
) -> QuerySet[Trajectory]:
    """The project's trajectories (with the list filters) that show a screen of ``app``."""
    if not app:
        raise InvalidData("app: name the app (package) to build the graph of")
    return (
        trajectory_list(None, project, dict(filters or {}))
        .filter(app_filter(app))
        .order_by("created_at", "id")
    )


def read_trajectory_inputs(
    trajectories: QuerySet[Trajectory], app: str
) -> Iterator[TrajectoryInput]:
    """Each trajectory's screens in step order (the final one last) and its steps.

    Only screens of ``app`` need their screenshot and XML read; the others only say where a
    step went. A screenshot shared by several screens is read once per trajectory batch.
    """
    steps = Prefetch(
        "steps", queryset=Step.objects.select_related("screen__screenshot", "screen__ui_xml")
    )
    cache: dict[str, tuple[bytes, bytes | None]] = {}
    for trajectory in trajectories.select_related(
        "final_screen__screenshot", "final_screen__ui_xml"
    ).prefetch_related(steps):
        ordered = sorted(trajectory.steps.all(), key=lambda s: s.index)
        screens = [s.screen for s in ordered]
        if trajectory.final_screen is not None:
            screens.append(trajectory.final_screen)
        yield TrajectoryInput(
            key=str(trajectory.uid),
            screens=[_screen_input(s, app, cache) for s in screens],
            steps=[
                StepInput(
                    index=i,
                    action_type=s.action_type,
                    action=s.action,
                    target=s.target,
                    summary=s.summary,
                )
                for i, s in enumerate(ordered)
            ],
        )


def _screen_input(
    screen: Screen, app: str, cache: dict[str, tuple[bytes, bytes | None]]
) -> ScreenInput:
    sha = screen.screenshot_id
    if screen.package and screen.package != app:
        # Another app's screen is not placed in this graph; its look is never needed.
        nothing = np.zeros(0, dtype=np.float32)
        return ScreenInput(
            sha256=sha, package=screen.package, activity=screen.activity, look=nothing
        )
    key = f"{sha}:{screen.ui_xml_id or ''}"
    if key not in cache:
        xml = read_blob(screen.ui_xml) if screen.ui_xml_id else None
        cache[key] = (read_blob(screen.screenshot), xml)
        if len(cache) > 512:
            cache.pop(next(iter(cache)))
    screenshot, xml = cache[key]
    return ScreenInput(
        sha256=sha,
        package=screen.package,
        activity=screen.activity,
        ui_xml=xml,
        screenshot=screenshot,
    )
