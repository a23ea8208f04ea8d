"""Permission-checked getters: an exploration is seen by its project's members."""

from __future__ import annotations

from django.http import Http404

from trajectories.access import projects_of

from .models import Exploration


def access_exploration(user, exploration_id) -> Exploration:
    try:
        return Exploration.objects.select_related("project", "graph", "job", "created_by").get(
            pk=exploration_id, project__in=projects_of(user)
        )
    except (Exploration.DoesNotExist, ValueError, TypeError, OverflowError):
        raise Http404("No such exploration") from None
