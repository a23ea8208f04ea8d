"""Reading trajectories: the one place their list filters are written.

The project's list page, the REST API's list and the export job all select trajectories with
:func:`trajectory_list`, so a filter means the same everywhere and a bad value gets the same
error everywhere.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from .access import projects_of
from .models import (
    ActionType,
    AuditEvent,
    Outcome,
    Project,
    Screen,
    Source,
    Status,
    Step,
    Trajectory,
)
from .validation import InvalidData, InvalidRequest, check_choice, shown

# What a list can be filtered by: name -> what it means.
TRAJECTORY_FILTERS = {
    "status": "the trajectory's status",
    "outcome": "the trajectory's outcome",
    "source": "how it was made (recorded, imported, generated)",
    "task": "a task uid",
    "tasks": "task uids (a list, or names separated by commas)",
    "recorder": "the recorder's username or recorded name",
    "app": "an app: part of its package or label, named by the task or shown on a screen",
    "apps": "apps (a list, or names separated by commas): any of them, each as ``app``",
    "recorded_from": "recorded on or after this date (YYYY-MM-DD)",
    "recorded_to": "recorded on or before this date (YYYY-MM-DD)",
    "annotator": "a username that recorded or labelled it",
    "trajectories": "trajectory ids (a list, or ids separated by commas)",
    "task_id": "a task's id (picked in the list page's task search)",
    "task_goal": "text in the task's goal (typed in the list page's task search)",
}
PAGE_ONLY = ("task_id", "task_goal")
# Labelled and handed on: in review or decided.
ANNOTATED = (Status.IN_REVIEW, Status.APPROVED, Status.REJECTED)  # not offered by the API
CHOICES = {"status": Status.values, "outcome": Outcome.values, "source": Source.values}
LISTS = ("tasks", "apps", "trajectories")
DATES = ("recorded_from", "recorded_to")


def _check_list(name: str, value: Any) -> list[str]:
    """A list filter's values: a list of strings, or one string of comma-separated names."""
    listed = not isinstance(value, str)
    if isinstance(value, str):
        value = [part.strip() for part in value.replace("\n", ",").split(",")]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidRequest(f"filters.{name}: must be a list of strings")
    # Empty parts of names typed with commas are no names; an empty id in a list is a
    # mistake that, dropped, would leave no filter and take every trajectory.
    values = value if listed and name == "trajectories" else [v for v in value if v]
    if name == "trajectories":
        for item in values:
            try:
                uuid.UUID(item)
            except ValueError:
                raise InvalidRequest(
                    f"filters.trajectories: {shown(item)} is not a trajectory id"
                ) from None
    return values


def check_trajectory_filters(filters: Mapping[str, Any] | None) -> dict[str, Any]:
    """The filters that are set, each checked; an unknown name or value is a malformed request
    (:class:`InvalidRequest`: a 400 in the API)."""
    # Unset: null, "", and an empty list where a list is meant; [] for a name or a date is a
    # value of the wrong type, refused below like any other.
    given = {
        k: v
        for k, v in (filters or {}).items()
        if v is not None and v != "" and not (v == [] and k in LISTS)
    }
    unknown = sorted(set(given) - set(TRAJECTORY_FILTERS))
    if unknown:
        known = ", ".join(name for name in TRAJECTORY_FILTERS if name not in PAGE_ONLY)
        raise InvalidRequest(f"filters: unknown filter {unknown[0]!r} (known: {known})")
    for name, choices in CHOICES.items():
        if name in given:
            try:
                check_choice(given[name], choices, name)
            except InvalidData as exc:
                raise InvalidRequest(str(exc)) from None
    for name in ("task", "recorder", "app", "annotator", "task_goal"):
        if name in given and not isinstance(given[name], str):
            raise InvalidRequest(f"{name}: must be a string, got {given[name]!r}")
    for name in LISTS:
        if name in given:
            given[name] = _check_list(name, given[name])
            if not given[name]:
                del given[name]
    for name in DATES:
        if name in given:
            try:
                given[name] = date.fromisoformat(str(given[name])).isoformat()
            except ValueError:
                raise InvalidRequest(
                    f"filters.{name}: {shown(given[name])} is not a date (YYYY-MM-DD)"
                ) from None
    if given.get("recorded_from", "") > given.get("recorded_to", "9999"):
        raise InvalidData("filters: recorded_from is after recorded_to")  # well-formed: 422
    return given


