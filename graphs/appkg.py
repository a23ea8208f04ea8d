"""UI-KOBE's app knowledge graph, built from recorded trajectories instead of exploration.

Per app, a node is a UI state (a page) and an edge is one observed single-action transition
(``../shared/papers/ui-kobe.txt``, section 3). UI-KOBE identifies the state of a new screen by a
description embedding and then verifies the candidate with the reference screenshot; here the
description is what the screen declares about itself (its activity and its XML structure) and the
verification is an image signature:

1. candidates are the app's nodes with the same activity (when both screens name one) whose
   reference screen's structure is similar enough (the same ``structure_signature``, or a Jaccard
   similarity of the sets of structure tokens at least ``structure_threshold``);
2. the best candidate is verified by look: the correlation of a coarse grey thumbnail (the
   default embedder's ``image_signature``) with the node's reference screenshot must be at least
   ``look_threshold``;
3. a screen that no node takes starts a new node (its first screen becomes the reference).

Every step becomes an edge from its screen's node to the next screen's node, with the action, the
step's summary as the instruction and the element hit as the target observation. Identical
transitions (same nodes, action type and target element) are one edge with several occurrences.
A self-loop (the same node before and after) carries a schema delta: the XML fields that changed.
A step that leaves the app leads to an ``external`` node named after the package it reached.

The module is pure Python (no database): :func:`build_app_graph` takes
:class:`TrajectoryInput` s; ``graphs.appkg_jobs`` reads them from a project.
Graphs are exported as canonical JSON with no database ids (:func:`dump_app_graph`) and read back
with every field checked (:func:`load_app_graph`): export, import and export again give the same
bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from trajectories.bounds import load_json
from trajectories.uixml import UIElement, UITree, UIXmlError, parse_ui_xml
from trajectories.validation import InvalidData, check_field, shown

from .embedders import image_signature

FORMAT = "waypoint-app-graph"
FORMAT_VERSION = 1

DELTA_FIELDS = ("text", "content_desc", "checked", "selected", "focused", "enabled", "password")
MAX_DELTA = 40  # changed fields kept per self-loop (the count says how many there were)
MAX_INTERACTABLES = 40


@dataclass(frozen=True)
class AppGraphParams:
    """How screens are merged into states."""

    structure_threshold: float = 0.8
    look_threshold: float = 0.5
    use_activity: bool = True

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None, where: str = "params") -> AppGraphParams:
        """Check user-given parameters; unknown names and values out of range are refused."""
        data = dict(data or {})
        if not isinstance(data, dict):
            raise InvalidData(f"{where}: must be an object")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidData(
                f"{where}: unknown parameter {shown(unknown[0])} "
                f"(known: {', '.join(sorted(known))})"
            )
        values: dict[str, Any] = {}
        for name in ("structure_threshold", "look_threshold"):
            if name not in data:
                continue
            value = data[name]
            if isinstance(value, str):
                try:
                    value = float(value)
                except ValueError:
                    raise InvalidData(
                        f"{where}.{name}: must be a number, got {shown(value)}"
                    ) from None
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidData(f"{where}.{name}: must be a number, got {shown(value)}")
            if not 0.0 <= value <= 1.0:
                raise InvalidData(f"{where}.{name}: must be between 0 and 1, got {value}")
            values[name] = float(value)
        if "use_activity" in data:
            value = data["use_activity"]
            if not isinstance(value, bool):
                raise InvalidData(
                    f"{where}.use_activity: must be true or false, got {shown(value)}"
                )
            values["use_activity"] = value
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------------------------- input


@dataclass
class ScreenInput:
    """One observed screen; ``screenshot`` may be left out when ``look`` (its
    :func:`~graphs.embedders.image_signature`) is given."""

    sha256: str
    package: str = ""
    activity: str = ""
    ui_xml: bytes | None = None
    screenshot: bytes | None = None
    look: np.ndarray | None = None


@dataclass
class StepInput:
    index: int
    action_type: str
    action: dict[str, Any]
    target: dict[str, Any] | None = None
    summary: str = ""


@dataclass
class TrajectoryInput:
    """A trajectory: ``screens[i]`` is the screen before ``steps[i]``; one more screen at the end
    (the final screen) when it is known."""

    key: str
    screens: list[ScreenInput]
    steps: list[StepInput]


# ----------------------------------------------------------------------------------- signals


def look_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """The correlation of two image signatures (1: the same look)."""
    if a.size == 0 or b.size == 0 or a.shape != b.shape:
        return 0.0
    return float(a @ b)


def _structure_tokens(tree: UITree) -> frozenset[str]:
    # A set, not a multiset: a list showing five rows and one showing nine are the same page.
    return frozenset(tree.structure_tokens())


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass
class _Screen:
    """A screen with the signals used to place it."""

    sha256: str
    package: str
    activity: str
    tree: UITree | None
    signature: str
    tokens: frozenset[str]
    look: np.ndarray


# ------------------------------------------------------------------------------------ output


@dataclass
class Member:
    screen: str  # screenshot sha256
    trajectory: str  # trajectory key (uid)
    step: int  # index of the step this screen is before (the final screen: the step count)


@dataclass
class Node:
    id: str
    kind: str  # "state", or "external" for another app a step reached
    package: str
    activity: str
    structure: str
    reference: str  # sha256 of the reference screenshot ("" for an external node)
    description: str
    interactables: list[dict[str, Any]] = field(default_factory=list)
    members: list[Member] = field(default_factory=list)


@dataclass
class Occurrence:
    trajectory: str
    step: int


@dataclass
class Edge:
    id: str
    source: str
    target: str
    action_type: str
    action: dict[str, Any]
    instruction: str
    target_observation: dict[str, Any]
    self_loop: bool
    schema_delta: dict[str, Any] | None
    occurrences: list[Occurrence] = field(default_factory=list)


@dataclass
class AppKnowledgeGraph:
    app: str
    params: AppGraphParams
    nodes: list[Node]
    edges: list[Edge]
    stats: dict[str, int]

    def node(self, node_id: str) -> Node:
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "app": self.app,
            "params": self.params.to_dict(),
            "stats": dict(self.stats),
            "nodes": [asdict(n) for n in self.nodes],
            "edges": [asdict(e) for e in self.edges],
        }


# ------------------------------------------------------------------------------------- build


class _Builder:
    def __init__(self, app: str, params: AppGraphParams):
        self.app = app
        self.params = params
        self.nodes: list[Node] = []
        self.refs: list[_Screen] = []  # each state node's reference screen, by node position
        self.by_signature: dict[str, list[int]] = {}
        self.externals: dict[str, Node] = {}
        self.edges: dict[tuple, Edge] = {}
        self.stats = {
            "screens": 0,
            "steps": 0,
            "self_loops": 0,
            "unreadable_xml": 0,
            "steps_without_next_screen": 0,
        }

    # ------------------------------------------------------------------ states

    def place(self, screen: _Screen, member: Member) -> Node:
        """The node of an app screen: the best verified candidate, or a new one."""
        self.stats["screens"] += 1
        index = self._match(screen)
        if index is None:
            index = len(self.nodes)
            self.nodes.append(
                Node(
                    id=f"n{index + 1}",
                    kind="state",
                    package=screen.package or self.app,
                    activity=screen.activity,
                    structure=screen.signature,
                    reference=screen.sha256,
                    description=_describe(screen),
                    interactables=_interactables(screen.tree),
                )
            )
            self.refs.append(screen)
            self.by_signature.setdefault(screen.signature, []).append(index)
        node = self.nodes[index]
        node.members.append(member)
        return node

    def _match(self, screen: _Screen) -> int | None:
        """Nodes of the same structure signature first; failing those, any node."""
        exact = self.by_signature.get(screen.signature, []) if screen.signature else []
        found = self._best(screen, exact)
        if found is None:
            others = set(exact)
            found = self._best(screen, (i for i in range(len(self.refs)) if i not in others))
        return found

    def _best(self, screen: _Screen, indexes: Iterable[int]) -> int | None:
        p = self.params
        best: tuple[float, float, int] | None = None
        for i in indexes:
            ref = self.refs[i]
            if p.use_activity and screen.activity and ref.activity:
                if screen.activity != ref.activity:
                    continue
            if (screen.tree is None) != (ref.tree is None):
                continue  # one has an XML dump and the other not: compare like with like
            structure = 1.0
            if screen.tree is not None and screen.signature != ref.signature:
                structure = _jaccard(screen.tokens, ref.tokens)
                if structure < p.structure_threshold:
                    continue
            look = look_similarity(screen.look, ref.look)
            # Without XML on either side, the look alone decides: demand more of it.
            needed = p.look_threshold if screen.tree is not None else max(p.look_threshold, 0.9)
            if look >= needed and (best is None or (structure, look, -i) > best):
                best = (structure, look, -i)
        return -best[2] if best else None

    def external(self, package: str) -> Node:
        node = self.externals.get(package)
        if node is None:
            node = Node(
                id=f"x{len(self.externals) + 1}",
                kind="external",
                package=package,
                activity="",
                structure="",
                reference="",
                description=f"left the app for {package or 'an unknown app'}",
            )
            self.externals[package] = node
        return node

    # ------------------------------------------------------------------ transitions

    def transition(
        self,
        key: str,
        step: StepInput,
        source: Node,
        target: Node,
        before: _Screen,
        after: _Screen,
    ) -> None:
        self.stats["steps"] += 1
        observation = _target_observation(step, before)
        self_loop = source.id == target.id
        delta = _schema_delta(before, after) if self_loop else None
        identity = (
            source.id,
            target.id,
            step.action_type,
            observation.get("resource_id", ""),
            observation.get("class", ""),
            observation.get("text", ""),
            json.dumps(_action_shape(step), sort_keys=True),
        )
        edge = self.edges.get(identity)
        if edge is None:
            edge = Edge(
                id=f"e{len(self.edges) + 1}",
                source=source.id,
                target=target.id,
                action_type=step.action_type,
                action=dict(step.action),
                instruction=step.summary,
                target_observation=observation,
                self_loop=self_loop,
                schema_delta=delta,
            )
            self.edges[identity] = edge
        if self_loop:
            self.stats["self_loops"] += 1
        edge.occurrences.append(Occurrence(trajectory=key, step=step.index))

    def result(self) -> AppKnowledgeGraph:
        nodes = [*self.nodes, *self.externals.values()]
        edges = list(self.edges.values())
        stats = {
            **self.stats,
            "nodes": len(self.nodes),
            "external_nodes": len(self.externals),
            "edges": len(edges),
        }
        return AppKnowledgeGraph(self.app, self.params, nodes, edges, stats)


def _action_shape(step: StepInput) -> dict[str, Any]:
    """What makes two actions the same transition: typed text, a key, a swipe's direction."""
    a = step.action
    if step.action_type == "type":
        return {"text": a.get("text", "")}
    if step.action_type == "key":
        return {"keycode": a.get("keycode", "")}
    if step.action_type == "swipe":
        dx, dy = a.get("x2", 0) - a.get("x", 0), a.get("y2", 0) - a.get("y", 0)
        return {
            "direction": ("right" if dx > 0 else "left")
            if abs(dx) > abs(dy)
            else ("down" if dy > 0 else "up")
        }
    if step.action_type == "open_app":
        return {"package": a.get("package", "")}
    return {}


