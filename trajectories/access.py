"""Permission-checked getters: every view and API endpoint fetches objects through these."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404

from .models import Blob, Job, Membership, Project, Role, Screen, Task, Trajectory


class AccessDenied(Exception):
    """The user may see the object but not do this to it."""


def projects_of(user) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user)


def role_in(project: Project, user) -> str | None:
    if user.is_superuser:
        return Role.ADMIN
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()
    )


def access_project(user, project_id, *, roles: tuple[str, ...] | None = None) -> Project:
    """The project if the user is a member (with one of ``roles``); outsiders get a 404."""
    try:
        project = projects_of(user).get(pk=project_id)
    except (Project.DoesNotExist, ValueError, TypeError):
        raise Http404("No such project") from None
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


def access_trajectory(user, trajectory_id) -> Trajectory:
    """The trajectory if the user is a member of its project (outsiders get a 404), with its
    project, task and recorder."""
    try:
        return (
            trajectories_of(user)
            .select_related("project", "task", "recorded_by")
            .get(pk=trajectory_id)
        )
    except (Trajectory.DoesNotExist, ValueError, TypeError):
        raise Http404("No such trajectory") from None


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
