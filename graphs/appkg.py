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

Every step that touches the screen becomes an edge from its screen's node to the next screen's
node, with the action, the element it hit, an instruction (the step's summary, else one written
from the action and the element's label) and a target observation: the action's effect, the
difference between the screens before and after (the page it opens, the texts that appeared and
went, the fields it changed). Identical transitions (same nodes, action type and target element)
are one edge with several occurrences. A self-loop (the same node before and after) carries a
schema delta: the XML fields that changed. ``answer``, ``terminate`` and ``wait`` touch nothing
on the screen: they are no transition of the app (the stats count them). A step that leaves the
app leads to an ``external`` node named after the package it reached.

A node's description says what the page is from what its member screens have in common: the
labels most of them show (ranked by how many show them, in screen order), and the fields whose
values differ from visit to visit; one member's own text (a product's name) is not the page.
Each node keeps a few exemplars (structure tokens and look) of its members, so a screen can be
located on a built graph (:func:`locate_screen`), with the options UI-KOBE's runtime agent
chooses from (:func:`node_options`).

The module is pure Python (no database): :func:`build_app_graph` takes
:class:`TrajectoryInput` s; ``graphs.appkg_jobs`` reads them from a project.
Graphs are exported as canonical JSON with no database ids (:func:`dump_app_graph`) and read back
with every field checked (:func:`load_app_graph`): export, import and export again give the same
bytes.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from trajectories.bounds import load_json
from trajectories.uixml import UIElement, UITree, UIXmlError, parse_ui_xml
from trajectories.validation import InvalidData, check_field, shown

from .embedders import IMAGE_DIM, image_signature

FORMAT = "waypoint-app-graph"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)  # a version-1 document has no exemplars: it cannot locate screens

DELTA_FIELDS = ("text", "content_desc", "checked", "selected", "focused", "enabled", "password")
MAX_DELTA = 40  # changed fields kept per self-loop (the count says how many there were)
MAX_INTERACTABLES = 40
MAX_EXEMPLARS = 6  # distinct structures kept per node for locating screens
MAX_LABELS = 6
MAX_SHOWN_TEXTS = 5  # texts that appeared or went, per effect
LABEL_CHARS = 40
# Actions that touch nothing on the screen: never a transition of the app.
OFF_SCREEN_ACTIONS = frozenset({"answer", "terminate", "wait"})


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

    @property
    def has_xml(self) -> bool:
        return self.tree is not None or bool(self.tokens)


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
    labels: list[str] = field(default_factory=list)  # what most members show, in screen order
    varies: list[str] = field(default_factory=list)  # fields whose values differ between visits
    # {"structure", "tokens", "look"} of up to MAX_EXEMPLARS members of distinct structures
    exemplars: list[dict[str, Any]] = field(default_factory=list)


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
    target_observation: dict[str, Any]  # the effect: {"effect", "node", "appeared", "gone"}
    self_loop: bool
    schema_delta: dict[str, Any] | None
    occurrences: list[Occurrence] = field(default_factory=list)
    element: dict[str, Any] = field(default_factory=dict)  # what the action hit ({} if nothing)


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