def _describe(screen: _Screen) -> str:
    """A short page description: the activity's last name and the top text of the screen."""
    name = screen.activity.rsplit(".", 1)[-1] if screen.activity else ""
    title = ""
    if screen.tree is not None:
        texts = [el for el in screen.tree.elements if el.text.strip() and el.area > 0]
        if texts:
            title = min(texts, key=lambda el: (el.bounds[1], el.bounds[0])).text.strip()[:60]
    return " · ".join(part for part in (name, title) if part) or screen.package or "screen"


def _element_fields(el: UIElement) -> dict[str, Any]:
    return {
        "class": el.class_name,
        "resource_id": el.resource_id,
        "text": el.text,
        "content_desc": el.content_desc,
        "bounds": list(el.bounds),
    }


def _interactables(tree: UITree | None) -> list[dict[str, Any]]:
    if tree is None:
        return []
    return [_element_fields(el) for el in tree.interactable()[:MAX_INTERACTABLES]]


def _target_observation(step: StepInput, before: _Screen) -> dict[str, Any]:
    """The element the action hit: the step's stored target, else a hit test on its XML."""
    if step.target:
        t = step.target
        return {
            "class": str(t.get("class", "")),
            "resource_id": str(t.get("resource_id", "")),
            "text": str(t.get("text", "")),
            "content_desc": str(t.get("content_desc", "")),
            "bounds": list(t.get("bounds") or []),
        }
    x, y = step.action.get("x"), step.action.get("y")
    if before.tree is not None and isinstance(x, int | float) and isinstance(y, int | float):
        el = before.tree.element_at(x, y)
        if el is not None:
            return _element_fields(el)
    return {}


