"""Permission-checked getters: every view and API endpoint fetches objects through these."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404

from config.prepared import Prepared

from .models import Blob, Job, Membership, Project, Role, Screen, Task, Trajectory


class AccessDenied(Exception):
    """The user may see the object but not do this to it."""


def projects_of(user) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user)


class Visible:
    """A prepared query (config/prepared.py) of what a user may see, for each kind of user:
    ``build(projects, user_id, **parameters)`` gets the projects the user sees (a member's,
    or every project for a site admin) and the user's id.

    Every page asks for its object through one of these first, so they cost a query run, not
    a query built.
    """

    def __init__(self, build: Callable[..., QuerySet], **parameters: type) -> None:
        self._member = Prepared(
            lambda user_id, **values: build(
                Project.objects.filter(memberships__user_id=user_id), user_id, **values
            ),
            user_id=int,
            **parameters,
        )
        self._admin = Prepared(
            lambda user_id, **values: build(Project.objects.all(), user_id, **values),
            user_id=int,
            **parameters,
        )

    def first(self, user, **values: Any) -> Any:
        """The first row the user may see, or None (for anyone signed out, too); a value that
        no id takes (``"x"``, ``None``, past 64 bits) raises ValueError or TypeError."""
        if not user.is_authenticated:
            return None
        query = self._admin if user.is_superuser else self._member
        return query.first(user_id=user.pk, **values)


_PROJECT = Visible(
    lambda projects, user_id, project_id: projects.filter(pk=project_id), project_id=int
)


_ROLE = Prepared(
    lambda project_id, user_id: Membership.objects.filter(
        project_id=project_id, user_id=user_id
    ).values_list("role", flat=True),
    project_id=int,
    user_id=int,
)


def role_in(project: Project, user) -> str | None:
    if user.is_superuser:
        return Role.ADMIN
    if not user.is_authenticated:
        return None
    return _ROLE.first(project_id=project.pk, user_id=user.pk)


def access_project(user, project_id, *, roles: tuple[str, ...] | None = None) -> Project:
    """The project if the user is a member (with one of ``roles``); outsiders get a 404."""
    project = found_or_404(_PROJECT, user, "No such project", project_id=project_id)
    if roles is not None and role_in(project, user) not in roles:
        raise AccessDenied(f"This needs one of the roles: {', '.join(roles)}")
    return project


def access_membership(project: Project, user_id) -> Membership:
    """A member of a project the caller may see (fetch it with :func:`access_project`)."""
    try:
        return project.memberships.select_related("user").get(user_id=user_id)
    except (Membership.DoesNotExist, ValueError, TypeError):
        raise Http404("No such member") from None


def trajectories_of(user) -> QuerySet[Trajectory]:
    return Trajectory.objects.filter(project__in=projects_of(user))


_TRAJECTORY = Visible(
    lambda projects, user_id, trajectory_id: Trajectory.objects.filter(
        project__in=projects, pk=trajectory_id
    ).select_related("project", "task", "recorded_by"),
    trajectory_id=int,
)


def access_trajectory(user, trajectory_id) -> Trajectory:
    """The trajectory if the user is a member of its project (outsiders get a 404), with its
    project, task and recorder."""
    return found_or_404(_TRAJECTORY, user, "No such trajectory", trajectory_id=trajectory_id)


def found_or_404(query: Visible, user, missing: str, **values: Any) -> Any:
    """What ``query`` finds for the user, or a 404 saying ``missing`` (outsiders included)."""
    try:
        found = query.first(user, **values)
    except (ValueError, TypeError):
        found = None
    if found is None:
        raise Http404(missing)
    return found


def access_job(user, job_id) -> Job:
    try:
        return Job.objects.select_related("project").get(pk=job_id, project__in=projects_of(user))
    except (Job.DoesNotExist, ValueError, TypeError):
        raise Http404("No such job") from None


def access_task(user, task_id) -> Task:
    try:
        return Task.objects.select_related("project").get(pk=task_id, project__in=projects_of(user))
    except (Task.DoesNotExist, ValueError, TypeError):
        raise Http404("No such task") from None


def access_blob(user, sha256: str) -> Blob:
    """A blob shown on a screen of one of the user's projects, in one query."""
    shown_to_user = Screen.objects.filter(
        Q(screenshot=OuterRef("pk")) | Q(ui_xml=OuterRef("pk")),
        trajectory__project__in=projects_of(user),
    )
    found = Blob.objects.filter(pk=sha256).filter(Exists(shown_to_user)).first()
    if found is None:
        raise Http404("No such blob")
    return found
