"""HTML pages of graphs: a project's graphs (build forms, versions with job progress), the
graph drawn (nodes with a member screen, edges coloured by success), its node and edge panels,
and retrieval from a screenshot.

Every view fetches through an ``access_*`` helper; the drawing is laid out on the server
(``drawing.py``) and the page's script only pans, zooms, filters and asks for panels.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from ..access import access_project
from ..jobs import with_true_status
from ..models import Project, Role, Screen, Status, Trajectory
from ..validation import InvalidData
from .appkg import AppKnowledgeGraph, load_app_graph
from .appkg_jobs import access_app_graph, app_graph_document, do_start_app_graph
from .drawing import DrawEdge, DrawNode, draw
from .models import AppGraph

BUILD_ROLES = (Role.ADMIN, Role.REVIEWER, Role.ANNOTATOR)
PANEL_SCREENS = 24
APP_MARKERS = ("kind-transition", "kind-self")
MEMORY_MARKERS = (
    "success-yes",
    "success-no",
    "success-uncertain",
)  # member screens shown in a node's panel


def project_apps(project: Project) -> list[str]:
    """The apps the project's screens show, for the app graph form."""
    packages = (
        Screen.objects.filter(trajectory__project=project)
        .exclude(package="")
        .order_by("package")
        .values_list("package", flat=True)
        .distinct()
    )
    return list(packages)


class FilterFields(forms.Form):
    """Which trajectories a build takes: the list filters ``apps``, ``tasks`` and ``status``."""

    apps = forms.CharField(required=False, help_text="Package names, separated by commas.")
    tasks = forms.MultipleChoiceField(
        required=False, widget=forms.SelectMultiple(attrs={"size": 4})
    )
    approved_only = forms.BooleanField(required=False, label="Approved trajectories only")

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        tasks = project.tasks.order_by("goal").values_list("uid", "goal")[:500]
        self.fields["tasks"].choices = [
            (uid, goal if len(goal) <= 70 else goal[:69] + "…") for uid, goal in tasks
        ]

    def filters(self) -> dict[str, Any]:
        data = self.cleaned_data
        filters: dict[str, Any] = {}
        if data.get("apps", "").strip():
            filters["apps"] = data["apps"]
        if data["tasks"]:
            filters["tasks"] = list(data["tasks"])
        if data["approved_only"]:
            filters["status"] = Status.APPROVED
        return filters


class AppGraphForm(FilterFields):
    app = forms.ChoiceField(label="App")
    structure_threshold = forms.FloatField(
        initial=0.8, min_value=0, max_value=1, label="Structure similarity to merge"
    )
    look_threshold = forms.FloatField(
        initial=0.7, min_value=0, max_value=1, label="Look similarity to merge"
    )
    use_activity = forms.BooleanField(
        required=False, initial=True, label="Screens of different activities are different states"
    )

    def __init__(self, *args, project: Project, apps: list[str], **kwargs) -> None:
        super().__init__(*args, project=project, **kwargs)
        self.fields["app"].choices = [(a, a) for a in apps]
        del self.fields["apps"]  # the graph is of one app

    def params(self) -> dict[str, Any]:
        return {
            name: self.cleaned_data[name]
            for name in ("structure_threshold", "look_threshold", "use_activity")
        }


# ---------------------------------------------------------------------------- project page


def _graphs_context(project: Project, **extra: Any) -> dict[str, Any]:
    app_graphs = list(
        AppGraph.objects.filter(project=project).select_related("job", "created_by")[:50]
    )
    for graph in app_graphs:
        if graph.job is not None:
            graph.job = with_true_status(graph.job)
    building = any(g.job is not None and not g.job.is_finished for g in app_graphs)
    return {"project": project, "app_graphs": app_graphs, "building": building, **extra}