def _schema_delta(before: _Screen, after: _Screen) -> dict[str, Any]:
    """Which XML fields changed between two screens of one state, node by node (by path)."""
    if before.tree is None or after.tree is None:
        return {"changes": [], "count": 0, "compared": False}
    old = {el.path: el for el in before.tree.elements}
    new = {el.path: el for el in after.tree.elements}
    changes: list[dict[str, Any]] = []
    for path in sorted(old.keys() | new.keys(), key=_path_key):
        a, b = old.get(path), new.get(path)
        if a is None or b is None:
            el = a or b
            changes.append(
                {
                    "path": path,
                    "class": el.class_name,
                    "resource_id": el.resource_id,
                    "field": "node",
                    "before": "present" if a else "absent",
                    "after": "present" if b else "absent",
                }
            )
            continue
        for name in DELTA_FIELDS:
            va, vb = getattr(a, name), getattr(b, name)
            if va != vb:
                changes.append(
                    {
                        "path": path,
                        "class": b.class_name,
                        "resource_id": b.resource_id,
                        "field": name,
                        "before": va,
                        "after": vb,
                    }
                )
    return {"changes": changes[:MAX_DELTA], "count": len(changes), "compared": True}


def _path_key(path: str) -> tuple[int, ...]:
    return tuple(int(p) for p in path.split("/") if p.isdigit())


