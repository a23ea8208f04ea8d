"""Building the subgoal memory graph, as the paper's §3.2 describes it.

Nodes are merged screen states: a boundary screenshot joins the node whose running mean
embedding is nearest, if their cosine is at least τ, else it starts a new node; the node's
running mean then takes it in. Edges are subgoals, from the node of the screen where a subgoal
began to the node of the screen where it ended, with its intent, effect, behaviour and success
label. An outgoing edge is dropped as a duplicate of an earlier one of the same node when it
has the same target, the same success label and an intent whose text cosine exceeds θ (the
earlier edge keeps a note of where the dropped one came from).

The builder is fed trajectory by trajectory; extending a graph is feeding its builder the new
trajectories, which gives the graph a full build of all of them in the same order gives.

Ablations (the paper's table): ``structure="flat"`` merges nothing (each screenshot is a node
of its own); ``granularity="action"`` makes each step an edge, ``"task"`` each trajectory one
edge from its first to its last screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trajectories.models import Outcome, Step, Subgoal, Trajectory
from trajectories.validation import InvalidData, InvalidRequest

from .embedders import DEFAULT_EMBEDDER, EMBEDDERS, Embedder, embed_screen_rows

STRUCTURES = ("graph", "flat")
GRANULARITIES = ("subgoal", "action", "task")
DEFAULT_PARAMS: dict[str, Any] = {
    "tau": 0.9,
    "theta": 0.9,
    "k": 1,
    "embedder": DEFAULT_EMBEDDER,
    "structure": "graph",
    "granularity": "subgoal",
}
MAX_K = 100
SUCCESS_OF_OUTCOME = {Outcome.SUCCESS: "yes", Outcome.FAILURE: "no", Outcome.UNCERTAIN: "uncertain"}


def _number(value: Any, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidRequest(f"{name}: must be a number, got {value!r}")
    if not low <= value <= high:
        raise InvalidData(f"{name}: must be between {low:g} and {high:g}, got {value:g}")
    return float(value)


def check_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The build's parameters, defaults filled in, each checked."""
    given = {k: v for k, v in (params or {}).items() if v is not None}
    unknown = sorted(set(given) - set(DEFAULT_PARAMS))
    if unknown:
        known = ", ".join(DEFAULT_PARAMS)
        raise InvalidRequest(f"params: unknown parameter {unknown[0]!r} (known: {known})")
    out = {**DEFAULT_PARAMS, **given}
    out["tau"] = _number(out["tau"], "tau", 0, 1)
    out["theta"] = _number(out["theta"], "theta", 0, 1)
    k = out["k"]
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidRequest(f"k: must be an integer, got {k!r}")
    if not 1 <= k <= MAX_K:
        raise InvalidData(f"k: must be between 1 and {MAX_K}, got {k}")
    for name, choices in (
        ("embedder", sorted(EMBEDDERS)),
        ("structure", STRUCTURES),
        ("granularity", GRANULARITIES),
    ):
        if out[name] not in choices:
            raise InvalidData(f"{name}: unknown {name} {out[name]!r} (known: {', '.join(choices)})")
    return out


# ------------------------------------------------------------------------------ the graph


@dataclass
class EdgeInput:
    """One edge to add: from the screen ``source`` to the screen ``target`` (screen keys)."""

    source: tuple[str, int]
    target: tuple[str, int]
    intent: str
    success: str
    effect: str = ""
    behaviour: str = ""
    trajectory: str = ""
    start: int = 0
    end: int = 0
    task: str = ""


@dataclass
class TrajectoryInput:
    """A trajectory's boundary screens (key → (screenshot sha256, vector)) and its edges."""

    key: str
    task: str
    screens: dict[tuple[str, int], tuple[str, np.ndarray]]
    edges: list[EdgeInput]