@login_required
@require_http_methods(["GET", "POST"])
def project_graphs(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id)
    apps = project_apps(project)
    kind = request.POST.get("kind") if request.method == "POST" else None
    app_form = AppGraphForm(
        request.POST if kind == "app" else None, project=project, apps=apps, prefix="app"
    )
    if kind == "app":
        access_project(request.user, project_id, roles=BUILD_ROLES)
        if app_form.is_valid():
            try:
                do_start_app_graph(
                    project,
                    app_form.cleaned_data["app"],
                    request.user,
                    app_form.params(),
                    app_form.filters(),
                )
            except InvalidData as exc:
                app_form.add_error(None, str(exc))
            else:
                return redirect("project-graphs", project.pk)
    context = _graphs_context(project, app_form=app_form, apps=apps)
    if request.htmx and request.htmx.target == "graph-versions":
        return render(request, "graphs/_versions.html", context)
    return render(request, "graphs/project_graphs.html", context)


# ---------------------------------------------------------------------------- app graph view


def _load_app_graph(graph: AppGraph) -> AppKnowledgeGraph:
    try:
        return load_app_graph(app_graph_document(graph))
    except InvalidData:
        raise Http404(f"app graph v{graph.version} of {graph.app} is not ready") from None


def _app_drawing(loaded: AppKnowledgeGraph):
    nodes = [
        DrawNode(
            id=n.id,
            label=n.description,
            size=max(1, len(n.members)),
            thumb=n.reference,
            app=n.package,
            kind=n.kind,
        )
        for n in loaded.nodes
    ]
    edges = [
        DrawEdge(
            id=e.id,
            source=e.source,
            target=e.target,
            label=e.instruction or e.action_type,
            kind="self" if e.self_loop else "transition",
            count=len(e.occurrences),
        )
        for e in loaded.edges
    ]
    return draw(nodes, edges)


@login_required
@require_GET
def app_graph_view(request: HttpRequest, graph_id: int) -> HttpResponse:
    graph = access_app_graph(request.user, graph_id)
    loaded = _load_app_graph(graph)
    context = {
        "project": graph.project,
        "graph": graph,
        "drawing": _app_drawing(loaded),
        "kind": "app",
        "markers": APP_MARKERS,
    }
    return render(request, "graphs/graph_view.html", context)


def _trajectory_ids(project: Project, keys: set[str]) -> dict[str, int]:
    """Trajectory keys (uids) of a graph → ids in the project, for links."""
    valid = set()
    for key in keys:
        try:
            valid.add(str(Trajectory._meta.get_field("uid").to_python(key)))
        except Exception:  # noqa: BLE001 - an imported graph may name anything; no link then
            continue
    found = Trajectory.objects.filter(project=project, uid__in=valid).values_list("uid", "pk")
    return {str(uid): pk for uid, pk in found}


@login_required
@require_GET
def app_graph_node(request: HttpRequest, graph_id: int, node_id: str) -> HttpResponse:
    graph = access_app_graph(request.user, graph_id)
    loaded = _load_app_graph(graph)
    try:
        node = loaded.node(node_id)
    except KeyError:
        raise Http404("No such node") from None
    members = node.members[:PANEL_SCREENS]
    ids = _trajectory_ids(graph.project, {m.trajectory for m in members})
    outgoing = [e for e in loaded.edges if e.source == node.id]
    names = {n.id: n.description for n in loaded.nodes}
    context = {
        "graph": graph,
        "node": node,
        "members": [(m, ids.get(m.trajectory)) for m in members],
        "more_members": len(node.members) - len(members),
        "outgoing": [(e, names.get(e.target, e.target)) for e in outgoing],
    }
    return render(request, "graphs/_app_node_panel.html", context)


@login_required
@require_GET
def app_graph_edge(request: HttpRequest, graph_id: int, edge_id: str) -> HttpResponse:
    graph = access_app_graph(request.user, graph_id)
    loaded = _load_app_graph(graph)
    edge = next((e for e in loaded.edges if e.id == edge_id), None)
    if edge is None:
        raise Http404("No such edge")
    ids = _trajectory_ids(graph.project, {o.trajectory for o in edge.occurrences})
    names = {n.id: n.description for n in loaded.nodes}
    context = {
        "graph": graph,
        "edge": edge,
        "source": names.get(edge.source, edge.source),
        "target": names.get(edge.target, edge.target),
        "occurrences": [(o, ids.get(o.trajectory)) for o in edge.occurrences[:50]],
        "more": max(0, len(edge.occurrences) - 50),
    }
    return render(request, "graphs/_app_edge_panel.html", context)
