"""HTML pages of graphs: a project's graphs (build forms, versions with job progress), the
graph drawn (nodes with a member screen, edges coloured by success), its node and edge panels,
and retrieval from a screenshot.

Every view fetches through an ``access_*`` helper; the drawing is laid out on the server
(``drawing.py``) and the page's script only pans, zooms, filters and asks for panels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from trajectories.access import access_project
from trajectories.bounds import read_upload
from trajectories.jobs import with_true_status
from trajectories.models import Project, Role, Screen, Status, Trajectory
from trajectories.validation import InvalidData
from trajectories.views import task_choices

from . import drawing
from .access import access_app_graph, access_memory_graph
from .appkg import AppKnowledgeGraph, load_app_graph
from .appkg_jobs import app_graph_document, do_start_app_graph
from .build import DEFAULT_PARAMS, GRANULARITIES, MAX_K, STRUCTURES, MemoryGraphData
from .drawing import DrawEdge, DrawNode, draw
from .embedders import EMBEDDERS
from .index import load_graph
from .models import AppGraph, GraphStatus, MemoryGraph
from .services import do_build_memory_graph, retrieve_for_screen

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

    apps = forms.CharField(
        required=False, help_text="Apps by part of a package or label, separated by commas."
    )
    tasks = forms.MultipleChoiceField(
        required=False, widget=forms.SelectMultiple(attrs={"size": 4})
    )
    approved_only = forms.BooleanField(required=False, label="Approved trajectories only")

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["tasks"].choices = task_choices(project, width=56, limit=500)

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
        initial=0.5, min_value=0, max_value=1, label="Look similarity to merge"
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


class MemoryGraphForm(FilterFields):
    """The paper's parameters (§3.2, §4) and the ablations as options."""

    tau = forms.FloatField(
        initial=DEFAULT_PARAMS["tau"], min_value=0, max_value=1, label="τ (merge screens)"
    )
    theta = forms.FloatField(
        initial=DEFAULT_PARAMS["theta"], min_value=0, max_value=1, label="θ (drop duplicates)"
    )
    k = forms.IntegerField(
        initial=DEFAULT_PARAMS["k"], min_value=1, max_value=MAX_K, label="k (nodes retrieved)"
    )
    embedder = forms.ChoiceField(initial=DEFAULT_PARAMS["embedder"])
    structure = forms.ChoiceField(
        initial="graph",
        choices=[(s, {"graph": "graph", "flat": "flat (no merging)"}[s]) for s in STRUCTURES],
    )
    granularity = forms.ChoiceField(
        initial="subgoal",
        choices=[
            (g, {"subgoal": "subgoal", "action": "action", "task": "trajectory"}[g])
            for g in GRANULARITIES
        ],
        label="An edge is",
    )

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, project=project, **kwargs)
        self.fields["embedder"].choices = [(name, name) for name in sorted(EMBEDDERS)]

    def params(self) -> dict[str, Any]:
        return {
            name: self.cleaned_data[name]
            for name in ("tau", "theta", "k", "embedder", "structure", "granularity")
        }


# ---------------------------------------------------------------------------- project page


def _graphs_context(project: Project, **extra: Any) -> dict[str, Any]:
    memory_graphs = list(
        MemoryGraph.objects.filter(project=project).select_related("job", "created_by", "parent")[
            :50
        ]
    )
    app_graphs = list(
        AppGraph.objects.filter(project=project).select_related("job", "created_by")[:50]
    )
    for graph in [*memory_graphs, *app_graphs]:
        if graph.job is not None:
            graph.job = with_true_status(graph.job)
    building = any(
        g.job is not None and not g.job.is_finished for g in [*memory_graphs, *app_graphs]
    )
    return {
        "project": project,
        "memory_graphs": memory_graphs,
        "app_graphs": app_graphs,
        "building": building,
        **extra,
    }


@login_required
@require_http_methods(["GET", "POST"])
def project_graphs(request: HttpRequest, project_id: int) -> HttpResponse:
    project = access_project(request.user, project_id)
    apps = project_apps(project)
    kind = request.POST.get("kind") if request.method == "POST" else None
    app_form = AppGraphForm(
        request.POST if kind == "app" else None, project=project, apps=apps, prefix="app"
    )
    memory_form = MemoryGraphForm(
        request.POST if kind == "memory" else None, project=project, prefix="memory"
    )
    if kind in ("memory", "extend"):
        access_project(request.user, project_id, roles=BUILD_ROLES)
    if kind == "memory" and memory_form.is_valid():
        try:
            do_build_memory_graph(
                project, request.user, memory_form.params(), memory_form.filters()
            )
        except InvalidData as exc:
            memory_form.add_error(None, str(exc))
        else:
            return redirect("project-graphs", project.pk)
    extend_error = ""
    if kind == "extend":
        parent = access_memory_graph(request.user, request.POST.get("graph"))
        try:
            do_build_memory_graph(
                project,
                request.user,
                None,  # an extension keeps the graph's parameters
                parent.inputs.get("filters", {}),
                extend=parent,
            )
        except InvalidData as exc:
            extend_error = str(exc)
        else:
            return redirect("project-graphs", project.pk)
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
    context = _graphs_context(
        project, app_form=app_form, memory_form=memory_form, apps=apps, extend_error=extend_error
    )
    if request.htmx and request.htmx.target == "graph-versions":
        return render(request, "graphs/_versions.html", context)
    return render(request, "graphs/project_graphs.html", context)