@dataclass
class MemoryGraphData:
    """A built graph in memory: node sums and sizes, members, edges and their intent vectors."""

    params: dict[str, Any]
    embedder: dict[str, Any]
    dim: int
    text_dim: int
    sums: np.ndarray  # [n, dim] float32: each node's running sum (its mean's direction)
    counts: np.ndarray  # [n] int64
    members: list[list[dict[str, Any]]]
    edges: list[dict[str, Any]]
    edge_vectors: np.ndarray  # [e, text_dim] float32
    trajectories: list[str] = field(default_factory=list)

    @property
    def node_count(self) -> int:
        return len(self.members)

    @property
    def edge_count(self) -> int:
        return len(self.edges)

    def unit_means(self) -> np.ndarray:
        sums = self.sums[: self.node_count]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return (sums / np.where(norms > 0, norms, 1)).astype(np.float32)

    def outgoing(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in range(self.node_count)]
        for i, edge in enumerate(self.edges):
            out[edge["source"]].append(i)
        return out


class GraphBuilder:
    """Adds trajectories to a graph one at a time, in order (§3.2)."""

    GROW = 1024

    def __init__(self, params: dict[str, Any], embedder: dict[str, Any], dim: int, text_dim: int):
        self.params = params
        self.embedder = embedder
        self.tau = float(params["tau"])
        self.theta = float(params["theta"])
        self.merge = params["structure"] == "graph"
        self.dim, self.text_dim = dim, text_dim
        self.n = 0
        self.sums = np.zeros((self.GROW, dim), dtype=np.float32)
        self.means = np.zeros((self.GROW, dim), dtype=np.float32)  # unit running means
        self.counts: list[int] = []
        self.members: list[list[dict[str, Any]]] = []
        self.node_of: dict[tuple[str, int], int] = {}
        self.edges: list[dict[str, Any]] = []
        self.edge_vectors: list[np.ndarray] = []
        self.out: list[list[int]] = []
        self.trajectories: list[str] = []

    @classmethod
    def extending(cls, graph: MemoryGraphData) -> GraphBuilder:
        builder = cls(graph.params, graph.embedder, graph.dim, graph.text_dim)
        n = graph.node_count
        builder._reserve(n)
        builder.sums[:n] = graph.sums[:n]
        builder.means[:n] = graph.unit_means()
        builder.n = n
        builder.counts = [int(c) for c in graph.counts[:n]]
        builder.members = [list(m) for m in graph.members]
        for node, members in enumerate(builder.members):
            for member in members:
                builder.node_of[(member["trajectory"], member["step"])] = node
        builder.edges = [dict(edge) for edge in graph.edges]
        builder.edge_vectors = list(graph.edge_vectors)
        builder.out = graph.outgoing()
        builder.trajectories = list(graph.trajectories)
        return builder

    def _reserve(self, n: int) -> None:
        if n <= len(self.sums):
            return
        size = max(n, 2 * len(self.sums))
        for name in ("sums", "means"):
            grown = np.zeros((size, self.dim), dtype=np.float32)
            grown[: self.n] = getattr(self, name)[: self.n]
            setattr(self, name, grown)

    def node_for(self, key: tuple[str, int], sha256: str, vector: np.ndarray) -> int:
        """The node of a boundary screenshot: merged into the nearest node or a new one."""
        if key in self.node_of:  # the same screenshot ends one subgoal and begins the next
            return self.node_of[key]
        node = -1
        if self.merge and self.n:
            cosines = self.means[: self.n] @ vector
            nearest = int(np.argmax(cosines))
            if cosines[nearest] >= self.tau:
                node = nearest
        if node < 0:
            node = self.n
            self._reserve(node + 1)
            self.n += 1
            self.counts.append(0)
            self.members.append([])
            self.out.append([])
        self.sums[node] += vector
        norm = float(np.linalg.norm(self.sums[node]))
        self.means[node] = self.sums[node] / norm if norm else self.sums[node]
        self.counts[node] += 1
        self.members[node].append({"trajectory": key[0], "step": key[1], "screenshot": sha256})
        self.node_of[key] = node
        return node

    def add_edge(self, edge: EdgeInput, source: int, target: int, vector: np.ndarray) -> bool:
        """Attach the edge unless an earlier one of its node duplicates it; True if kept."""
        origin = {"trajectory": edge.trajectory, "start": edge.start, "end": edge.end}
        for i in self.out[source]:
            kept = self.edges[i]
            if (
                kept["target"] == target
                and kept["success"] == edge.success
                and min(1.0, float(self.edge_vectors[i] @ vector)) > self.theta
            ):
                kept["duplicates"].append(origin)
                return False
        self.out[source].append(len(self.edges))
        self.edges.append(
            {
                "source": source,
                "target": target,
                "intent": edge.intent,
                "effect": edge.effect,
                "behaviour": edge.behaviour,
                "success": edge.success,
                "task": edge.task,
                **origin,
                "duplicates": [],
            }
        )
        self.edge_vectors.append(np.asarray(vector, dtype=np.float32))
        return True

    def add_trajectory(self, item: TrajectoryInput, text_vectors: Mapping[str, np.ndarray]) -> None:
        for edge in item.edges:
            source = self.node_for(edge.source, *item.screens[edge.source])
            target = self.node_for(edge.target, *item.screens[edge.target])
            self.add_edge(edge, source, target, text_vectors[edge.intent])
        self.trajectories.append(item.key)

    def graph(self) -> MemoryGraphData:
        vectors = (
            np.stack(self.edge_vectors)
            if self.edge_vectors
            else np.zeros((0, self.text_dim), dtype=np.float32)
        )
        return MemoryGraphData(
            params=self.params,
            embedder=self.embedder,
            dim=self.dim,
            text_dim=self.text_dim,
            sums=self.sums[: self.n].copy(),
            counts=np.array(self.counts, dtype=np.int64),
            members=self.members,
            edges=self.edges,
            edge_vectors=vectors.astype(np.float32),
            trajectories=self.trajectories,
        )


