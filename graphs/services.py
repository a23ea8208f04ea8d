"""Building, importing, exporting and querying memory graphs: the one place that changes them.

A build is a background job (kind ``memory_graph``): :func:`do_build_memory_graph` checks the
request, fixes the trajectories it is built from (oldest first) and queues it; the worker runs
:func:`run_memory_graph_job`. Extending a graph builds a new version from its parent's data
and the trajectories the parent does not hold yet.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from django.core.files.base import ContentFile
from django.db import transaction

from trajectories import events
from trajectories.jobs import enqueue_job, internal_error_message
from trajectories.models import Job, JobKind, Project, Status, Trajectory
from trajectories.selectors import check_trajectory_filters, trajectory_list
from trajectories.services import record_event
from trajectories.uixml import UIXmlError, parse_ui_xml
from trajectories.validation import InvalidData, InvalidRequest

from .build import build_graph, check_params, gather_inputs, labelled
from .embedders import get_embedder, image_bytes_of
from .index import index_of, load_graph
from .models import GraphStatus, MemoryGraph
from .retrieve import format_memory_block, retrieve
from .storage import export_graph, import_graph, to_npz_bytes

GATHER_CHUNK = 50  # trajectories read and embedded between two progress reports


def _describe(filters: Mapping[str, Any]) -> str:
    if not filters:
        return "(no filter)"
    return ", ".join(f"{k}={v}" for k, v in sorted(filters.items()))


def check_graph_filters(
    filters: Mapping[str, Any] | None, approved_only: bool = False
) -> dict[str, Any]:
    filters = check_trajectory_filters(filters)
    if approved_only:
        if filters.get("status", Status.APPROVED) != Status.APPROVED:
            raise InvalidRequest(f"filters.status: {filters['status']!r} contradicts approved_only")
        filters["status"] = Status.APPROVED
    return filters


def do_build_memory_graph(
    project: Project,
    user,
    params: Mapping[str, Any] | None = None,
    filters: Mapping[str, Any] | None = None,
    *,
    approved_only: bool = False,
    extend: MemoryGraph | None = None,
    queue: bool = True,
) -> MemoryGraph:
    """Queue a build of a new graph version; ``extend`` adds to that graph what it lacks
    (matching its filters unless others are given).

    ``queue`` False leaves the job for the caller to run (``build_memory_graph --now``)."""
    if extend is not None:
        if extend.project_id != project.pk:
            raise InvalidData(f"extend: graph {extend.pk} is not a graph of this project")
        if extend.status != GraphStatus.READY:
            raise InvalidData(f"extend: graph v{extend.version} is {extend.status}, not ready")
        given = check_params(params) if params else None
        params = {**extend.params, "k": (given or extend.params)["k"]}
        if given is not None:
            named = [name for name, value in params.items() if value is not None]
            changed = [n for n in named if n != "k" and given[n] != extend.params[n]]
            if changed:
                raise InvalidData(
                    f"params: an extension keeps the graph's {changed[0]} "
                    f"({extend.params[changed[0]]!r}); build a new graph to change it"
                )
        if not filters and not approved_only:  # by default, what the parent was built from
            filters = extend.inputs.get("filters", {})
            approved_only = bool(extend.inputs.get("approved_only"))
    params = check_params(params)
    get_embedder(params["embedder"])  # an unconfigured embedder fails now, not in the worker
    filters = check_graph_filters(filters, approved_only)
    chosen = labelled(trajectory_list(None, project, filters), params["granularity"])
    keys = [str(uid) for uid in chosen.order_by("created_at", "id").values_list("uid", flat=True)]
    held = list(extend.inputs.get("trajectories", [])) if extend is not None else []
    changed = changed_since(extend) if extend is not None else []
    if changed:
        # Labels of trajectories the parent holds changed after it was built: added to, it
        # would keep their old subgoals. The new version is built again from all of them.
        held = []
    held_set = set(held)
    added = [key for key in keys if key not in held_set]
    what = "subgoals" if params["granularity"] == "subgoal" else "steps"
    if not keys:
        raise InvalidData(
            f"the project has no labelled trajectories (with {what}) matching {_describe(filters)}"
        )
    if not added:
        raise InvalidData(
            f"extend: graph v{extend.version} already holds every trajectory matching "
            f"{_describe(filters)}"
        )
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()  # one version at a time
        graph = MemoryGraph.objects.create(
            project=project,
            version=MemoryGraph.next_version(project=project),
            params=params,
            inputs={
                "filters": filters,
                "approved_only": approved_only,
                "trajectories": held + added,
                "added": added,
                **({"rebuilt": changed} if changed else {}),
            },
            created_by=user if user is not None and user.is_authenticated else None,
            parent=extend,
        )
        job = Job.objects.create(
            project=project,
            kind=JobKind.MEMORY_GRAPH,
            format=params["embedder"],
            created_by=graph.created_by,
            params={"graph": graph.pk, "version": graph.version},
            total=len(added),
        )
        graph.job = job
        graph.save(update_fields=["job"])
        record_event(
            events.JOB_MEMORY_GRAPH_QUEUED,
            actor=graph.created_by,
            project=project,
            obj=job,
            after={"version": graph.version, "params": params, "trajectories": len(added)},
        )
        if queue:
            enqueue_job(job)
    return graph


def changed_since(graph: MemoryGraph) -> list[str]:
    """The trajectories of ``graph`` whose labels changed after it was built (their version is
    not the one it was built from), or were deleted; all of them when the graph does not say
    (built before versions were kept, or imported from another instance)."""
    held = list(graph.inputs.get("trajectories", []))
    built_from = graph.inputs.get("versions")
    if not isinstance(built_from, dict):
        return held
    now = {
        str(uid): version
        for uid, version in Trajectory.objects.filter(
            project=graph.project_id, uid__in=held
        ).values_list("uid", "version")
    }
    return [key for key in held if now.get(key) is None or now[key] != built_from.get(key)]


def run_memory_graph_job(job: Job, progress: Callable[[int, int], None]) -> dict[str, Any]:
    """The worker's part: embed the boundary screens (cached), build, store the file."""
    graph = MemoryGraph.objects.select_related("parent").get(pk=job.params["graph"])
    try:
        return _build(graph, progress)
    except Exception as exc:
        message = str(exc) if isinstance(exc, InvalidData) else internal_error_message(job, exc)
        MemoryGraph.objects.filter(pk=graph.pk).update(status=GraphStatus.FAILED, message=message)
        raise


