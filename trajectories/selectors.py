"""Reading trajectories: the one place their list filters are written.

The project's list page, the REST API's list and the export job all select trajectories with
:func:`trajectory_list`, so a filter means the same everywhere and a bad value gets the same
error everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet

from .access import projects_of
from .models import Outcome, Project, Screen, Source, Status, Trajectory
from .validation import InvalidData, check_choice

# What a list can be filtered by: name -> what it means.
TRAJECTORY_FILTERS = {
    "status": "the trajectory's status",
    "outcome": "the trajectory's outcome",
    "task": "a task uid",
    "source": "how it was made (recorded, imported, generated)",
    "recorder": "the recorder's username or recorded name",
    "app": "an app package: named by the task or shown on a screen",
    "task_id": "a task's id (picked in the list page's task search)",
    "task_goal": "text in the task's goal (typed in the list page's task search)",
}
PAGE_ONLY = ("task_id", "task_goal")  # not offered by the API
CHOICES = {"status": Status.values, "outcome": Outcome.values, "source": Source.values}


def check_trajectory_filters(filters: Mapping[str, Any] | None) -> dict[str, Any]:
    """The filters that are set, each checked; an unknown name or value is an error."""
    given = {k: v for k, v in (filters or {}).items() if v not in (None, "")}
    unknown = sorted(set(given) - set(TRAJECTORY_FILTERS))
    if unknown:
        known = ", ".join(name for name in TRAJECTORY_FILTERS if name not in PAGE_ONLY)
        raise InvalidData(f"filters: unknown filter {unknown[0]!r} (known: {known})")
    for name, choices in CHOICES.items():
        if name in given:
            check_choice(given[name], choices, name)
    for name in ("task", "recorder", "app", "task_goal"):
        if name in given and not isinstance(given[name], str):
            raise InvalidData(f"{name}: must be a string, got {given[name]!r}")
    return given


def app_filter(package: str) -> Q:
    """Trajectories whose task names the app, or with a screen in it."""
    on_screen = Exists(Screen.objects.filter(trajectory=OuterRef("pk"), package=package))
    if connection.features.supports_json_field_contains:
        in_task = Q(task__apps__contains=[package])
    else:
        # SQLite has no JSON containment: match the quoted name in the list's JSON text.
        in_task = Q(task__apps__icontains=f'"{package}"')
    return in_task | on_screen


def trajectory_list(
    user, project: Project, filters: Mapping[str, Any] | None = None
) -> QuerySet[Trajectory]:
    """The project's trajectories (not double-annotation copies) that ``user`` may see,
    filtered, newest first. ``user`` None is the system (an export job already checked)."""
    filters = check_trajectory_filters(filters)
    trajectories = Trajectory.objects.filter(project=project).originals()
    if user is not None:
        trajectories = trajectories.filter(project__in=projects_of(user))
    for name in CHOICES:
        if name in filters:
            trajectories = trajectories.filter(**{name: filters[name]})
    if "task" in filters:
        trajectories = trajectories.filter(task__uid=filters["task"])
    if "task_id" in filters:
        trajectories = trajectories.filter(task_id=filters["task_id"])
    if "task_goal" in filters:
        trajectories = trajectories.filter(task__goal__icontains=filters["task_goal"])
    if "recorder" in filters:
        recorder = filters["recorder"]
        trajectories = trajectories.filter(
            Q(recorded_by__username=recorder) | Q(recorder_name=recorder)
        )
    if "app" in filters:
        trajectories = trajectories.filter(app_filter(filters["app"].strip()))
    return trajectories.order_by("-created_at", "-id")