def _prepare(screen: ScreenInput, where: str, stats: dict[str, int]) -> _Screen:
    tree: UITree | None = None
    if screen.ui_xml:
        try:
            tree = parse_ui_xml(screen.ui_xml)
        except UIXmlError:
            stats["unreadable_xml"] += 1  # placed by its look alone, like a screen without XML
    if screen.look is not None:
        look = np.asarray(screen.look, dtype=np.float32)
    elif screen.screenshot is not None:
        look = image_signature(screen.screenshot, f"{where} screenshot {screen.sha256[:12]}")
    else:
        raise InvalidData(f"{where}: screen {screen.sha256[:12]} has neither screenshot nor look")
    return _Screen(
        sha256=screen.sha256,
        package=screen.package or (tree.package if tree else ""),
        activity=screen.activity,
        tree=tree,
        signature=tree.structure_signature() if tree else "",
        tokens=_structure_tokens(tree) if tree else frozenset(),
        look=look,
    )


def build_app_graph(
    app: str,
    trajectories: Iterable[TrajectoryInput],
    params: AppGraphParams | None = None,
    progress: Callable[[int], None] | None = None,
) -> AppKnowledgeGraph:
    """The app's knowledge graph from the steps taken on its screens, in the given order."""
    if not app:
        raise InvalidData("app: name the app (package) to build the graph of")
    params = params or AppGraphParams()
    builder = _Builder(app, params)
    looks: dict[str, np.ndarray] = {}  # screenshots shared between steps decode once
    seen = 0
    for t in trajectories:
        if len(t.screens) < len(t.steps):
            raise InvalidData(
                f"trajectory {t.key}: {len(t.steps)} steps but only {len(t.screens)} screens"
            )
        prepared: list[_Screen] = []
        for i, s in enumerate(t.screens):
            if s.look is None and s.sha256 in looks:
                s = ScreenInput(s.sha256, s.package, s.activity, s.ui_xml, None, looks[s.sha256])
            p = _prepare(s, f"trajectory {t.key} screen {i}", builder.stats)
            looks[s.sha256] = p.look
            prepared.append(p)
        nodes: list[Node | None] = []
        for i, p in enumerate(prepared):
            in_app = p.package == app
            nodes.append(builder.place(p, Member(p.sha256, t.key, i)) if in_app else None)
        for step in t.steps:
            i = step.index
            source = nodes[i] if i < len(nodes) else None
            if source is None:
                continue  # a step taken outside the app is not the app's transition
            if i + 1 >= len(prepared):
                builder.stats["steps_without_next_screen"] += 1  # no final screen recorded
                continue
            after = prepared[i + 1]
            target = nodes[i + 1] or builder.external(after.package)
            builder.transition(t.key, step, source, target, prepared[i], after)
        seen += 1
        if progress:
            progress(seen)
    graph = builder.result()
    if not graph.nodes:
        raise InvalidData(f"app {app}: no screen of this app in the selected trajectories")
    return graph


