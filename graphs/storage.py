"""A graph's data on disk and in its export.

Stored as one .npz: the node sums and sizes and the edges' intent vectors as arrays, nodes'
members and edges as one JSON document beside them; a graph of 100,000 nodes loads in one
read. The export is JSON with no database ids: screens are named by their screenshot's sha256
and (trajectory uid, step index), vectors as base64 float32, so importing it gives back the
same graph and exporting that gives the same JSON.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import numpy as np

from trajectories.validation import MAX_INT, InvalidData, check_field, shown

from .build import MemoryGraphData, check_params

EXPORT_FORMAT = "waypoint.memory_graph"
EXPORT_VERSION = 1
SUCCESS_LABELS = ("yes", "no", "uncertain")
# The longest vector an embedder may give: Qwen3-VL-Embedding's are 4,096 values; no
# embedder in use gives more than a few thousand.
MAX_DIM = 65_536


def to_npz_bytes(graph: MemoryGraphData) -> bytes:
    doc = {
        "params": graph.params,
        "embedder": graph.embedder,
        "dim": graph.dim,
        "text_dim": graph.text_dim,
        "members": graph.members,
        "edges": graph.edges,
        "trajectories": graph.trajectories,
    }
    out = io.BytesIO()
    np.savez(
        out,
        sums=graph.sums.astype(np.float32),
        counts=graph.counts.astype(np.int64),
        edge_vectors=graph.edge_vectors.astype(np.float32),
        doc=np.frombuffer(json.dumps(doc, separators=(",", ":")).encode(), dtype=np.uint8),
    )
    return out.getvalue()


def from_npz(handle) -> MemoryGraphData:
    with np.load(handle, allow_pickle=False) as data:
        doc = json.loads(data["doc"].tobytes())
        return MemoryGraphData(
            params=doc["params"],
            embedder=doc["embedder"],
            dim=doc["dim"],
            text_dim=doc["text_dim"],
            sums=data["sums"],
            counts=data["counts"],
            members=doc["members"],
            edges=doc["edges"],
            edge_vectors=data["edge_vectors"],
            trajectories=doc["trajectories"],
        )


def _b64(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


def _from_b64(text: Any, dim: int, where: str) -> np.ndarray:
    if not isinstance(text, str):
        raise InvalidData(f"{where}: must be base64 text of float32 values")
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raise InvalidData(f"{where}: not base64") from None
    if len(raw) != 4 * dim:
        raise InvalidData(f"{where}: {len(raw) // 4} values, expected {dim}")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)


def _dimension(embedder: dict[str, Any], name: str) -> int:
    """A vector length the export states: checked before anything is sized by it."""
    value = check_field(embedder, name, int, "embedder")
    if not 1 <= value <= MAX_DIM:
        raise InvalidData(f"embedder.{name}: must be between 1 and {MAX_DIM}, got {shown(value)}")
    return value


def _matrix(rows: list[np.ndarray], dim: int) -> np.ndarray:
    """The checked vectors as one float32 array (``(0, dim)`` when there are none)."""
    if not rows:
        return np.zeros((0, dim), dtype=np.float32)
    return np.stack(rows).astype(np.float32, copy=False)


def export_graph(graph: MemoryGraphData, inputs: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "format_version": EXPORT_VERSION,
        "params": graph.params,
        "embedder": {**graph.embedder, "dim": graph.dim, "text_dim": graph.text_dim},
        "inputs": inputs,
        "nodes": [
            {
                "index": i,
                "size": int(graph.counts[i]),
                "members": graph.members[i],
                "sum": _b64(graph.sums[i]),
            }
            for i in range(graph.node_count)
        ],
        "edges": [
            {**edge, "intent_vector": _b64(graph.edge_vectors[i])}
            for i, edge in enumerate(graph.edges)
        ],
    }


def import_graph(doc: Any) -> tuple[MemoryGraphData, dict[str, Any]]:
    """A graph and its inputs from an export; every field checked, the place of a bad one named.

    A bad export is well-formed JSON with the wrong content (like an archive that is not one):
    :class:`InvalidData`, a 422."""
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise InvalidData(f"format: not a memory graph export (expected {EXPORT_FORMAT!r})")
    if doc.get("format_version") != EXPORT_VERSION:
        raise InvalidData(f"format_version: must be {EXPORT_VERSION}")
    try:
        params = check_params(check_field(doc, "params", dict, "graph"))
    except InvalidData as exc:  # the file's content, not the request, is wrong: a 422
        raise InvalidData(str(exc)) from None
    embedder = check_field(doc, "embedder", dict, "graph")
    dim = _dimension(embedder, "dim")
    text_dim = _dimension(embedder, "text_dim")
    name = check_field(embedder, "name", str, "embedder")
    if name != params["embedder"]:
        raise InvalidData(
            f"embedder.name: {shown(name)} is not the params' {shown(params['embedder'])}"
        )
    inputs = doc.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise InvalidData("inputs: must be an object")
    nodes = check_field(doc, "nodes", list, "graph")
    edges = check_field(doc, "edges", list, "graph")
    # Vectors are decoded, each checked against the dimension, before an array is made of
    # them: the arrays are as large as the data sent, never as large as a number in it says.
    sums, counts, members = [], [], []
    for i, node in enumerate(nodes):
        where = f"nodes[{i}]"
        if check_field(node, "index", int, where) != i:
            raise InvalidData(f"{where}.index: must be {i} (nodes in order)")
        size = check_field(node, "size", int, where)
        if not 0 <= size <= MAX_INT:
            raise InvalidData(f"{where}.size: must be between 0 and {MAX_INT}, got {size}")
        counts.append(size)
        sums.append(_from_b64(node.get("sum"), dim, f"{where}.sum"))
        node_members = check_field(node, "members", list, where)
        for j, member in enumerate(node_members):
            check_field(member, "trajectory", str, f"{where}.members[{j}]")
            check_field(member, "step", int, f"{where}.members[{j}]")
            check_field(member, "screenshot", str, f"{where}.members[{j}]")
        members.append(node_members)
    vectors, kept = [], []
    for i, edge in enumerate(edges):
        where = f"edges[{i}]"
        for end in ("source", "target"):
            value = check_field(edge, end, int, where)
            if not 0 <= value < len(nodes):
                raise InvalidData(f"{where}.{end}: no node {value}")
        for text in ("intent", "effect", "behaviour", "task", "trajectory"):
            check_field(edge, text, str, where)
        if check_field(edge, "success", str, where) not in SUCCESS_LABELS:
            raise InvalidData(f"{where}.success: must be one of {', '.join(SUCCESS_LABELS)}")
        check_field(edge, "duplicates", list, where)
        vectors.append(_from_b64(edge.get("intent_vector"), text_dim, f"{where}.intent_vector"))
        kept.append({k: v for k, v in edge.items() if k != "intent_vector"})
    trajectories = inputs.get("trajectories", [])
    if not isinstance(trajectories, list) or not all(isinstance(t, str) for t in trajectories):
        raise InvalidData("inputs.trajectories: must be a list of trajectory ids")
    graph = MemoryGraphData(
        params=params,
        embedder={k: v for k, v in embedder.items() if k not in ("dim", "text_dim")},
        dim=dim,
        text_dim=text_dim,
        sums=_matrix(sums, dim),
        counts=np.asarray(counts, dtype=np.int64),
        members=members,
        edges=kept,
        edge_vectors=_matrix(vectors, text_dim),
        trajectories=list(trajectories),
    )
    return graph, inputs
