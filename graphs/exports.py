"""A retrieval memory block per step, for the dataset exports (``memory_graph`` option).

Each step gets the block an agent would have been given at that step by the project's graph,
with what came from trajectories of the step's own task left out so that nothing of the
answer leaks: their subgoals are dropped, and nodes made only of their screens are skipped.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trajectories.models import Screen, Step, Trajectory
from trajectories.validation import InvalidData

from .embedders import embed_screen_rows, get_embedder
from .index import index_of
from .models import GraphStatus, MemoryGraph
from .retrieve import format_memory_block, retrieve


class StepMemory:
    """The memory blocks of one graph version of the exported trajectories' project."""

    def __init__(self, trajectories, version: int):
        project_id = trajectories.values_list("project", flat=True).first()
        graph = MemoryGraph.objects.filter(project_id=project_id, version=version).first()
        if graph is None:
            raise InvalidData(f"options.memory_graph: the project has no graph v{version}")
        if graph.status != GraphStatus.READY:
            raise InvalidData(f"options.memory_graph: graph v{version} is {graph.status}")
        self.graph = graph
        self.k = int(graph.params.get("k", 1))
        self.index = index_of(graph)
        self.embedder = get_embedder(graph.params["embedder"])
        task_of = dict(
            Trajectory.objects.filter(project_id=project_id).values_list("uid", "task__uid")
        )
        task_of = {str(uid): task for uid, task in task_of.items()}
        self.node_tasks = [
            frozenset(task_of.get(m["trajectory"], "") for m in members)
            for members in self.index.graph.members
        ]

    def blocks(self, record: dict[str, Any]) -> dict[int, str]:
        """Each step's memory block (by step index) for a native record."""
        task = record["task"]["id"]
        screen_of = dict(
            Step.objects.filter(trajectory__uid=record["id"]).values_list("index", "screen")
        )
        screens = Screen.objects.filter(pk__in=set(screen_of.values())).select_related(
            "screenshot", "ui_xml"
        )
        vectors = embed_screen_rows(self.embedder, list(screens))
        own = np.array([tasks == {task} for tasks in self.node_tasks], dtype=bool)
        out = {}
        for index, screen in screen_of.items():
            hits = retrieve(self.index, vectors[screen], self.k, skip_nodes=own, skip_task=task)
            out[index] = format_memory_block(hits, record["task"]["goal"])
        return out