class _NodeFacts:
    """What a node's member screens show, gathered as they are placed: for its description."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.screens = 0  # members with an XML dump
        self.labels: Counter[str] = Counter()  # members showing each label
        self.where: dict[str, tuple[int, int]] = {}  # a label's first place (top, left)
        self.values: dict[str, str] = {}  # a field's first value
        self.fields: Counter[str] = Counter()  # members showing each field
        self.varying: set[str] = set()
        self.exemplars: list[_Screen] = []

    def add(self, screen: _Screen) -> None:
        signatures = {e.signature for e in self.exemplars}
        if screen.signature not in signatures and len(self.exemplars) < MAX_EXEMPLARS:
            if screen.tree is not None or not self.exemplars:
                self.exemplars.append(screen)
        if screen.tree is None:
            return
        self.screens += 1
        for label, place in _labels(screen.tree, self.package).items():
            self.labels[label] += 1
            self.where.setdefault(label, place)
        for name, value in _field_values(screen.tree, self.package).items():
            self.fields[name] += 1
            if self.values.setdefault(name, value) != value:
                self.varying.add(name)

    def summary(self) -> tuple[list[str], list[str]]:
        """(labels most members show, ranked then put in screen order; fields that vary)."""
        n = self.screens
        if not n:
            return [], []
        needed = 1 if n == 1 else max(2, math.ceil(0.6 * n))
        # Numbers (prices, times, codes, counts) are content, not what the page is.
        common = [
            label
            for label, count in self.labels.items()
            if count >= needed and not any(c.isdigit() for c in label)
        ]
        # Labels every member shows first.
        ranked = sorted(common, key=lambda t: (-self.labels[t], self.where[t], t))[:MAX_LABELS]
        labels = sorted(ranked, key=lambda t: (self.where[t], t))
        half = max(2, math.ceil(0.5 * n))
        varies = sorted(name for name in self.varying if self.fields[name] >= half)
        return labels, varies[:MAX_LABELS]


class _Builder:
    def __init__(self, app: str, params: AppGraphParams):
        self.app = app
        self.params = params
        self.nodes: list[Node] = []
        self.refs: list[_Screen] = []  # each state node's reference screen, by node position
        self.facts: list[_NodeFacts] = []
        self.by_signature: dict[str, list[int]] = {}
        self.externals: dict[str, Node] = {}
        self.edges: dict[tuple, Edge] = {}
        self.stats = {
            "screens": 0,
            "steps": 0,
            "self_loops": 0,
            "unreadable_xml": 0,
            "steps_without_next_screen": 0,
            "steps_off_screen": 0,
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
                    description="",
                    interactables=_interactables(screen.tree),
                )
            )
            self.refs.append(screen)
            self.facts.append(_NodeFacts(screen.package or self.app))
            self.by_signature.setdefault(screen.signature, []).append(index)
        node = self.nodes[index]
        node.members.append(member)
        self.facts[index].add(screen)
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
        best: tuple[float, float, int] | None = None
        for i in indexes:
            score = _verified(self.params, screen, self.refs[i])
            if score is not None and (best is None or (*score, -i) > best):
                best = (*score, -i)
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
        element = _element_hit(step, before)
        self_loop = source.id == target.id
        delta = _schema_delta(before, after) if self_loop else None
        identity = (
            source.id,
            target.id,
            step.action_type,
            element.get("resource_id", ""),
            element.get("class", ""),
            element.get("text", ""),
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
                instruction=step.summary.strip() or _instruction(step, element),
                target_observation=_difference(before, after, source.package),
                self_loop=self_loop,
                schema_delta=delta,
                element=element,
            )
            self.edges[identity] = edge
        if self_loop:
            self.stats["self_loops"] += 1
        edge.occurrences.append(Occurrence(trajectory=key, step=step.index))

    def result(self) -> AppKnowledgeGraph:
        # An app whose pages all share one activity (a web view, a single-activity app): the
        # activity's name says nothing about which page a node is.
        telling = len({n.activity for n in self.nodes}) > 1 or len(self.nodes) == 1
        for node, facts in zip(self.nodes, self.facts, strict=True):
            node.labels, node.varies = facts.summary()
            node.description = _describe(node, telling)
            node.exemplars = [_exemplar(s) for s in facts.exemplars]
        nodes = [*self.nodes, *self.externals.values()]
        by_id = {n.id: n for n in nodes}
        edges = list(self.edges.values())
        for edge in edges:
            edge.target_observation = {
                "effect": _effect(edge, by_id[edge.target]),
                "node": edge.target,
                **edge.target_observation,
            }
        stats = {
            **self.stats,
            "nodes": len(self.nodes),
            "external_nodes": len(self.externals),
            "edges": len(edges),
        }
        return AppKnowledgeGraph(self.app, self.params, nodes, edges, stats)


def _verified(params: AppGraphParams, screen: _Screen, ref: _Screen) -> tuple[float, float] | None:
    """(structure, look) similarity of a screen to a node's screen, or None when it is not that
    state: another activity, structure below the threshold, or a look that does not verify."""
    if params.use_activity and screen.activity and ref.activity:
        if screen.activity != ref.activity:
            return None
    if screen.has_xml != ref.has_xml:
        return None  # one has an XML dump and the other not: compare like with like
    structure = 1.0
    if screen.has_xml and screen.signature != ref.signature:
        structure = _jaccard(screen.tokens, ref.tokens)
        if structure < params.structure_threshold:
            return None
    look = look_similarity(screen.look, ref.look)
    # Without XML on either side, the look alone decides: demand more of it.
    needed = params.look_threshold if screen.has_xml else max(params.look_threshold, 0.9)
    return (structure, look) if look >= needed else None


def _action_shape(step: StepInput) -> dict[str, Any]:
    """What makes two actions the same transition: typed text, a key, a swipe's direction."""
    a = step.action
    if step.action_type == "type":
        return {"text": a.get("text", "")}
    if step.action_type == "key":
        return {"keycode": a.get("keycode", "")}
    if step.action_type == "swipe":
        return {"direction": _swipe_direction(a)}
    if step.action_type == "open_app":
        return {"package": a.get("package", "")}
    return {}


