"""Graphs drawn as server-side SVG: a force layout computed here, the page only pans and zooms.

A drawing takes plain nodes and edges (a memory graph's or an app knowledge graph's) and places
them with a Fruchterman-Reingold layout (numpy, deterministic). Past ``MAX_DRAWN`` nodes only the
largest are drawn, with the edges between them, and the drawing says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

MAX_DRAWN = 300  # nodes drawn at most; more is unreadable and slow to lay out on the server
ITERATIONS = 120
LABEL_HEIGHT = 32.0  # the name and size written under a card


@dataclass
class DrawNode:
    id: str
    label: str
    size: int  # member screens
    thumb: str = ""  # a member screenshot's sha256
    app: str = ""
    kind: str = "state"
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0  # the card's size in the drawing (its glyph times ``scale``)
    h: float = 0.0
    scale: float = 1.0

    # The card is drawn at its glyph size, scaled as a whole by ``scale``.
    @property
    def left(self) -> str:
        return f"{-self.w / self.scale / 2:.1f}"

    @property
    def top(self) -> str:
        return f"{-self.h / self.scale / 2:.1f}"

    @property
    def bottom(self) -> str:
        return f"{self.h / self.scale / 2:.1f}"

    @property
    def glyph_w(self) -> str:
        return f"{self.w / self.scale:.1f}"

    @property
    def glyph_h(self) -> str:
        return f"{self.h / self.scale:.1f}"

    @property
    def short_label(self) -> str:
        """What fits under the card: the end of a long description is cut."""
        text = self.label.split(" · ", 1)[-1] if " · " in self.label else self.label
        return text if len(text) <= 22 else text[:21] + "…"


@dataclass
class DrawEdge:
    id: str
    source: str
    target: str
    label: str
    success: str = ""  # yes / no / uncertain for subgoals; "" for transitions
    kind: str = "edge"  # "self" for a self-loop
    count: int = 1
    path: str = ""
    apps: tuple[str, ...] = ()
    scale: float = 1.0

    @property
    def stroke(self) -> str:
        """Thicker for a transition or subgoal seen more often."""
        return f"{self.scale * min(6.0, 1.4 + 0.8 * math.log2(max(self.count, 1))):.1f}"


@dataclass
class Drawing:
    width: int
    height: int
    nodes: list[DrawNode]
    edges: list[DrawEdge]
    total_nodes: int
    total_edges: int
    apps: list[str] = field(default_factory=list)
    scale: float = 1.0  # of the cards, arrows and labels: large graphs are seen from afar

    @property
    def marker(self) -> str:
        return f"{11 * self.scale:.1f}"

    @property
    def capped(self) -> bool:
        return self.total_nodes > len(self.nodes)


def node_box(size: int) -> tuple[float, float]:
    """A node is a phone-shaped card; more member screens make it larger (by area)."""
    w = min(96.0, 34.0 + 8.0 * math.sqrt(max(size, 1)))
    return w, w * 1.6


def _layout(n: int, pairs: list[tuple[int, int]], side: float, seed: int = 7) -> np.ndarray:
    """Fruchterman-Reingold positions in a ``side`` square."""
    if n == 0:
        return np.zeros((0, 2))
    rng = np.random.default_rng(seed)
    # Start on a spiral (the first, largest nodes in the middle), with a little noise.
    angles = np.arange(n) * 2.399963  # the golden angle
    radii = side * 0.45 * np.sqrt((np.arange(n) + 0.5) / n)
    pos = np.stack([np.cos(angles) * radii, np.sin(angles) * radii], axis=1).astype(np.float32)
    pos += rng.normal(0, side * 0.01, pos.shape).astype(np.float32)
    if n == 1:
        return pos
    k = side / math.sqrt(n) * 0.9  # the ideal distance
    links = np.array(pairs, dtype=int).reshape(-1, 2)
    temperature = side / 8
    # Gravity grows with the square of the distance from the centre, so that at the rim of a
    # disc of diameter ``side`` it balances the repulsion of all the others: long chains fold
    # up inside the canvas instead of running off (or piling up on its edge).
    gravity = n * k * k / (side / 2) ** 3
    for _ in range(ITERATIONS):
        dx = pos[:, 0, None] - pos[None, :, 0]
        dy = pos[:, 1, None] - pos[None, :, 1]
        dist2 = dx * dx + dy * dy + 1e-3
        np.fill_diagonal(dist2, np.inf)
        force = (k * k) / dist2
        move = np.stack([(force * dx).sum(axis=1), (force * dy).sum(axis=1)], axis=1)
        if len(links):
            d = pos[links[:, 0]] - pos[links[:, 1]]
            length = np.sqrt((d**2).sum(axis=1))[:, None] + 1e-6
            pull = d * length / k
            np.add.at(move, links[:, 0], -pull)
            np.add.at(move, links[:, 1], pull)
        move -= pos * gravity * (np.sqrt((pos**2).sum(axis=1))[:, None] + 1e-6)
        norm = np.sqrt((move**2).sum(axis=1))[:, None] + 1e-9
        pos += move / norm * np.minimum(norm, temperature)
        temperature = max(temperature * 0.96, side / 400)
    return pos


def _edge_path(a: DrawNode, b: DrawNode, bend: float, loop: int = 0) -> str:
    if a.id == b.id:
        # A self-loop: an arc over the node's top right corner, each further one a size larger.
        x, y, s = a.x + a.w / 2, a.y - a.h / 2, a.scale
        r = (26 + 12 * min(loop, 8)) * s
        return (
            f"M{x - 10 * s:.1f},{y:.1f} C{x - 4 * s:.1f},{y - r:.1f} "
            f"{x + r:.1f},{y + 4 * s:.1f} {x + 3 * s:.1f},{y + 10 * s:.1f}"
        )
    dx, dy = b.x - a.x, b.y - a.y
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length

    def rim(node: DrawNode, sx: float, sy: float) -> tuple[float, float]:
        # Where the ray from the centre leaves the node's box (below it: its two label lines).
        below = LABEL_HEIGHT * node.scale if sy > 0 else 0.0
        tx = (node.w / 2) / abs(sx) if sx else math.inf
        ty = (node.h / 2 + below) / abs(sy) if sy else math.inf
        t = min(tx, ty) + 3
        return node.x + sx * t, node.y + sy * t

    x1, y1 = rim(a, ux, uy)
    x2, y2 = rim(b, -ux, -uy)
    # Two edges between one pair in opposite directions bend apart instead of overlapping.
    mx, my = (x1 + x2) / 2 - uy * bend, (y1 + y2) / 2 + ux * bend
    return f"M{x1:.1f},{y1:.1f} Q{mx:.1f},{my:.1f} {x2:.1f},{y2:.1f}"


def draw(nodes: list[DrawNode], edges: list[DrawEdge], max_nodes: int | None = None) -> Drawing:
    """Lay the graph out; past ``max_nodes`` (default :data:`MAX_DRAWN`) only the largest nodes
    (and the edges between them) are kept."""
    max_nodes = MAX_DRAWN if max_nodes is None else max_nodes
    total_nodes, total_edges = len(nodes), len(edges)
    apps = sorted({n.app for n in nodes if n.app})
    kept = sorted(nodes, key=lambda n: -n.size)[:max_nodes]
    index = {n.id: i for i, n in enumerate(kept)}
    edges = [e for e in edges if e.source in index and e.target in index]
    side = max(520.0, 190.0 * math.sqrt(len(kept)))
    pairs = sorted({(index[e.source], index[e.target]) for e in edges if e.source != e.target})
    pos = _layout(len(kept), pairs, side)
    if len(kept):
        pos = pos - pos.min(axis=0)
        if pos[:, 1].max() > pos[:, 0].max():
            pos = pos[:, ::-1]  # lying down: the page's drawing area is wider than tall
    extent = float(pos.max()) if len(kept) else 0.0
    # Fitted in a window about 1,000 px wide, a large drawing is seen from afar: its cards,
    # arrows and labels grow with it, so that they stay visible (and readable once zoomed in).
    # Never so large that neighbours (about ``spacing`` apart) overlap.
    spacing = side / math.sqrt(max(len(kept), 1)) * 0.9
    scale = max(1.0, min(extent / 1500.0, 0.45 * spacing / node_box(1)[1]))
    for n in kept:
        w, h = node_box(n.size)
        n.w, n.h, n.scale = w * scale, h * scale, scale
    for e in edges:
        e.scale = scale
    # Room around for the largest card with its label below and its self-loops above.
    margin = max((n.h / 2 for n in kept), default=0.0) + 70.0 * scale
    span = pos.max(axis=0) if len(kept) else np.zeros(2)
    # A small graph is centred on a canvas of at least 760 x 480, not blown up to the window.
    width, height = max(760.0, span[0] + 2 * margin), max(480.0, span[1] + 2 * margin)
    pos = pos + [(width - span[0]) / 2, (height - span[1]) / 2]
    for n, (x, y) in zip(kept, pos, strict=True):
        n.x, n.y = float(x), float(y)
    pair_set = set(pairs)
    seen: dict[tuple[str, str], int] = {}
    for e in edges:
        a, b = kept[index[e.source]], kept[index[e.target]]
        reverse = (index[e.target], index[e.source]) in pair_set
        e.kind = "self" if a.id == b.id else e.kind
        # Parallel edges (one pair, one direction) fan out instead of lying on each other.
        nth = seen.get((a.id, b.id), 0)
        seen[(a.id, b.id)] = nth + 1
        bend = ((18.0 if reverse else 6.0) + 14.0 * nth) * scale
        e.path = _edge_path(a, b, bend, loop=nth)
    return Drawing(
        width=int(width),
        height=int(height),
        nodes=kept,
        edges=edges,
        total_nodes=total_nodes,
        total_edges=total_edges,
        apps=apps,
        scale=scale,
    )
