"""Permission-checked getters for graphs: a graph is seen by its project's members."""

from __future__ import annotations

from django.http import Http404

from trajectories.access import projects_of

from .models import AppGraph, MemoryGraph


def access_memory_graph(user, graph_id) -> MemoryGraph:
    try:
        return MemoryGraph.objects.select_related("project", "job", "created_by", "parent").get(
            pk=graph_id, project__in=projects_of(user)
        )
    except (MemoryGraph.DoesNotExist, ValueError, TypeError):
        raise Http404("No such graph") from None


# What a retrieval reads of a graph: a query needs none of its related rows.
RETRIEVAL_FIELDS = ("id", "project_id", "version", "status", "params", "file", "created_at")


def access_graph_to_query(user, graph_id) -> MemoryGraph:
    """:func:`access_memory_graph` (the same rule, the same 404) with only the columns a
    retrieval reads, and no join."""
    try:
        return MemoryGraph.objects.only(*RETRIEVAL_FIELDS).get(
            pk=graph_id, project__in=projects_of(user)
        )
    except (MemoryGraph.DoesNotExist, ValueError, TypeError):
        raise Http404("No such graph") from None


def access_app_graph(user, graph_id) -> AppGraph:
    """An app knowledge graph of one of the user's projects; outsiders get a 404."""
    try:
        return AppGraph.objects.select_related("project", "job", "created_by").get(
            pk=graph_id, project__in=projects_of(user)
        )
    except (AppGraph.DoesNotExist, ValueError, TypeError, OverflowError):
        raise Http404("No such app graph") from None