def _swipe_direction(a: Mapping[str, Any]) -> str:
    """The way the finger moved."""
    try:
        dx, dy = a.get("x2", 0) - a.get("x", 0), a.get("y2", 0) - a.get("y", 0)
    except TypeError:
        return ""
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def _clean(text: str) -> str:
    return " ".join(text.split())


def _labels(tree: UITree, package: str) -> dict[str, tuple[int, int]]:
    """The short texts (and content descriptions) a screen shows, with their first place."""
    found: dict[str, tuple[int, int]] = {}
    for el in tree.elements:
        if el.area <= 0 or (el.package and package and el.package != package):
            continue
        for text in (el.text, el.content_desc):
            text = _clean(text)
            # A label says something in words: icon glyphs and bare counts are not one.
            if 0 < len(text) <= LABEL_CHARS and text not in found and _has_letter(text):
                found[text] = (el.bounds[1], el.bounds[0])
    return found


def _has_letter(text: str) -> bool:
    return any(c.isalpha() for c in text)


def _short_id(resource_id: str) -> str:
    return resource_id.rsplit(":id/", 1)[-1].rsplit("/", 1)[-1]


def _field_values(tree: UITree, package: str) -> dict[str, str]:
    """The text of each element with a resource-id (its first one on the screen)."""
    values: dict[str, str] = {}
    for el in tree.elements:
        if not el.resource_id or el.area <= 0 or (el.package and el.package != package):
            continue
        name = _short_id(el.resource_id)
        if name and (el.text or el.content_desc):
            values.setdefault(name, _clean(el.text or el.content_desc))
    return values


def _page_kind(activity: str) -> str:
    """``.ProductActivity`` -> ``product page``; nothing for a name that says no more than that
    it is the app (``MainActivity``, ``Launcher``)."""
    name = activity.rsplit(".", 1)[-1].removesuffix("Activity")
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)]
    if not words or words in (["main"], ["launcher"], ["splash"]):
        return ""
    return " ".join(words) + " page"


def _describe(node: Node, telling_activity: bool = True) -> str:
    """What the page is: its kind (from the activity, when activities tell pages apart), the
    labels its screens share, and the fields that change from visit to visit."""
    kind = _page_kind(node.activity) if telling_activity else ""
    if node.labels:
        head = f"{kind or 'page'} showing {', '.join(node.labels)}"
    else:
        head = kind or node.package or "screen"
    if node.varies:
        head += f"; differs by {', '.join(node.varies)}"
    return head


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


def _element_hit(step: StepInput, before: _Screen) -> dict[str, Any]:
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
    if before.tree is None:
        return {}
    if step.action_type == "type":  # typing goes to the focused field
        focused = [el for el in before.tree.elements if el.focused and el.area > 0]
        editable = [el for el in focused if el.editable]
        return _element_fields((editable or focused)[-1]) if focused else {}
    x, y = step.action.get("x"), step.action.get("y")
    if isinstance(x, int | float) and isinstance(y, int | float):
        el = before.tree.element_at(x, y)
        if el is not None:
            return _element_fields(el)
    return {}


