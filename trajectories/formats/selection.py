"""Which trajectories an export holds: the export filter, checked before a job is queued.

Kept in one function so the export job, the export page, the API and the command line agree
(and so it can later be pointed at a shared trajectory selector).
"""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any

from django.db.models import Q, QuerySet

from ..models import AuditEvent, Outcome, Screen, Source, Status, Task, Trajectory
from ..validation import InvalidData

EXPORT_FILTERS = (
    "status",
    "outcome",
    "source",
    "task",
    "tasks",
    "apps",
    "recorded_from",
    "recorded_to",
    "annotator",
    "trajectories",
)
CHOICES = {"status": Status, "outcome": Outcome, "source": Source}
LISTS = ("tasks", "apps", "trajectories")


def _as_list(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        value = [part.strip() for part in value.replace("\n", ",").split(",")]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidData(f"filters.{name}: must be a list of strings")
    return [v for v in value if v]


def check_export_filters(filters: dict[str, Any] | None) -> dict[str, Any]:
    """The filters with empty values dropped; an unknown name or a bad value is refused."""
    filters = {k: v for k, v in (filters or {}).items() if v not in (None, "", [])}
    unknown = set(filters) - set(EXPORT_FILTERS)
    if unknown:
        raise InvalidData(
            f"filters: unknown filter {sorted(unknown)[0]!r} (known: {', '.join(EXPORT_FILTERS)})"
        )
    checked: dict[str, Any] = {}
    for name, value in filters.items():
        if name in CHOICES:
            if value not in CHOICES[name].values:
                known = ", ".join(CHOICES[name].values)
                raise InvalidData(f"filters.{name}: {value!r} is not one of {known}")
            checked[name] = value
        elif name in LISTS:
            values = _as_list(value, name)
            if name == "trajectories":
                for item in values:
                    try:
                        uuid.UUID(item)
                    except ValueError:
                        raise InvalidData(
                            f"filters.trajectories: {item!r} is not a trajectory id"
                        ) from None
            if values:
                checked[name] = values
        elif name in ("recorded_from", "recorded_to"):
            try:
                checked[name] = date.fromisoformat(str(value)).isoformat()
            except ValueError:
                raise InvalidData(f"filters.{name}: {value!r} is not a date (YYYY-MM-DD)") from None
        else:
            if not isinstance(value, str):
                raise InvalidData(f"filters.{name}: must be a string")
            checked[name] = value
    if (
        "recorded_from" in checked
        and "recorded_to" in checked
        and checked["recorded_from"] > checked["recorded_to"]
    ):
        raise InvalidData("filters: recorded_from is after recorded_to")
    return checked


def select_for_export(
    trajectories: QuerySet[Trajectory], filters: dict[str, Any]
) -> QuerySet[Trajectory]:
    """The trajectories that pass the (checked) filters."""
    for name in CHOICES:
        if name in filters:
            trajectories = trajectories.filter(**{name: filters[name]})
    if "task" in filters:
        trajectories = trajectories.filter(task__uid=filters["task"])
    if "tasks" in filters:
        trajectories = trajectories.filter(task__uid__in=filters["tasks"])
    if "apps" in filters:
        # A task's apps are a JSON list (not searchable on every database): the project's
        # tasks are few, so they are matched here; a screen's package is matched in SQL.
        wanted = set(filters["apps"])
        tasks = Task.objects.filter(pk__in=trajectories.values("task_id")).values_list("pk", "apps")
        task_ids = [pk for pk, apps in tasks if wanted & set(apps or [])]
        on_screen = Screen.objects.filter(package__in=wanted).values("trajectory_id")
        trajectories = trajectories.filter(Q(task_id__in=task_ids) | Q(pk__in=on_screen))
    if "recorded_from" in filters:
        trajectories = trajectories.filter(recorded_at__date__gte=filters["recorded_from"])
    if "recorded_to" in filters:
        trajectories = trajectories.filter(recorded_at__date__lte=filters["recorded_to"])
    if "annotator" in filters:
        name = filters["annotator"]
        labelled = AuditEvent.objects.filter(actor__username=name, trajectory__isnull=False)
        trajectories = trajectories.filter(
            Q(recorded_by__username=name)
            | Q(recorder_name=name)
            | Q(pk__in=labelled.values("trajectory_id"))
        )
    if "trajectories" in filters:
        trajectories = trajectories.filter(uid__in=filters["trajectories"])
    return trajectories
