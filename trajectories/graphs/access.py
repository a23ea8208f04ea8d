"""Permission-checked getters for graphs: a graph is seen by its project's members."""

from __future__ import annotations

from django.http import Http404

from trajectories.access import projects_of

from .models import MemoryGraph


def access_memory_graph(user, graph_id) -> MemoryGraph:
    try:
        return MemoryGraph.objects.select_related("project", "job", "created_by", "parent").get(
            pk=graph_id, project__in=projects_of(user)
        )
    except (MemoryGraph.DoesNotExist, ValueError, TypeError):
        raise Http404("No such graph") from None