def element_label(element: Mapping[str, Any]) -> str:
    """How a person names an element: its text, its description, its id, or its kind."""
    for name in ("text", "content_desc"):
        text = _clean(str(element.get(name) or ""))
        if text:
            return repr(text[:LABEL_CHARS]) if len(text) > LABEL_CHARS else f"'{text}'"
    kind = str(element.get("class") or "").rsplit(".", 1)[-1]
    kind = {"EditText": "field", "ImageView": "image", "ImageButton": "button"}.get(kind, kind)
    rid = _short_id(str(element.get("resource_id") or "")).replace("_", " ")
    if rid:
        return f"the {rid} {kind.lower()}".strip() if kind else f"the {rid}"
    return f"the {kind.lower()}" if kind else ""


def _instruction(step: StepInput, element: Mapping[str, Any]) -> str:
    """An instruction written from the action and the element it hit (for steps without one)."""
    a, kind = step.action, step.action_type
    label = element_label(element)
    if kind in ("click", "long_press"):
        verb = "Tap" if kind == "click" else "Long-press"
        if label:
            return f"{verb} {label}"
        return f"{verb} at ({a.get('x')}, {a.get('y')})"
    if kind == "type":
        text = f"Type '{a.get('text', '')}'"
        return f"{text} into {label}" if label else text
    if kind == "swipe":
        where = f" on {label}" if label else ""
        return f"Swipe {_swipe_direction(a) or 'across the screen'}{where}"
    if kind == "key":
        name = str(a.get("keycode", "")).removeprefix("KEYCODE_").replace("_", " ").title()
        return f"Press {name or 'a key'}"
    if kind in ("back", "enter"):
        return f"Press {kind.title()}"
    if kind == "home":
        return "Go to the home screen"
    if kind == "open_app":
        return f"Open {a.get('package') or 'an app'}"
    return kind.replace("_", " ").capitalize()


def _difference(before: _Screen, after: _Screen, package: str) -> dict[str, Any]:
    """The texts the action brought onto the screen and took off it (a few of each)."""
    if before.tree is None or after.tree is None:
        return {"appeared": [], "gone": []}
    old = _labels(before.tree, package)
    new = _labels(after.tree, after.package or package)
    appeared = sorted(set(new) - set(old), key=lambda t: (new[t], t))
    gone = sorted(set(old) - set(new), key=lambda t: (old[t], t))
    return {"appeared": appeared[:MAX_SHOWN_TEXTS], "gone": gone[:MAX_SHOWN_TEXTS]}


def _effect(edge: Edge, target: Node) -> str:
    """What the action does, in words: the page it opens, or what it changes on this one."""
    if target.kind == "external":
        return f"leaves the app for {target.package or 'an unknown app'}"
    if not edge.self_loop:
        return f"opens the {target.description}"
    delta = edge.schema_delta or {}
    if not delta.get("compared"):
        return "stays on this page"
    if not delta.get("count"):
        return "stays on this page; nothing visible changes"
    said = []
    for change in delta["changes"]:
        name = _short_id(change["resource_id"]) or change["class"].rsplit(".", 1)[-1]
        if change["field"] == "node":
            continue
        said.append(f"{name} {change['field']} {change['before']!r} → {change['after']!r}")
        if len(said) == 3:
            break
    rest = delta["count"] - len(said)
    if not said:
        return f"stays on this page; {delta['count']} elements appear or go"
    return "changes " + "; ".join(said) + (f" (and {rest} more)" if rest > 0 else "")


def _exemplar(screen: _Screen) -> dict[str, Any]:
    return {
        "structure": screen.signature,
        "tokens": sorted(screen.tokens),
        "look": [round(float(v), 4) for v in screen.look],
    }


