"""Who sees a benchmark's gold: the one rule, and what it takes out of what others see.

A project with ``hide_gold`` keeps its gold from annotators and reviewers: its tasks' gold
answers, the memory variables the virtual device declares (their values, on each screen's
``visible_memory``), and any gold or variables in a trajectory's metadata are shown only to the
project's admins and to site admins. Everything else stays as it is: goals, memory item keys
and descriptions, the labels people write (memory targets, step memory), an agent's or a
recorder's own answer and whether it was graded right.

Every page, API answer, export and console action that could show gold asks this module:
:func:`can_see_gold` (or :func:`check_can_see_gold` to refuse), and the functions that strip a
task, a screen's variables or a trajectory's metadata for someone who may not see them.
"""

from __future__ import annotations

from typing import Any

from .access import AccessDenied, role_in
from .models import JobKind, Project, Role

# Export formats whose files carry gold answers or memory variable values (tests/trajectories/
# test_hidden_gold.py exports each format and checks that this set names exactly those).
GOLD_FORMATS = frozenset({"waypoint", "androtmem", "memory-world"})

# Keys of a trajectory's metadata (or of its ``virtual_device``) that would hold gold answers or
# the device's variables; a record imported from elsewhere may carry them.
GOLD_METADATA_KEYS = frozenset({"gold", "gold_answer", "expected_answer", "variables", "vars"})
# A variable on a screen (``Screen.visible_memory``): what it is stays, its value goes.
VARIABLE_VALUE_KEYS = ("value", "text")


def can_see_gold(user, project: Project) -> bool:
    """Whether ``user`` may see ``project``'s gold answers and memory variables: everyone may
    unless the project hides them; then its admins and site admins (staff) only."""
    if not project.hide_gold:
        return True
    if user is None or not user.is_authenticated:
        return False
    if user.is_superuser or user.is_staff:
        return True
    return role_in(project, user) == Role.ADMIN


def hidden_message(what: str) -> str:
    return f"this project hides gold answers: only its admins can {what}"


def check_can_see_gold(user, project: Project, what: str) -> None:
    """Refuse (403) what would show ``project``'s gold to a user who may not see it; ``what``
    completes "only its admins can ..." (e.g. "export memory-world (it carries them)")."""
    if not can_see_gold(user, project):
        raise AccessDenied(hidden_message(what))


def check_export_format(user, project: Project, fmt: str, verb: str = "export") -> None:
    """An export in a format that carries gold is for those who may see it."""
    if fmt in GOLD_FORMATS:
        check_can_see_gold(user, project, f"{verb} {fmt} (it carries them)")


def check_job_file(user, job, verb: str) -> None:
    """Downloading (or running again) an export job's file in a gold format is for those who
    may see the project's gold, whoever started the job."""
    if job.kind == JobKind.EXPORT:
        check_export_format(user, job.project, job.format, verb)


def task_data(data: dict[str, Any], visible: bool) -> dict[str, Any]:
    """A serialized task as a user sees it: without its gold answer (null) when hidden.
    Memory items name what must be remembered (key, description, where), never a value."""
    if visible:
        return data
    return {**data, "gold_answer": None}


def variables_data(items: Any, visible: bool) -> Any:
    """A screen's ``visible_memory`` (the device's variables it shows) without their values."""
    if visible or not isinstance(items, list):
        return items
    return [
        {k: v for k, v in item.items() if k not in VARIABLE_VALUE_KEYS}
        if isinstance(item, dict)
        else item
        for item in items
    ]


def instances_data(instances: Any, visible: bool) -> Any:
    """A run's or suite's task instances without the digests of their gold answers."""
    if visible or not isinstance(instances, list):
        return instances
    return [
        {k: v for k, v in item.items() if k != "gold_sha256"} if isinstance(item, dict) else item
        for item in instances
    ]


def metadata_data(metadata: Any, visible: bool) -> Any:
    """A trajectory's metadata without gold answers or variables, at its top level and in
    ``virtual_device`` (the seed and apps stay: they reproduce the environment, not its gold)."""
    if visible or not isinstance(metadata, dict):
        return metadata
    out = {k: v for k, v in metadata.items() if k not in GOLD_METADATA_KEYS}
    device = out.get("virtual_device")
    if isinstance(device, dict):
        out["virtual_device"] = {k: v for k, v in device.items() if k not in GOLD_METADATA_KEYS}
    return out


class GoldRule:
    """:func:`can_see_gold` for one user over the projects of one request, each asked once
    (a serializer of many tasks or screens asks it per object). A view that has the project
    or trajectory loaded tells it (:meth:`visible`, :meth:`knows`): no query is made then."""

    def __init__(self, user) -> None:
        self.user = user
        self._projects: dict[int, bool] = {}
        self._trajectories: dict[int, bool] = {}

    def visible(self, project: Project) -> bool:
        if project.pk not in self._projects:
            self._projects[project.pk] = can_see_gold(self.user, project)
        return self._projects[project.pk]

    def visible_in(self, project_id: int) -> bool:
        if project_id not in self._projects:
            return self.visible(Project.objects.get(pk=project_id))
        return self._projects[project_id]

    def knows(self, trajectory) -> GoldRule:
        """Remember ``trajectory`` (its project loaded) for :meth:`visible_in_trajectory`."""
        self._trajectories[trajectory.pk] = self.visible(trajectory.project)
        return self

    def visible_in_trajectory(self, trajectory_id: int) -> bool:
        if trajectory_id not in self._trajectories:
            project = Project.objects.get(trajectories=trajectory_id)
            self._trajectories[trajectory_id] = self.visible(project)
        return self._trajectories[trajectory_id]