def _build(graph: MemoryGraph, progress: Callable[[int, int], None]) -> dict[str, Any]:
    params = graph.params
    embedder = get_embedder(params["embedder"])
    added = graph.inputs["added"]
    by_key = {
        str(t.uid): t
        for t in Trajectory.objects.filter(project=graph.project, uid__in=added).select_related(
            "task", "final_screen", "final_screen__screenshot", "final_screen__ui_xml"
        )
    }
    missing = [key for key in added if key not in by_key]
    if missing:
        raise InvalidData(f"trajectory {missing[0]} was deleted before the build ran")
    items = []
    for start in range(0, len(added), GATHER_CHUNK):
        chunk = [by_key[key] for key in added[start : start + GATHER_CHUNK]]
        items.extend(gather_inputs(chunk, params["granularity"], embedder))
        progress(min(start + GATHER_CHUNK, len(added)), len(added))
    # The label versions read, so that an extension can tell whose labels changed since.
    versions = {key: by_key[key].version for key in added}
    extending = graph.parent is not None and "rebuilt" not in graph.inputs
    parent = load_graph(graph.parent) if extending else None
    if extending:
        versions = {**graph.parent.inputs.get("versions", {}), **versions}
    data = build_graph(items, params, embedder, extend=parent)
    data.params = params  # k may differ from the parent's
    graph.file.save(f"memory-graph-v{graph.version}.npz", ContentFile(to_npz_bytes(data)), False)
    graph.node_count, graph.edge_count = data.node_count, data.edge_count
    graph.status, graph.message = GraphStatus.READY, ""
    graph.inputs = {**graph.inputs, "versions": versions}
    graph.save(update_fields=["file", "node_count", "edge_count", "status", "message", "inputs"])
    return {"nodes": data.node_count, "edges": data.edge_count, "trajectories": len(added)}


def export_memory_graph(graph: MemoryGraph) -> dict[str, Any]:
    if graph.status != GraphStatus.READY:
        raise InvalidData(f"graph v{graph.version} is {graph.status}: nothing to export yet")
    return export_graph(load_graph(graph), graph.inputs)


def do_import_memory_graph(project: Project, user, doc: Any) -> MemoryGraph:
    """A new version of the project's graph from an export (of this or another instance)."""
    data, inputs = import_graph(doc)
    actor = user if user is not None and user.is_authenticated else None
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()
        graph = MemoryGraph.objects.create(
            project=project,
            version=MemoryGraph.next_version(project=project),
            params=data.params,
            inputs=inputs,
            status=GraphStatus.READY,
            created_by=actor,
            node_count=data.node_count,
            edge_count=data.edge_count,
        )
        graph.file.save(f"memory-graph-v{graph.version}.npz", ContentFile(to_npz_bytes(data)))
        record_event(
            events.MEMORY_GRAPH_IMPORTED,
            actor=actor,
            project=project,
            obj=graph,
            after={"version": graph.version, "nodes": data.node_count, "edges": data.edge_count},
        )
    return graph


def retrieve_for_screen(
    graph: MemoryGraph,
    image: bytes | None,
    xml: str | bytes | None = None,
    k: int | None = None,
    *,
    task: str = "",
) -> dict[str, Any]:
    """The top-k nodes for a screenshot (and its XML), with their subgoals and the memory
    block (ranked by relevance to ``task``, the goal, when one is given)."""
    if graph.status != GraphStatus.READY:
        raise InvalidData(f"graph v{graph.version} is {graph.status}: it cannot be queried yet")
    k = graph.params.get("k", 1) if k is None else k
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 100:
        raise InvalidRequest(f"k: must be an integer between 1 and 100, got {k!r}")
    image = image_bytes_of(image)
    tree = None
    if xml:
        try:
            tree = parse_ui_xml(xml)  # parsed once: the embedder reads the tree
        except UIXmlError as exc:
            raise InvalidData(f"xml: not a UI dump ({exc})") from None
    embedder = get_embedder(graph.params["embedder"])
    began = time.perf_counter()
    query = embedder.embed_screens([(image, tree)])[0]
    embedded = time.perf_counter()
    index = index_of(graph)
    if len(query) != index.graph.dim:
        raise InvalidData(
            f"embedder: the query's vector has {len(query)} values, the graph's {index.graph.dim}"
        )
    columns = None if xml else getattr(embedder, "look", None)
    hits = retrieve(index, np.asarray(query, dtype=np.float32), k, columns=columns)
    searched = time.perf_counter()
    return {
        "graph": graph.version,
        "k": k,
        "nodes": hits,
        "memory_block": format_memory_block(hits, task),
        "timing_ms": {
            "embed": round(1000 * (embedded - began), 3),
            "search": round(1000 * (searched - embedded), 3),
        },
    }