def _schema_delta(before: _Screen, after: _Screen) -> dict[str, Any]:
    """Which XML fields changed between two screens of one state, node by node (by path)."""
    if before.tree is None or after.tree is None:
        return {"changes": [], "count": 0, "compared": False, "fields": []}
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
    fields = sorted(
        {
            f"{_short_id(c['resource_id']) or c['class'].rsplit('.', 1)[-1]}.{c['field']}"
            for c in changes
            if c["field"] != "node"
        }
    )
    return {
        "changes": changes[:MAX_DELTA],
        "count": len(changes),
        "compared": True,
        "fields": fields[:MAX_DELTA],
    }


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
            if step.action_type in OFF_SCREEN_ACTIONS:
                builder.stats["steps_off_screen"] += 1  # it touched nothing: no transition
                continue
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


# ------------------------------------------------------------------------------ at run time

LOCATE_STRUCTURE = 0.6
LOCATE_LOOK = 0.9
LOOK_WEIGHT = 0.1

TASK_COMPLETION = {
    "instruction": "The task is done: answer the user if the task asks a question, then stop.",
    "actions": ["answer", "terminate"],
}
FREE_ACTION = {
    "instruction": "Any other single action this screen allows, when no option above fits "
    "(or the screen is not in the graph).",
    "actions": ["click", "long_press", "swipe", "type", "key", "back", "home", "open_app", "wait"],
}


@dataclass
class Location:
    """Where a screen is in a graph: its node (None when no node verifies) and why."""

    node: Node | None
    structure: float
    look: float
    reason: str
    candidates: list[dict[str, Any]]


class AppGraphLocator:
    """A built graph ready to place screens on its nodes, as UI-KOBE's runtime agent does.

    The graph is fixed: no node is made, so the question is which node is nearest, not whether
    the screen is new enough for a node of its own. A screen is on the node whose exemplars'
    structure it shares most (its look breaks near ties), when that share is at least
    ``LOCATE_STRUCTURE``; a screenshot without XML needs a look at least ``LOCATE_LOOK`` alike.
    The share weights each structure token by how few pages have it, so the bars and tabs every
    page of an app shows do not make a page the graph has never seen (the orders tab, when only
    the home tab was recorded) look like one it has.
    The look is not a gate here as it is in the build: a list scrolled or showing other items
    is the same page with another look.
    """

    def __init__(self, graph: AppKnowledgeGraph) -> None:
        self.graph = graph
        self.entries: list[tuple[int, _Screen]] = []
        for index, node in enumerate(graph.nodes):
            if node.kind != "state":
                continue
            for exemplar in node.exemplars:
                self.entries.append(
                    (
                        index,
                        _Screen(
                            sha256=node.reference,
                            package=node.package,
                            activity=node.activity,
                            tree=None,
                            signature=exemplar["structure"],
                            tokens=frozenset(exemplar["tokens"]),
                            look=np.asarray(exemplar["look"], dtype=np.float32),
                        ),
                    )
                )
        # How telling a structure token is: one every page has (the app's bar, its tabs) says
        # little about which page a screen is; one only a page or two have says much.
        pages = Counter(t for tokens in self._tokens_by_node().values() for t in tokens)
        count = max(1, len({i for i, _ in self.entries}))
        self.weights = {t: math.log(1 + count / n) for t, n in pages.items()}
        self.unknown_weight = math.log(1 + count)  # a token no page of the graph has
        if not self.entries and any(n.kind == "state" for n in graph.nodes):
            raise InvalidData(
                f"app graph of {graph.app}: its nodes keep no exemplars (a version-1 export); "
                "build the graph again to locate screens on it"
            )

    def _tokens_by_node(self) -> dict[int, set[str]]:
        found: dict[int, set[str]] = {}
        for index, ref in self.entries:
            found.setdefault(index, set()).update(ref.tokens)
        return found

    def _similarity(self, a: frozenset[str], b: frozenset[str]) -> float:
        """Jaccard similarity with each token weighted by how telling it is."""
        if not a and not b:
            return 1.0
        weight = self.weights.get
        unknown = self.unknown_weight
        shared = sum(weight(t, unknown) for t in a & b)
        either = sum(weight(t, unknown) for t in a | b)
        return shared / either if either else 0.0

    def locate(
        self, screenshot: bytes, ui_xml: bytes | str | None = None, activity: str = ""
    ) -> Location:
        """The node of a screenshot (and its XML); :class:`InvalidData` for what is not an
        image or not a UI dump."""
        look = image_signature(screenshot, "screenshot")
        tree = None
        if ui_xml:
            try:
                tree = parse_ui_xml(ui_xml)
            except UIXmlError as exc:
                raise InvalidData(f"xml: not a UI dump ({exc})") from None
        package = tree.package if tree is not None else ""
        if package and package != self.graph.app:
            return Location(None, 0.0, 0.0, f"the screen shows {package}, not this app", [])
        screen = _Screen(
            sha256="",
            package=package,
            activity=activity,
            tree=tree,
            signature=tree.structure_signature() if tree else "",
            tokens=_structure_tokens(tree) if tree else frozenset(),
            look=look,
        )
        params = self.graph.params
        best: dict[int, tuple[float, float, float]] = {}  # node: (score, structure, look)
        for index, ref in self.entries:
            if params.use_activity and activity and ref.activity and activity != ref.activity:
                continue
            if screen.has_xml and not ref.has_xml:
                continue  # structure against no structure says nothing
            similar = look_similarity(screen.look, ref.look)
            if screen.has_xml:
                same = screen.signature == ref.signature
                structure = 1.0 if same else self._similarity(screen.tokens, ref.tokens)
                score = (structure + LOOK_WEIGHT * similar, structure, similar)
            else:
                score = (similar, 0.0, similar)
            if index not in best or score > best[index]:
                best[index] = score
        ranked = sorted(best.items(), key=lambda item: (*item[1], -item[0]), reverse=True)
        candidates = [
            {
                "node": self.graph.nodes[i].id,
                "description": self.graph.nodes[i].description,
                "structure": round(structure, 4),
                "look": round(similar, 4),
            }
            for i, (_, structure, similar) in ranked[:3]
        ]
        if ranked:
            index, (_, structure, similar) = ranked[0]
            if structure >= LOCATE_STRUCTURE if screen.has_xml else similar >= LOCATE_LOOK:
                node = self.graph.nodes[index]
                return Location(node, round(structure, 4), round(similar, 4), "", candidates)
        why = (
            f"no node shares {LOCATE_STRUCTURE:.0%} of its structure"
            if screen.has_xml
            else f"no node looks {LOCATE_LOOK:.0%} alike (and no XML was sent)"
        )
        return Location(None, 0.0, 0.0, f"the screen is not in the graph: {why}", candidates)


