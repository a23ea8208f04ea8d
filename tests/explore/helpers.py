"""What two explorations are compared by: their states and transitions, without the ids of
the trajectories and screens each run made."""

from __future__ import annotations

import json
from typing import Any

from explore.models import Exploration
from graphs.appkg_jobs import app_graph_document
from graphs.models import AppGraph
from tests.conftest import wait_for_job


def walk_shape(exploration: Exploration) -> dict[str, Any]:
    frontier = exploration.frontier
    return {
        "steps": frontier["steps"],
        "nodes": [
            (
                n["id"],
                n["description"],
                n["path"],
                [(c["key"], c["status"]) for c in n["candidates"]],
            )
            for n in frontier["nodes"]
        ],
        "edges": [
            (e["source"], e["target"], e["key"], e["instruction"], e["effect"])
            for e in frontier["edges"]
        ],
    }


def graph_shape(graph: AppGraph) -> dict[str, Any]:
    if graph.job_id:
        wait_for_job(graph.job_id, timeout=120)
    graph.refresh_from_db()
    document = json.loads(app_graph_document(graph))
    return {
        "nodes": [(n["id"], n["description"], n["structure"]) for n in document["nodes"]],
        "edges": [
            (e["source"], e["target"], e["action_type"], e["instruction"])
            for e in document["edges"]
        ],
    }