# ---------------------------------------------------------------------------- app graph view


def _load_app_graph(graph: AppGraph) -> AppKnowledgeGraph:
    try:
        return load_app_graph(app_graph_document(graph))
    except InvalidData:
        raise Http404(f"app graph v{graph.version} of {graph.app} is not ready") from None


def _app_drawing(project: Project, loaded: AppKnowledgeGraph):
    # An imported graph may name screens this project does not hold: no picture for those.
    shown = _screen_facts(project, {n.reference for n in loaded.nodes if n.reference})
    nodes = [
        DrawNode(
            id=n.id,
            label=n.description,
            size=max(1, len(n.members)),
            thumb=n.reference if n.reference in shown else "",
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
        "drawing": _app_drawing(graph.project, loaded),
        "kind": "app",
        "markers": APP_MARKERS,
    }
    return render(request, "graphs/graph_view.html", context)


def _trajectory_ids(project: Project, keys: set[str]) -> dict[str, tuple[int, int]]:
    """Trajectory keys (uids) of a graph → (id, step count) in the project, for links."""
    valid = set()
    for key in keys:
        try:
            valid.add(str(Trajectory._meta.get_field("uid").to_python(key)))
        except Exception:  # noqa: BLE001 - an imported graph may name anything; no link then
            continue
    found = Trajectory.objects.filter(project=project, uid__in=valid).values_list(
        "uid", "pk", "step_count"
    )
    return {str(uid): (pk, count) for uid, pk, count in found}


def _screen_link(ids: dict[str, tuple[int, int]], trajectory: str, step: int) -> str:
    """The step a screen is shown before; the final screen's link is its trajectory."""
    if trajectory not in ids:
        return ""
    pk, count = ids[trajectory]
    if step < count:
        return reverse("step-detail", args=[pk, step])
    return reverse("trajectory-detail", args=[pk])


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
    shown = _screen_facts(graph.project, {m.screen for m in members})
    outgoing = [e for e in loaded.edges if e.source == node.id]
    names = {n.id: n.description for n in loaded.nodes}
    context = {
        "graph": graph,
        "node": node,
        "members": [
            (m, _screen_link(ids, m.trajectory, m.step), m.screen in shown) for m in members
        ],
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
        "occurrences": [
            (o, _screen_link(ids, o.trajectory, o.step)) for o in edge.occurrences[:50]
        ],
        "more": max(0, len(edge.occurrences) - 50),
    }
    return render(request, "graphs/_app_edge_panel.html", context)


# ---------------------------------------------------------------------------- memory graph view


def _ready_memory_graph(user, graph_id) -> tuple[MemoryGraph, MemoryGraphData]:
    graph = access_memory_graph(user, graph_id)
    if graph.status != GraphStatus.READY or not graph.file:
        raise Http404(f"memory graph v{graph.version} is {graph.status}, not ready")
    return graph, load_graph(graph)


def _screen_facts(project: Project, shas: set[str]) -> dict[str, tuple[str, str]]:
    """Screenshot sha256 → (package, activity) as the project's screens show it."""
    found = (
        Screen.objects.filter(trajectory__project=project, screenshot_id__in=shas)
        .values_list("screenshot_id", "package", "activity")
        .order_by()
    )
    return {sha: (package, activity) for sha, package, activity in found}


def _node_name(i: int, facts: tuple[str, str] | None) -> str:
    activity = (facts[1] if facts else "").rsplit(".", 1)[-1]
    return f"#{i} · {activity}" if activity else f"#{i}"


@login_required
@require_GET
def memory_graph_view(request: HttpRequest, graph_id: int) -> HttpResponse:
    graph, data = _ready_memory_graph(request.user, graph_id)
    counts = np.asarray(data.counts[: data.node_count])
    # Only the largest nodes are drawn: only they (and the edges between them) are read, so a
    # graph of 100,000 nodes costs what one of a few hundred does.
    limit = drawing.MAX_DRAWN
    if data.node_count > limit:
        largest = np.argpartition(-counts, limit - 1)[:limit]
    else:
        largest = np.arange(data.node_count)
    kept = {int(i) for i in largest}
    refs = {i: data.members[i][0]["screenshot"] if data.members[i] else "" for i in kept}
    facts = _screen_facts(graph.project, {ref for ref in refs.values() if ref})
    nodes = [
        DrawNode(
            id=str(i),
            label=_node_name(i, facts.get(refs[i])),
            size=int(counts[i]),
            thumb=refs[i] if refs[i] in facts else "",
            app=facts.get(refs[i], ("", ""))[0],
        )
        for i in sorted(kept)
    ]
    app_of = {n.id: n.app for n in nodes}
    edges = [
        DrawEdge(
            id=str(i),
            source=str(e["source"]),
            target=str(e["target"]),
            label=e["intent"],
            success=e["success"] or "uncertain",
            count=1 + len(e.get("duplicates", [])),
            apps=tuple(a for a in {app_of[str(e["source"])], app_of[str(e["target"])]} if a),
        )
        for i, e in enumerate(data.edges)
        if e["source"] in kept and e["target"] in kept
    ]
    drawn = draw(nodes, edges)
    drawn.total_nodes, drawn.total_edges = data.node_count, data.edge_count
    context = {
        "project": graph.project,
        "graph": graph,
        "drawing": drawn,
        "kind": "memory",
        "markers": MEMORY_MARKERS,
        "export_url": reverse("api-graph-export", args=[graph.pk]),
    }
    return render(request, "graphs/graph_view.html", context)


def _index(value: str, size: int, what: str) -> int:
    try:
        i = int(value)
    except ValueError:
        raise Http404(f"No such {what}") from None
    if not 0 <= i < size:
        raise Http404(f"No such {what}")
    return i


@login_required
@require_GET
def memory_graph_node(request: HttpRequest, graph_id: int, node_id: str) -> HttpResponse:
    graph, data = _ready_memory_graph(request.user, graph_id)
    node = _index(node_id, data.node_count, "node")
    members = data.members[node][:PANEL_SCREENS]
    ids = _trajectory_ids(graph.project, {m["trajectory"] for m in members})
    shown = _screen_facts(graph.project, {m["screenshot"] for m in members})
    outgoing = [(i, data.edges[i]) for i, e in enumerate(data.edges) if e["source"] == node]
    context = {
        "graph": graph,
        "node": node,
        "size": int(data.counts[node]),
        "members": [
            (m, _screen_link(ids, m["trajectory"], m["step"]), m["screenshot"] in shown)
            for m in members
        ],
        "more_members": len(data.members[node]) - len(members),
        "outgoing": outgoing,
    }
    return render(request, "graphs/_memory_node_panel.html", context)


@login_required
@require_GET
def memory_graph_edge(request: HttpRequest, graph_id: int, edge_id: str) -> HttpResponse:
    graph, data = _ready_memory_graph(request.user, graph_id)
    i = _index(edge_id, data.edge_count, "edge")
    edge = data.edges[i]
    origins = [
        {"trajectory": edge["trajectory"], "start": edge["start"], "end": edge["end"]},
        *edge.get("duplicates", []),
    ]
    ids = _trajectory_ids(graph.project, {o["trajectory"] for o in origins})
    context = {
        "graph": graph,
        "edge_id": i,
        "edge": edge,
        "origins": [
            (
                o,
                ids.get(o["trajectory"], (None, 0))[0],
                _screen_link(ids, o["trajectory"], o["start"]),
            )
            for o in origins[:50]
        ],
        "more": max(0, len(origins) - 50),
    }
    return render(request, "graphs/_memory_edge_panel.html", context)


class RetrieveForm(forms.Form):
    screenshot = forms.FileField(label="Screenshot (PNG, JPEG or WebP)")
    xml = forms.FileField(
        required=False,
        label="Its UI XML (optional)",
        help_text="Without it the screen is matched by its look alone (a small grey picture): "
        "pages that look alike, such as two plain lists, can be mistaken for each other.",
    )
    k = forms.IntegerField(min_value=1, max_value=MAX_K, label="k (nodes)")
    task = forms.CharField(
        required=False,
        max_length=2000,
        label="Task (optional)",
        help_text="Its goal: the memory block lists the subgoals most relevant to it first.",
    )


@login_required
@require_http_methods(["GET", "POST"])
def memory_graph_retrieve(request: HttpRequest, graph_id: int) -> HttpResponse:
    graph = access_memory_graph(request.user, graph_id)
    form = RetrieveForm(
        request.POST or None, request.FILES or None, initial={"k": graph.params.get("k", 1)}
    )
    result = None
    if request.method == "POST" and form.is_valid():
        xml = form.cleaned_data["xml"]
        try:
            result = retrieve_for_screen(
                graph,
                read_upload(form.cleaned_data["screenshot"], "screenshot"),
                read_upload(xml, "xml") if xml else None,
                form.cleaned_data["k"],
                task=form.cleaned_data["task"],
            )
        except InvalidData as exc:
            form.add_error(None, str(exc))
        else:
            shas = {hit["screenshot"] for hit in result["nodes"] if hit["screenshot"]}
            shown = _screen_facts(graph.project, shas)
            for hit in result["nodes"]:
                hit["shown"] = hit["screenshot"] in shown
    context = {"project": graph.project, "graph": graph, "form": form, "result": result}
    return render(request, "graphs/retrieve.html", context)