# -------------------------------------------------------------------- from the database


def _action_intent(step: Step) -> str:
    if step.summary.strip():
        return step.summary.strip()
    target = step.target or {}
    what = target.get("text") or target.get("content_desc") or target.get("resource_id") or ""
    typed = step.action.get("text", "") if step.action_type == "type" else ""
    words = [step.action_type.replace("_", " ")]
    if typed:
        words.append(repr(typed))
    if what:
        words.append(f"on {what!r}")
    return " ".join(words)


def _subgoal_success(subgoal: Subgoal | None, trajectory: Trajectory) -> str:
    if subgoal is not None:
        return subgoal.success or "uncertain"
    return SUCCESS_OF_OUTCOME.get(trajectory.outcome, "uncertain")


def trajectory_edges(
    trajectory: Trajectory, steps: Sequence[Step], subgoals: Sequence[Subgoal], granularity: str
) -> tuple[list[EdgeInput], dict[tuple[str, int], Any]]:
    """The trajectory's edges at this granularity, and the screens (by key) they join.

    A screen's key is (trajectory uid, step index); the screen after the last step is the
    trajectory's final screen, at index ``len(steps)``.
    """
    key = str(trajectory.uid)
    screen_at: dict[int, Any] = {step.index: step.screen for step in steps}
    last = len(steps)
    if trajectory.final_screen is not None:
        screen_at[last] = trajectory.final_screen

    def after(index: int) -> int:
        """The screen a step leads to: the next step's, or the final one, or its own."""
        return index + 1 if index + 1 in screen_at else index

    edges: list[EdgeInput] = []
    task = trajectory.task.uid
    if granularity == "subgoal":
        for subgoal in subgoals:
            if subgoal.start not in screen_at or subgoal.end not in screen_at:
                continue
            edges.append(
                EdgeInput(
                    source=(key, subgoal.start),
                    target=(key, after(subgoal.end)),
                    intent=subgoal.text.strip() or f"steps {subgoal.start}–{subgoal.end}",
                    success=_subgoal_success(subgoal, trajectory),
                    effect=subgoal.effect,
                    behaviour=subgoal.behaviour,
                    trajectory=key,
                    start=subgoal.start,
                    end=subgoal.end,
                    task=task,
                )
            )
    elif granularity == "action":
        containing = {i: sg for sg in subgoals for i in range(sg.start, sg.end + 1)}
        for step in steps:
            edges.append(
                EdgeInput(
                    source=(key, step.index),
                    target=(key, after(step.index)),
                    intent=_action_intent(step),
                    success=_subgoal_success(containing.get(step.index), trajectory),
                    behaviour=step.action_type,
                    trajectory=key,
                    start=step.index,
                    end=step.index,
                    task=task,
                )
            )
    elif steps:
        end = max(screen_at)
        edges.append(
            EdgeInput(
                source=(key, steps[0].index),
                target=(key, end),
                intent=trajectory.task.goal,
                success=SUCCESS_OF_OUTCOME.get(trajectory.outcome, "uncertain"),
                trajectory=key,
                start=steps[0].index,
                end=steps[-1].index,
                task=task,
            )
        )
    screens = {}
    for edge in edges:
        for screen_key in (edge.source, edge.target):
            screens[screen_key] = screen_at[screen_key[1]]
    return edges, screens


