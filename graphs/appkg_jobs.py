"""App knowledge graphs of a project: built by a background job, imported, exported, and used
at run time to locate a screen (:func:`locate_on_app_graph`).

Each build or import is a new version of the app's graph (an :class:`AppGraph` row); the graph
itself is its canonical JSON export, stored in the row's file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.core.files.base import ContentFile
from django.db import transaction

from trajectories import events
from trajectories.bounds import check_file_size
from trajectories.jobs import enqueue_job
from trajectories.models import Job, JobKind, Project
from trajectories.selectors import check_trajectory_filters
from trajectories.services import record_event
from trajectories.validation import InvalidData

from .appkg import (
    AppGraphLocator,
    AppGraphParams,
    build_app_graph,
    dump_app_graph,
    load_app_graph,
    node_options,
)
from .appkg_inputs import app_trajectories, read_trajectory_inputs
from .models import AppGraph, GraphStatus


def _check_app(app: Any) -> str:
    if not isinstance(app, str) or not app.strip():
        raise InvalidData("app: name the app (package) to build the graph of")
    return app.strip()


def do_start_app_graph(
    project: Project,
    app: Any,
    actor,
    params: Mapping[str, Any] | None = None,
    filters: Mapping[str, Any] | None = None,
) -> AppGraph:
    """Queue a build of the app's knowledge graph from the project's (filtered) trajectories."""
    app = _check_app(app)
    checked = AppGraphParams.from_mapping(params)
    filters = check_trajectory_filters(dict(filters or {}))
    count = app_trajectories(project, app, filters).count()
    if not count:
        raise InvalidData(f"app: no trajectory of this project (with these filters) shows {app}")
    with transaction.atomic():
        job = Job.objects.create(
            project=project,
            kind=JobKind.APP_GRAPH,
            format="ui-kobe",
            created_by=actor,
            params={"app": app, "params": checked.to_dict(), "filters": filters},
            total=count,
        )
        graph = AppGraph.objects.create(
            project=project,
            app=app,
            version=AppGraph.next_version(project=project, app=app),
            params=checked.to_dict(),
            inputs={"filters": filters},
            job=job,
            created_by=actor,
        )
        record_event(
            events.JOB_APP_GRAPH_QUEUED,
            actor=actor,
            project=project,
            obj=job,
            after={"app": app, "version": graph.version, **job.params},
        )
        enqueue_job(job)
    return graph


def run_app_graph_job(job: Job, progress: Callable[[int, int], None]) -> dict[str, Any]:
    """The job's build: read the trajectories, build, store the export in the graph's file."""
    graph = AppGraph.objects.get(job=job)
    app, filters = job.params["app"], job.params.get("filters", {})
    params = AppGraphParams.from_mapping(job.params.get("params"))
    trajectories = app_trajectories(job.project, app, filters)
    total = trajectories.count()
    keys = [str(uid) for uid in trajectories.values_list("uid", flat=True)]
    try:
        built = build_app_graph(
            app,
            read_trajectory_inputs(trajectories, app),
            params,
            progress=lambda done: progress(done, total),
        )
    except InvalidData as exc:
        AppGraph.objects.filter(pk=graph.pk).update(status=GraphStatus.FAILED, message=str(exc))
        raise
    _store(graph, dump_app_graph(built), {"filters": filters, "trajectories": keys})
    return {"nodes": graph.node_count, "edges": graph.edge_count, "trajectories": total}


def _store(graph: AppGraph, document: bytes, inputs: dict[str, Any]) -> None:
    loaded = load_app_graph(document)
    graph.file.save(f"app-{graph.app}-v{graph.version}.json", ContentFile(document), save=False)
    graph.inputs = inputs
    graph.node_count = len(loaded.nodes)
    graph.edge_count = len(loaded.edges)
    graph.status = GraphStatus.READY
    graph.message = ""
    graph.save(update_fields=["file", "inputs", "node_count", "edge_count", "status", "message"])


def do_import_app_graph(project: Project, data: bytes, actor) -> AppGraph:
    """A new version of the app's graph from an exported document (checked field by field)."""
    check_file_size(len(data), "file")
    loaded = load_app_graph(data)
    document = dump_app_graph(loaded)
    with transaction.atomic():
        graph = AppGraph.objects.create(
            project=project,
            app=loaded.app,
            version=AppGraph.next_version(project=project, app=loaded.app),
            params=loaded.params.to_dict(),
            created_by=actor,
        )
        _store(graph, document, {"imported": True})
        record_event(
            events.APP_GRAPH_IMPORTED,
            actor=actor,
            project=project,
            obj=graph,
            after={"app": graph.app, "version": graph.version, "nodes": graph.node_count},
        )
    return graph


def app_graph_document(graph: AppGraph) -> bytes:
    """The stored export of a ready graph."""
    if graph.status != GraphStatus.READY or not graph.file:
        raise InvalidData(f"app graph v{graph.version} of {graph.app} is {graph.status}, not ready")
    with graph.file.open("rb") as f:
        return f.read()


# ------------------------------------------------------------------------------ at run time

_LOCATORS: dict[tuple[int, str], AppGraphLocator] = {}
_KEPT_LOCATORS = 16


def app_graph_locator(graph: AppGraph) -> AppGraphLocator:
    """The ready graph's locator, read once per process (a stored version never changes)."""
    if graph.status != GraphStatus.READY or not graph.file:
        raise InvalidData(
            f"app graph {graph.pk} is {graph.status}: it can locate screens when ready"
        )
    key = (graph.pk, graph.file.name)
    locator = _LOCATORS.get(key)
    if locator is None:
        locator = AppGraphLocator(load_app_graph(app_graph_document(graph)))
        if len(_LOCATORS) >= _KEPT_LOCATORS:
            _LOCATORS.pop(next(iter(_LOCATORS)))
        _LOCATORS[key] = locator
    return locator


def locate_on_app_graph(
    graph: AppGraph, screenshot: bytes, xml: bytes | str | None = None, activity: str = ""
) -> dict[str, Any]:
    """The node of a screenshot (and its XML) in the graph, and the node's options."""
    locator = app_graph_locator(graph)
    where = locator.locate(screenshot, xml or None, activity)
    node = where.node
    return {
        "graph": graph.pk,
        "app": graph.app,
        "version": graph.version,
        "located": node is not None,
        "node": None
        if node is None
        else {
            "id": node.id,
            "description": node.description,
            "activity": node.activity,
            "labels": node.labels,
            "varies": node.varies,
            "reference": node.reference,
            "members": len(node.members),
        },
        "structure": where.structure,
        "look": where.look,
        "reason": where.reason,
        "candidates": where.candidates,
        "options": node_options(locator.graph, node.id if node else None),
    }