def node_options(graph: AppKnowledgeGraph, node_id: str | None) -> dict[str, Any]:
    """UI-KOBE's local options at a node: self-loop actions (with the fields they change),
    transitions to neighbouring nodes (instruction, effect, target node), task completion, and
    a free action. Without a node, only the last two."""
    names = {n.id: n for n in graph.nodes}
    loops: list[dict[str, Any]] = []
    transitions: list[dict[str, Any]] = []
    outgoing = [e for e in graph.edges if node_id is not None and e.source == node_id]
    for edge in sorted(outgoing, key=lambda e: -len(e.occurrences)):
        option = {
            "edge": edge.id,
            "instruction": edge.instruction,
            "action_type": edge.action_type,
            "action": edge.action,
            "element": edge.element,
            "effect": str(edge.target_observation.get("effect", "")),
            "seen": len(edge.occurrences),
        }
        if edge.self_loop:
            delta = edge.schema_delta or {}
            loops.append({**option, "fields": list(delta.get("fields", []))})
        else:
            target = names[edge.target]
            transitions.append(
                {
                    **option,
                    "target": {
                        "id": target.id,
                        "kind": target.kind,
                        "description": target.description,
                    },
                }
            )
    return {**fixed_options(), "self_loops": loops, "transitions": transitions}


def fixed_options() -> dict[str, Any]:
    """The options of a screen no node takes: task completion and a free action."""
    return {
        "self_loops": [],
        "transitions": [],
        "task_completion": dict(TASK_COMPLETION),
        "free_action": dict(FREE_ACTION),
    }


