"""Permission-checked getters: a generation and its environments are seen by the members of
its project."""

from __future__ import annotations

from django.http import Http404

from trajectories.access import projects_of

from .models import Generation


def access_generation(user, generation_id) -> Generation:
    try:
        return Generation.objects.select_related("project", "job", "created_by").get(
            pk=generation_id, project__in=projects_of(user)
        )
    except (Generation.DoesNotExist, ValueError, TypeError, OverflowError):
        raise Http404("No such generation") from None