class StatePlacer:
    """The graph's node matching, one screen at a time: an exploration (``explore/``) names the
    state it is in as the graph built from its trajectories will.

    Placing the same screens in the same order gives the same node ids, so a placer is rebuilt
    from its nodes' reference screens alone (``place`` each of them, in node order).
    """

    def __init__(self, app: str, params: AppGraphParams | None = None):
        self._builder = _Builder(app, params or AppGraphParams())

    def place(self, screen: ScreenInput) -> tuple[str, bool]:
        """The id of the screen's node, and whether the screen started it."""
        before = len(self._builder.nodes)
        prepared = _prepare(screen, f"screen {screen.sha256[:12]}", self._builder.stats)
        node = self._builder.place(prepared, Member(screen.sha256, "", 0))
        return node.id, len(self._builder.nodes) > before


# ------------------------------------------------------------------------------ export/import


def dump_app_graph(graph: AppKnowledgeGraph) -> bytes:
    """Canonical JSON: the same graph always gives the same bytes."""
    text = json.dumps(graph.to_dict(), sort_keys=True, ensure_ascii=False, indent=1)
    return (text + "\n").encode()


def load_app_graph(data: bytes | str | Mapping[str, Any]) -> AppKnowledgeGraph:
    """Read an exported graph, checking every field; errors name the place."""
    if isinstance(data, bytes | str):
        try:
            obj = load_json(data, "app graph")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InvalidData(f"app graph: not JSON ({exc})") from None
    else:
        obj = data
    if not isinstance(obj, dict):
        raise InvalidData("app graph: must be a JSON object")
    if obj.get("format") != FORMAT:
        raise InvalidData(f"app graph: format must be {FORMAT!r}, got {shown(obj.get('format'))}")
    if obj.get("version") != FORMAT_VERSION:
        raise InvalidData(
            f"app graph: version {shown(obj.get('version'))} is not supported "
            f"(expected {FORMAT_VERSION})"
        )
    app = check_field(obj, "app", str, "app graph")
    if not app:
        raise InvalidData("app graph.app: must not be empty")
    params = AppGraphParams.from_mapping(check_field(obj, "params", dict, "app graph"), "params")
    stats = check_field(obj, "stats", dict, "app graph")
    nodes: list[Node] = []
    ids: set[str] = set()
    for n, raw in enumerate(check_field(obj, "nodes", list, "app graph")):
        where = f"nodes[{n}]"
        if not isinstance(raw, dict):
            raise InvalidData(f"{where}: must be an object")
        node_id = check_field(raw, "id", str, where)
        if node_id in ids:
            raise InvalidData(f"{where}.id: {shown(node_id)} is used twice")
        ids.add(node_id)
        kind = check_field(raw, "kind", str, where)
        if kind not in ("state", "external"):
            raise InvalidData(f"{where}.kind: must be 'state' or 'external', got {shown(kind)}")
        members = []
        for m, member in enumerate(check_field(raw, "members", list, where)):
            mw = f"{where}.members[{m}]"
            if not isinstance(member, dict):
                raise InvalidData(f"{mw}: must be an object")
            members.append(
                Member(
                    screen=check_field(member, "screen", str, mw),
                    trajectory=check_field(member, "trajectory", str, mw),
                    step=check_field(member, "step", int, mw),
                )
            )
        nodes.append(
            Node(
                id=node_id,
                kind=kind,
                package=check_field(raw, "package", str, where),
                activity=check_field(raw, "activity", str, where),
                structure=check_field(raw, "structure", str, where),
                reference=check_field(raw, "reference", str, where),
                description=check_field(raw, "description", str, where),
                interactables=check_field(raw, "interactables", list, where),
                members=members,
            )
        )
    edges: list[Edge] = []
    edge_ids: set[str] = set()
    for e, raw in enumerate(check_field(obj, "edges", list, "app graph")):
        where = f"edges[{e}]"
        if not isinstance(raw, dict):
            raise InvalidData(f"{where}: must be an object")
        edge_id = check_field(raw, "id", str, where)
        if edge_id in edge_ids:
            raise InvalidData(f"{where}.id: {shown(edge_id)} is used twice")
        edge_ids.add(edge_id)
        source, target = (
            check_field(raw, "source", str, where),
            check_field(raw, "target", str, where),
        )
        for name, value in (("source", source), ("target", target)):
            if value not in ids:
                raise InvalidData(f"{where}.{name}: no node {shown(value)} in the graph")
        delta = raw.get("schema_delta")
        if delta is not None and not isinstance(delta, dict):
            raise InvalidData(f"{where}.schema_delta: must be an object or null")
        occurrences = []
        for o, occ in enumerate(check_field(raw, "occurrences", list, where)):
            ow = f"{where}.occurrences[{o}]"
            if not isinstance(occ, dict):
                raise InvalidData(f"{ow}: must be an object")
            occurrences.append(
                Occurrence(
                    trajectory=check_field(occ, "trajectory", str, ow),
                    step=check_field(occ, "step", int, ow),
                )
            )
        self_loop = check_field(raw, "self_loop", bool, where)
        if self_loop != (source == target):
            raise InvalidData(f"{where}.self_loop: must be {str(source == target).lower()}")
        edges.append(
            Edge(
                id=edge_id,
                source=source,
                target=target,
                action_type=check_field(raw, "action_type", str, where),
                action=check_field(raw, "action", dict, where),
                instruction=check_field(raw, "instruction", str, where),
                target_observation=check_field(raw, "target_observation", dict, where),
                self_loop=self_loop,
                schema_delta=delta,
                occurrences=occurrences,
            )
        )
    return AppKnowledgeGraph(app=app, params=params, nodes=nodes, edges=edges, stats=stats)
