"""Nearest-node search over a graph's running means, kept in process memory per graph.

The unit means are one float32 matrix: a query is one matrix-vector product and an
``argpartition``, a few milliseconds at 100,000 nodes. A loaded graph stays cached by its id
and file name (a new build is a new graph, so a cached one never goes stale).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from django.core.files.storage import default_storage

from .build import MemoryGraphData
from .embedders import normalise
from .models import MemoryGraph
from .storage import from_npz

CACHE_SIZE = 4


@dataclass
class NodeIndex:
    graph: MemoryGraphData
    means: np.ndarray  # [n, dim] unit float32
    outgoing: list[list[int]]
    parts: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def means_in(self, columns: slice) -> tuple[np.ndarray, np.ndarray]:
        """(unit means, centre) of one part of the embedder's vectors (a screenshot's look):
        a query that has only that part is compared on it alone. The part is centred on the
        graph's typical value first: every screen of an app shares most of its look (bars,
        background), and only what sets a page apart tells pages apart."""
        key = (columns.start, columns.stop)
        if key not in self.parts:
            part = normalise(self.means[:, columns])
            centre = part.mean(axis=0) if len(part) > 1 else np.zeros(part.shape[1], np.float32)
            self.parts[key] = (np.ascontiguousarray(normalise(part - centre)), centre)
        return self.parts[key]

    @classmethod
    def of(cls, graph: MemoryGraphData) -> NodeIndex:
        return cls(graph, np.ascontiguousarray(graph.unit_means()), graph.outgoing())

    def nearest(
        self,
        query: np.ndarray,
        k: int,
        skip: np.ndarray | None = None,
        columns: slice | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` nodes of highest cosine with the unit vector ``query``, best first;
        ``skip`` is a mask of nodes left out; ``columns``: compare on that part alone."""
        n = len(self.means)
        if not n:
            return []
        query = np.asarray(query, dtype=np.float32)
        if columns is None:
            scores = self.means @ query
        else:
            means, centre = self.means_in(columns)
            scores = means @ normalise(normalise(query[columns]) - centre)
        if skip is not None:
            scores[skip] = -np.inf
            n = int(len(scores) - skip.sum())
            if not n:
                return []
        k = min(k, n)
        if k < len(scores):
            top = np.argpartition(-scores, k - 1)[:k]
        else:
            top = np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        top = top[np.isfinite(scores[top])]
        return [(int(i), float(scores[i])) for i in top]


_cache: OrderedDict[tuple[int, str, str], NodeIndex] = OrderedDict()
_lock = threading.Lock()


def index_of(graph: MemoryGraph) -> NodeIndex:
    key = (graph.pk, graph.file.name, graph.created_at.isoformat())
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    with default_storage.open(graph.file.name, "rb") as handle:
        index = NodeIndex.of(from_npz(handle))
    with _lock:
        _cache[key] = index
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return index


def load_graph(graph: MemoryGraph) -> MemoryGraphData:
    return index_of(graph).graph