def _recorded_by(name: str) -> Q:
    """Trajectories recorded by the user of that name, or imported under that recorder name."""
    return Q(recorded_by__username=name) | Q(recorder_name=name)


def app_filter(app: str) -> Q:
    """Trajectories of an app named in part, by package or label, case aside: ``shopmate``
    finds ``com.waypoint.shopmate``, ``fresh`` the app opened as "FreshCart". Matched in the
    task's apps, the screens' packages and the labels of apps the steps opened."""
    # JSON punctuation in the typed text would match the list's syntax, not a name.
    text = app.strip().strip('"[],')
    if not text:
        return Q(pk__in=[])
    on_screen = Exists(Screen.objects.filter(trajectory=OuterRef("pk"), package__icontains=text))
    opened = Exists(
        Step.objects.filter(
            trajectory=OuterRef("pk"),
            action_type=ActionType.OPEN_APP,
            action__app_label__icontains=text,
        )
    )
    # The task's apps as JSON text: a part of a package is a part of that text.
    return Q(task__apps__icontains=text) | on_screen | opened


# How a list can be sorted: key -> the fields, ascending; ``-key`` reverses. Every ordering
# ends with the id, so pages of equal values never overlap.
TRAJECTORY_SORTS = {
    "created": ("created_at",),
    "recorded": ("recorded_at",),
    "goal": ("task__goal",),
    "steps": ("step_count",),
    "status": ("status",),
    "outcome": ("outcome",),
    "source": ("source",),
    "recorder": ("recorder_name", "recorded_by__username"),
}
DEFAULT_TRAJECTORY_SORT = "-created"


def check_sort(sort: Any, sorts: Mapping[str, tuple[str, ...]]) -> tuple[str, bool]:
    """(key, descending) of a sort such as ``goal`` or ``-steps``; anything else is a
    malformed request (a 400)."""
    if not isinstance(sort, str):
        raise InvalidRequest(f"sort: must be a string, got {sort!r}")
    key = sort.strip().removeprefix("-")
    if key not in sorts:
        known = ", ".join(sorts)
        raise InvalidRequest(
            f"sort: unknown sort key {sort.strip()!r} (known: {known}; prefix - to reverse)"
        )
    return key, sort.strip().startswith("-")


def sorted_by(queryset: QuerySet, sort: Any, sorts: Mapping[str, tuple[str, ...]]) -> QuerySet:
    key, descending = check_sort(sort, sorts)
    fields = [*sorts[key], "id"]
    if descending:
        return queryset.order_by(*(F(f).desc(nulls_last=True) for f in fields))
    return queryset.order_by(*(F(f).asc(nulls_last=True) for f in fields))


def trajectory_list(
    user,
    project: Project,
    filters: Mapping[str, Any] | None = None,
    sort: str | None = None,
) -> QuerySet[Trajectory]:
    """The project's trajectories (not double-annotation copies) that ``user`` may see,
    filtered, sorted by a key of :data:`TRAJECTORY_SORTS` (newest first when none is given).
    ``user`` None is the system (an export job already checked)."""
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
        trajectories = trajectories.filter(_recorded_by(filters["recorder"]))
    if "app" in filters:
        trajectories = trajectories.filter(app_filter(filters["app"]))
    if "tasks" in filters:
        trajectories = trajectories.filter(task__uid__in=filters["tasks"])
    if "apps" in filters:
        any_app = Q()
        for package in filters["apps"]:
            any_app |= app_filter(package)
        trajectories = trajectories.filter(any_app)
    if "recorded_from" in filters:
        trajectories = trajectories.filter(recorded_at__date__gte=filters["recorded_from"])
    if "recorded_to" in filters:
        trajectories = trajectories.filter(recorded_at__date__lte=filters["recorded_to"])
    if "annotator" in filters:
        name = filters["annotator"]
        labelled = AuditEvent.objects.filter(actor__username=name, trajectory__isnull=False)
        trajectories = trajectories.filter(
            _recorded_by(name) | Q(pk__in=labelled.values("trajectory_id"))
        )
    if "trajectories" in filters:
        trajectories = trajectories.filter(uid__in=filters["trajectories"])
    if sort in (None, "", DEFAULT_TRAJECTORY_SORT):
        # The common case reads the list index in order (trajectory_list_order).
        return trajectories.order_by("-created_at", "-id")
    return sorted_by(trajectories, sort, TRAJECTORY_SORTS)


