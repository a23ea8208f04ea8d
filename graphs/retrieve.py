"""Memory retrieval (§3.3): the top-k nodes nearest the current screen, their outgoing
subgoals, successful and failed, and the memory block an agent puts in its prompt."""

from __future__ import annotations

import re
from functools import lru_cache
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
    columns: slice | None = None,
) -> list[Hit]:
    """The ``k`` nodes most like the query screen's vector, each with its outgoing subgoals.

    ``skip_nodes`` (a mask) and ``skip_task`` leave out nodes and subgoals, as if the graph had
    been built without a task's trajectories (for exports: nothing of the answer leaks);
    ``columns``: compare on that part of the vectors alone (a screenshot with no XML)."""
    graph = index.graph
    hits: list[Hit] = []
    for node, score in index.nearest(query, k, skip=skip_nodes, columns=columns):
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


EXPERIENCE = "Experience"  # the block's label: STAMP's own prompt already has a "Memory:" field
MAX_BLOCK_SUBGOALS = 8
MAX_BLOCK_CHARS = 1200
WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an and the of to in on for from with at by is it its me my i you your this that "
    "then them tell which what".split()
)


@lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    """A text's words less the stop words (the same subgoals come back query after query)."""
    return frozenset(w for w in WORD.findall(text.lower()) if w not in STOPWORDS)


def _line(subgoal: dict[str, Any], similarity: float) -> str:
    line = f"- [{OUTCOME_TAGS.get(subgoal['success'], subgoal['success'])}] {subgoal['intent']}"
    if subgoal["effect"]:
        line += f" | effect: {subgoal['effect']}"
    if subgoal["behaviour"]:
        line += f" | behaviour: {subgoal['behaviour']}"
    return f"{line} (similarity {similarity:.2f})"


def format_memory_block(
    hits: list[Hit] | list[dict[str, Any]],
    task: str = "",
    *,
    max_subgoals: int = MAX_BLOCK_SUBGOALS,
    max_chars: int = MAX_BLOCK_CHARS,
) -> str:
    """The retrieved subgoals as a short block for the agent's prompt, each tagged with its
    outcome: successful ones to imitate, failed ones to avoid.

    Ranked by relevance to ``task`` (words its goal shares with the subgoal's intent and
    effect), then by the similarity of their state to the screen; at most ``max_subgoals``
    lines and about ``max_chars`` characters, saying how many were left out.
    """
    goal = _words(task)
    ranked = sorted(
        (
            # Without a goal every subgoal shares no word with it: their words are not needed.
            (
                -len(goal & _words(f"{s['intent']} {s['effect']}")) if goal else 0,
                rank,
                order,
                s,
                hit,
            )
            for rank, hit in enumerate(hits)
            for order, s in enumerate(hit["subgoals"])
        ),
        key=lambda item: item[:3],
    )
    if not ranked:
        return f"{EXPERIENCE}: no subgoals were tried before from a screen like this one."
    header = f"{EXPERIENCE}: subgoals tried before from screens like the current one"
    header += ", most relevant to the task first." if goal else "."
    footer = "Repeat what succeeded when it fits the task; avoid what failed."
    lines = [header]
    size = len(header) + len(footer)
    for *_, subgoal, hit in ranked[:max_subgoals]:
        line = _line(subgoal, hit["similarity"])
        if len(lines) > 1 and size + len(line) > max_chars:
            break
        lines.append(line)
        size += len(line) + 1
    left = len(ranked) - (len(lines) - 1)
    if left:
        lines.append(f"({left} more not shown)")
    lines.append(footer)
    return "\n".join(lines)