QUOTED_NUMBER = re.compile(r"'[^']*\d[^']*'")
MAX_PROMPT_OPTIONS = 12  # of each kind, the most taken first


def _prompt_instruction(option: Mapping[str, Any]) -> str:
    """An option's instruction as a template: what was typed, or any quoted value with a digit
    (a price, a code, an order number: a recording's data, maybe a task's answer), is not said."""
    if option["action_type"] == "type":
        name = _short_id(str(option["element"].get("resource_id") or "")).replace("_", " ")
        return f"Type a text into the {name} field" if name else "Type a text"
    return QUOTED_NUMBER.sub("'…'", option["instruction"])


def format_options(location: Location, options: Mapping[str, Any]) -> str:
    """The located node and its options as a prompt block, numbered for the model to pick.

    Self-loops say which fields they change, not the values they changed them to, and
    instructions are templates (:func:`_prompt_instruction`): the block carries the app's
    behaviour, never the data of the recordings it was built from."""
    lines = ["App graph guidance (UI-KOBE):"]
    if location.node is None:
        lines.append(f"Current page: not in the graph ({location.reason}).")
    else:
        lines.append(f"Current page: {location.node.description}")
    number = 0
    if options["self_loops"]:
        lines.append("Actions that stay on this page:")
        for o in options["self_loops"][:MAX_PROMPT_OPTIONS]:
            number += 1
            fields = ", ".join(o["fields"][:4])
            change = f"changes {fields}" if fields else "nothing visible changes"
            lines.append(f"  {number}. {_prompt_instruction(o)} -> {change}")
    if options["transitions"]:
        lines.append("Actions that lead to another page:")
        for o in options["transitions"][:MAX_PROMPT_OPTIONS]:
            number += 1
            lines.append(f"  {number}. {_prompt_instruction(o)} -> {o['effect']}")
    lines.append(f"  {number + 1}. Task completion: {options['task_completion']['instruction']}")
    lines.append(f"  {number + 2}. Free action: {options['free_action']['instruction']}")
    return "\n".join(lines)


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
    version = obj.get("version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise InvalidData(
            f"app graph: version {shown(version)} is not supported "
            f"(expected {' or '.join(map(str, READABLE_VERSIONS))})"
        )
    old = version == 1  # no labels, exemplars or edge elements; the element was the target
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
                labels=[] if old else _strings(raw, "labels", where),
                varies=[] if old else _strings(raw, "varies", where),
                exemplars=[] if old else _exemplars(raw, where),
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
        observation = check_field(raw, "target_observation", dict, where)
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
                target_observation={} if old else observation,
                self_loop=self_loop,
                schema_delta=delta,
                occurrences=occurrences,
                element=observation if old else check_field(raw, "element", dict, where),
            )
        )
    return AppKnowledgeGraph(app=app, params=params, nodes=nodes, edges=edges, stats=stats)


def _strings(raw: Mapping[str, Any], name: str, where: str) -> list[str]:
    values = check_field(raw, name, list, where)
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise InvalidData(f"{where}.{name}[{i}]: must be a string, got {shown(value)}")
    return values


def _exemplars(raw: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """A node's exemplars: a structure signature, its tokens, and a look of one length."""
    found = []
    for i, exemplar in enumerate(check_field(raw, "exemplars", list, where)):
        ew = f"{where}.exemplars[{i}]"
        if not isinstance(exemplar, dict):
            raise InvalidData(f"{ew}: must be an object")
        check_field(exemplar, "structure", str, ew)
        _strings(exemplar, "tokens", ew)
        look = check_field(exemplar, "look", list, ew)
        if any(isinstance(v, bool) or not isinstance(v, int | float) for v in look):
            raise InvalidData(f"{ew}.look: must be a list of numbers")
        if look and len(look) != IMAGE_DIM:
            raise InvalidData(f"{ew}.look: must have {IMAGE_DIM} numbers, got {len(look)}")
        found.append(exemplar)
    return found