def labelled(trajectories, granularity: str):
    """The trajectories a graph of this granularity can be built from."""
    if granularity == "subgoal":
        return trajectories.filter(subgoals__isnull=False).distinct()
    return trajectories.filter(step_count__gt=0)


def gather_inputs(
    trajectories: Iterable[Trajectory],
    granularity: str,
    embedder: Embedder,
    progress: Callable[[int, int], None] | None = None,
) -> list[TrajectoryInput]:
    """Each trajectory's edges and boundary screens with their (cached) embeddings."""
    items: list[tuple[Trajectory, list[EdgeInput], dict]] = []
    for trajectory in trajectories:
        steps = list(
            Step.objects.filter(trajectory=trajectory)
            .select_related("screen", "screen__screenshot", "screen__ui_xml")
            .order_by("index")
        )
        subgoals = list(Subgoal.objects.filter(trajectory=trajectory).order_by("start"))
        edges, screens = trajectory_edges(trajectory, steps, subgoals, granularity)
        items.append((trajectory, edges, screens))
    all_screens = {s.pk: s for _, _, screens in items for s in screens.values()}
    vectors = embed_screen_rows(embedder, list(all_screens.values()), progress)
    return [
        TrajectoryInput(
            key=str(trajectory.uid),
            task=trajectory.task.uid,
            screens={
                key: (screen.screenshot_id, vectors[screen.pk]) for key, screen in screens.items()
            },
            edges=edges,
        )
        for trajectory, edges, screens in items
    ]


def text_vectors_for(embedder: Embedder, items: Sequence[TrajectoryInput]) -> dict[str, Any]:
    texts = sorted({edge.intent for item in items for edge in item.edges})
    return dict(zip(texts, embedder.embed_texts(texts), strict=True))


def embedder_info(embedder: Embedder) -> dict[str, Any]:
    info = {"name": embedder.name}
    if getattr(embedder, "model", ""):
        info["model"] = embedder.model
    return info


def build_graph(
    items: Sequence[TrajectoryInput],
    params: dict[str, Any],
    embedder: Embedder,
    extend: MemoryGraphData | None = None,
) -> MemoryGraphData:
    """The graph of ``items`` in order, or ``extend`` with ``items`` added after its own."""
    text_vectors = text_vectors_for(embedder, items)
    if extend is not None:
        builder = GraphBuilder.extending(extend)
    else:
        dim = next((len(v) for item in items for _, v in item.screens.values()), embedder.dim)
        text_dim = next(iter(text_vectors.values())).shape[0] if text_vectors else 0
        builder = GraphBuilder(params, embedder_info(embedder), dim, text_dim)
    for item in items:
        builder.add_trajectory(item, text_vectors)
    return builder.graph()