# What a row of the trajectory list shows, on the page and in the API (TrajectorySerializer):
# the rest (metadata, the task's apps and memory items, the recorder's password hash) is not
# read, which saves a sixth of the API list's CPU (bench/bench_load.py).
LIST_ROW_FIELDS = (
    *("id", "uid", "project", "source", "status", "outcome", "step_count", "device_model"),
    *("recorder_name", "recorded_at", "created_at", "updated_at", "version"),
    *("task", "task__id", "task__uid", "task__goal", "recorded_by", "recorded_by__username"),
)


def list_rows(trajectories: QuerySet[Trajectory]) -> QuerySet[Trajectory]:
    """``trajectories`` with the task and recorder of each, reading only :data:`LIST_ROW_FIELDS`."""
    return trajectories.select_related("task", "recorded_by").only(*LIST_ROW_FIELDS)


@dataclass
class StatusShare:
    status: str
    label: str
    count: int
    percent: float


def status_shares(counts: dict[str, int]) -> list[StatusShare]:
    """The statuses present, in workflow order, with their share of the total."""
    total = sum(counts.values())
    return [
        StatusShare(value, label, counts[value], 100 * counts[value] / total)
        for value, label in Status.choices
        if counts.get(value)
    ]


def status_counts(project: Project) -> dict[str, int]:
    """How many of the project's trajectories (originals) are in each status; one query."""
    return dict(
        Trajectory.objects.filter(project=project)
        .originals()
        .order_by()
        .values_list("status")
        .annotate(n=Count("pk"))
    )


# ---------------------------------------------------------------------------- projects

PROJECT_SORTS = {
    "name": ("name",),
    "trajectories": ("trajectory_count",),
    "created": ("created_at",),
}
DEFAULT_PROJECT_SORT = "name"


def search_projects(
    projects: QuerySet[Project], search: Any = "", sort: Any = None
) -> QuerySet[Project]:
    """``projects`` (annotated with ``trajectory_count``) whose name or description contains
    ``search``, sorted by a key of :data:`PROJECT_SORTS` (by name when none is given)."""
    if not isinstance(search, str):
        raise InvalidRequest(f"search: must be a string, got {search!r}")
    search = search.strip()
    if search:
        projects = projects.filter(Q(name__icontains=search) | Q(description__icontains=search))
    return sorted_by(projects, sort or DEFAULT_PROJECT_SORT, PROJECT_SORTS)


def project_list(user, search: Any = "", sort: Any = None) -> QuerySet[Project]:
    """The projects ``user`` belongs to, with their ``trajectory_count``, searched and sorted
    as :func:`search_projects` does."""
    counted = (
        Trajectory.objects.filter(project=OuterRef("pk"))
        .order_by()
        .values("project")
        .annotate(n=Count("pk"))
        .values("n")
    )
    projects = projects_of(user).annotate(
        trajectory_count=Coalesce(Subquery(counted, output_field=IntegerField()), 0)
    )
    return search_projects(projects, search, sort)


# What a step shows (the workspace, the labels API), and of its screen what the page draws:
# never the screens' features or the timings.
STEP_ROW_FIELDS = (
    *("index", "action_type", "action", "target"),
    *("thought", "summary", "memory", "trainable"),  # its labels
)
STEP_SCREEN_FIELDS = {
    "width": "screen__width",
    "height": "screen__height",
    "screenshot_id": "screen__screenshot",
    "ui_xml_id": "screen__ui_xml",
    "ui_xml_type": "screen__ui_xml__content_type",
}


def step_rows(trajectory: Trajectory) -> list[dict[str, Any]]:
    """The trajectory's steps by index, as rows of :data:`STEP_ROW_FIELDS` and
    :data:`STEP_SCREEN_FIELDS` (with the type of their UI XML), in one query."""
    steps = Step.objects.filter(trajectory_id=trajectory.pk).order_by("index")
    return list(steps.values(*STEP_ROW_FIELDS, **{k: F(v) for k, v in STEP_SCREEN_FIELDS.items()}))
