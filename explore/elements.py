"""What an explorer can do on a screen, read from its UI XML, and words for it.

A *candidate* is one action on one element (or a system back): a tap on what is clickable, a
long press on what is long-clickable, a swipe on what scrolls, and a tap then typed text on a
text field, with an input that suits its hint. Candidates come taps first, then typing, scrolls
and back, each kind in the screen's order (top to bottom), so the same screen always gives the
same list; rows of a list (containers
without text of their own whose resource ids differ only by a suffix) are tried
``ROWS_PER_GROUP`` at a time, as one product page stands for all of them.

Elements whose text, description or resource id is on the app's deny-list (buying, paying,
sending) are refused unless the exploration allows them.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from trajectories.uixml import UIElement, UITree

ROWS_PER_GROUP = 2
BACK_KEY = "back"
# Submitting something outside the app: refused unless allowed (matched as whole words at the
# start of an element's text or description, whatever the case).
DEFAULT_DENY = (
    "buy",
    "buy now",
    "place order",
    "checkout",
    "pay now",
    "send",
    "transfer",
    "book",
    "confirm",
    "purchase",
    "delete",
)
INPUTS = (  # a field's words -> what to type into it
    (("email", "e-mail"), "alex@example.com"),
    (("quantity", "qty", "amount", "count"), "2"),
    (("phone", "mobile"), "5550100"),
    (("tracking", "number", "code", "reference", "pin"), "12345"),
    (("name", "first", "last"), "Alex"),
    (("city", "destination", "from", "to"), "Paris"),
    (("search", "find", "filter"), ""),  # a word the screen shows (see sensible_input)
    (("message", "note", "title", "comment"), "Hello"),
)


@dataclass
class Candidate:
    """One action the explorer may take on a state; ``steps`` are canonical actions."""

    key: str
    kind: str  # click, long_press, scroll, type, back
    label: str  # the instruction, in words
    steps: list[dict[str, Any]]
    element: dict[str, Any] = field(default_factory=dict)
    denied: str = ""  # the deny-list entry that refuses it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _name(el: UIElement) -> str:
    return (el.text or el.content_desc or "").strip()


def _short_id(el: UIElement) -> str:
    return el.resource_id.rsplit("/", 1)[-1]


def _words(el: UIElement) -> str:
    name = _name(el)
    rid = _short_id(el)
    if name and rid:
        return f"“{name[:40]}” ({rid})"
    if name:
        return f"“{name[:40]}”"
    if rid:
        return rid
    return el.class_name.rsplit(".", 1)[-1] or "element"


def _group(el: UIElement) -> str | None:
    """The group of list rows an element belongs to (None: it stands alone): rows are
    containers without text of their own whose ids share a first word (``product_…``)."""
    if _name(el) or not el.resource_id or not el.clickable:
        return None
    rid = _short_id(el)
    stem = re.split(r"[_-]|(?<=[a-z])(?=\d)", rid, maxsplit=1)[0]
    return f"{el.class_name}#{stem}@{el.depth}" if stem and stem != rid else None


def check_deny_entries(entries: Any, where: str = "deny") -> list[str]:
    """A deny- or allow-list as given: strings, each a text or ``id:resource_id``."""
    from trajectories.validation import InvalidData

    if entries is None:
        return []
    if isinstance(entries, str):
        entries = [part for part in entries.replace("\n", ",").split(",")]
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise InvalidData(f"{where}: must be a list of texts or id:RESOURCE_ID entries")
    cleaned = [e.strip() for e in entries if e.strip()]
    for entry in cleaned:
        if len(entry) > 100:
            raise InvalidData(f"{where}: entry {entry[:20]!r}... is longer than 100 characters")
        if entry.startswith("id:") and not entry[3:].strip():
            raise InvalidData(f"{where}: {entry!r} names no resource id")
    return list(dict.fromkeys(cleaned))


def denied_by(el: UIElement, deny: list[str], allow: list[str]) -> str:
    """The deny-list entry that refuses the element ('' when none, or when allowed)."""
    for entry in deny:
        if _matches(el, entry) and not any(_matches(el, a) for a in allow):
            return entry
    return ""


def _matches(el: UIElement, entry: str) -> bool:
    if entry.startswith("id:"):
        wanted = entry[3:].strip()
        return el.resource_id == wanted or _short_id(el) == wanted.rsplit("/", 1)[-1]
    wanted = entry.strip().lower()
    for said in (el.text, el.content_desc):
        said = (said or "").strip().lower()
        if said == wanted or said.startswith(wanted + " "):
            return True
    return False


def sensible_input(el: UIElement, tree: UITree) -> str:
    """What to type into a text field: by its hint or id, else a word the screen shows."""
    words = f"{el.text} {el.content_desc} {el.resource_id}".lower()
    for keys, value in INPUTS:
        if any(k in words for k in keys):
            if value:
                return value
            break
    # A search: a word of the first row of a list below the field (what the list holds).
    rows = [
        other
        for other in tree.elements
        if other.clickable and not _name(other) and other.bounds[1] >= el.bounds[3]
    ]
    rows.sort(key=lambda other: (other.bounds[1], other.bounds[0]))
    for row in rows:
        x1, y1, x2, y2 = row.bounds
        for inner in tree.elements:
            b = inner.bounds
            if inner.text and x1 <= b[0] and y1 <= b[1] and b[2] <= x2 and b[3] <= y2:
                words = re.findall(r"[A-Za-z]{3,}", inner.text)
                if words:
                    return words[0]
    return "test"


def candidates(
    tree: UITree, app: str, deny: list[str], allow: list[str], *, with_back: bool
) -> list[Candidate]:
    """The screen's candidates in a fixed order; list rows beyond a group's first are left out."""
    found: list[Candidate] = []
    groups: dict[str, int] = {}
    elements = [el for el in tree.interactable() if not el.package or el.package == app]
    elements.sort(key=lambda el: (el.bounds[1], el.bounds[0], el.path))
    for el in elements:
        group = _group(el)
        if group is not None:
            groups[group] = groups.get(group, 0) + 1
            if groups[group] > ROWS_PER_GROUP:
                continue
        x, y = el.center
        ident = f"{el.class_name}#{el.resource_id}#{_name(el)[:60]}"
        denied = denied_by(el, deny, allow)
        element = {
            "class": el.class_name,
            "resource_id": el.resource_id,
            "text": el.text,
            "content_desc": el.content_desc,
            "bounds": list(el.bounds),
        }
        if el.editable:
            text = sensible_input(el, tree)
            found.append(
                Candidate(
                    f"type|{ident}",
                    "type",
                    f"Type “{text}” into {_words(el)}",
                    # No Enter: what submits a form is a button of its own, which the
                    # deny-list sees (a message's Send, a purchase's Pay).
                    [{"type": "click", "x": x, "y": y}, {"type": "type", "text": text}],
                    element,
                    denied,
                )
            )
            continue
        if el.clickable or el.checkable:
            found.append(
                Candidate(
                    f"click|{ident}",
                    "click",
                    f"Tap {_words(el)}",
                    [{"type": "click", "x": x, "y": y}],
                    element,
                    denied,
                )
            )
        if el.long_clickable:
            found.append(
                Candidate(
                    f"long_press|{ident}",
                    "long_press",
                    f"Long-press {_words(el)}",
                    [{"type": "long_press", "x": x, "y": y}],
                    element,
                    denied,
                )
            )
    for el in elements:
        if not el.scrollable or el.height < 200 and el.width < 200:
            continue
        x1, y1, x2, y2 = el.bounds
        horizontal = "Horizontal" in el.class_name
        if horizontal:
            y = (y1 + y2) // 2
            swipe = {"type": "swipe", "x": x2 - 20, "y": y, "x2": x1 + 20, "y2": y}
            what = "Scroll sideways in"
        else:
            x = (x1 + x2) // 2
            swipe = {"type": "swipe", "x": x, "y": y2 - (y2 - y1) // 5, "x2": x, "y2": y1 + 40}
            what = "Scroll down in"
        found.append(
            Candidate(
                f"scroll|{el.class_name}#{el.resource_id}#{el.path}",
                "scroll",
                f"{what} {_words(el)}",
                [{**swipe, "duration_ms": 400}],
                {"class": el.class_name, "resource_id": el.resource_id, "bounds": list(el.bounds)},
            )
        )
    # Taps first, then typing (a typed search makes states of its own), scrolls, back.
    order = {"click": 0, "long_press": 0, "type": 1, "scroll": 2}
    found.sort(key=lambda c: order[c.kind])  # stable: the screen's order within a kind
    if with_back:
        found.append(Candidate(BACK_KEY, "back", "Go back", [{"type": "back"}]))
    return found


def locate(candidate: Candidate, tree: UITree) -> list[dict[str, Any]] | None:
    """The candidate's steps on this screen: its element found again (it may have moved);
    None when the screen no longer shows it."""
    if candidate.kind == "back":
        return candidate.steps
    want = candidate.element
    for el in tree.interactable():
        if (
            el.class_name == want.get("class")
            and el.resource_id == want.get("resource_id")
            and (
                candidate.kind == "scroll"
                or _name(el) == (want.get("text") or want.get("content_desc") or "").strip()
            )
        ):
            x, y = el.center
            steps = [dict(s) for s in candidate.steps]
            first = steps[0]
            if first["type"] in ("click", "long_press"):
                first["x"], first["y"] = x, y
            return steps
    return None
