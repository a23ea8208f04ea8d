"""Permission-checked getters: a run or a suite is seen by its project's members."""

from __future__ import annotations

from django.http import Http404

from trajectories.access import projects_of

from .models import Run, Suite


def access_run(user, run_id) -> Run:
    try:
        return Run.objects.select_related("project", "job", "created_by", "suite").get(
            pk=run_id, project__in=projects_of(user)
        )
    except (Run.DoesNotExist, ValueError, TypeError, OverflowError):
        raise Http404("No such run") from None


def access_suite(user, project_id, name: str, version: str) -> Suite:
    try:
        return Suite.objects.select_related("project").get(
            project_id=project_id, project__in=projects_of(user), name=name, version=version
        )
    except (Suite.DoesNotExist, ValueError, TypeError, OverflowError):
        raise Http404("No such suite") from None
