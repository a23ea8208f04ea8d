"""Memory retrieval (§3.3): the top-k nodes nearest the current screen, their outgoing
subgoals, successful and failed, and the memory block an agent puts in its prompt."""

from __future__ import annotations

from typing import Any, TypedDict

import numpy as np

from .index import NodeIndex

OUTCOME_TAGS = {"yes": "SUCCEEDED", "no": "FAILED", "uncertain": "OUTCOME UNCERTAIN"}


class Subgoal(TypedDict):
    intent: str
    effect: str
    behaviour: str
    success: str
    target: int
    trajectory: str
    start: int
    end: int
    task: str
    duplicates: int


class Hit(TypedDict):
    node: int
    similarity: float
    size: int
    screenshot: str
    subgoals: list[Subgoal]


def retrieve(
    index: NodeIndex,
    query: np.ndarray,
    k: int,
    *,
    skip_nodes: np.ndarray | None = None,
    skip_task: str | None = None,
) -> list[Hit]:
    """The ``k`` nodes most like the query screen's vector, each with its outgoing subgoals.

    ``skip_nodes`` (a mask) and ``skip_task`` leave out nodes and subgoals, as if the graph had
    been built without a task's trajectories (for exports: nothing of the answer leaks)."""
    graph = index.graph
    hits: list[Hit] = []
    for node, score in index.nearest(query, k, skip=skip_nodes):
        subgoals: list[Subgoal] = []
        for i in index.outgoing[node]:
            edge = graph.edges[i]
            if skip_task is not None and edge["task"] == skip_task:
                continue
            subgoals.append(
                {
                    "intent": edge["intent"],
                    "effect": edge["effect"],
                    "behaviour": edge["behaviour"],
                    "success": edge["success"],
                    "target": edge["target"],
                    "trajectory": edge["trajectory"],
                    "start": edge["start"],
                    "end": edge["end"],
                    "task": edge["task"],
                    "duplicates": len(edge["duplicates"]),
                }
            )
        members = graph.members[node]
        hits.append(
            {
                "node": node,
                "similarity": round(score, 6),
                "size": int(graph.counts[node]),
                "screenshot": members[0]["screenshot"] if members else "",
                "subgoals": subgoals,
            }
        )
    return hits


def format_memory_block(hits: list[Hit] | list[dict[str, Any]]) -> str:
    """The retrieved subgoals as a short block for the agent's prompt, each tagged with its
    outcome: successful ones to imitate, failed ones to avoid."""
    if not hits or not any(hit["subgoals"] for hit in hits):
        return "Memory: no subgoals were tried before from a screen like this one."
    lines = ["Memory: subgoals tried before from screens like the current one."]
    for rank, hit in enumerate(hits, 1):
        if not hit["subgoals"]:
            continue
        lines.append(f"State {rank} (similarity {hit['similarity']:.2f}):")
        for subgoal in hit["subgoals"]:
            line = f"- [{OUTCOME_TAGS.get(subgoal['success'], subgoal['success'])}] "
            line += subgoal["intent"]
            if subgoal["effect"]:
                line += f" | effect: {subgoal['effect']}"
            if subgoal["behaviour"]:
                line += f" | behaviour: {subgoal['behaviour']}"
            lines.append(line)
    lines.append("Repeat what succeeded when it fits the task; avoid what failed.")
    return "\n".join(lines)
