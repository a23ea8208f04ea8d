"""Android UI hierarchy dumps (`uiautomator dump` XML): parsing, hit-testing and screen identity.

Pure Python on lxml, no Django, so capture code, importers and exporters can all share it.

A step's screen is stored as the raw dump; this module turns it into a `UITree` of `UIElement`s
(document order), answers "which element did this tap hit" (`UITree.element_at`), and gives a
content-free fingerprint of the screen (`UITree.structure_signature`) used to merge screens.
DroidBot states (a flat `views[]` list) are converted into the same dump format.
"""

from __future__ import annotations

import codecs
import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "UIElement",
    "UITree",
    "UIXmlError",
    "clean_ui_xml",
    "parse_bounds",
    "parse_ui_xml",
    "quote_attribute",
    "structure_similarity",
    "views_to_uiautomator_xml",
]

# Real dumps are a few dozen levels deep and well under a megabyte; anything far beyond that is
# garbage or hostile. libxml2 itself stops at 256 nested elements (we never ask for huge_tree).
MAX_DEPTH = 200
MAX_INPUT_BYTES = 64 * 1024 * 1024

_XML_HEADER = b"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
_BOOL_ATTRS = (
    "checkable",
    "checked",
    "clickable",
    "enabled",
    "focusable",
    "focused",
    "scrollable",
    "long-clickable",
    "password",
    "selected",
)
_BOOL_FIELDS = tuple((name, name.replace("-", "_")) for name in _BOOL_ATTRS)
_BOUNDS_RE = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_LXML_POSITION_RE = re.compile(r",? line \d+, column \d+$")
# `adb exec-out uiautomator dump /dev/tty` appends this (misspelt) line after the XML.
_ADB_TRAILER_RE = re.compile(rb"UI hier\w* dumped to:[^\n]*\s*\Z")
_INVALID_XML_CHARS_RE = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# What uiautomator writes instead of a character XML 1.0 cannot carry.
CONTROL_REPLACEMENT = "."
# Control bytes are single bytes in UTF-8 (never inside a multi-byte sequence), so they can be
# replaced in the raw bytes; as character references they are just as invalid.
_CONTROL_BYTES_RE = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_CHAR_REF_RE = re.compile(rb"&#(x[0-9a-fA-F]+|[0-9]+);")
_ATTRIBUTE_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "\n": "&#10;",
        "\r": "&#13;",
        "\t": "&#9;",
    }
)
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# Views that take every touch landing on them although a dump does not call them clickable
# ("Toolbars always eat touch events"): nothing drawn beneath one gets the tap.
_TOUCH_EATERS = frozenset(
    {
        "android.widget.Toolbar",
        "androidx.appcompat.widget.Toolbar",
        "android.support.v7.widget.Toolbar",
    }
)


class UIXmlError(ValueError):
    """The input is not a usable UI hierarchy; the message says what is wrong and where."""


Bounds = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class UIElement:
    """One `<node>` of a dump. `path` is the child indices from the top, e.g. "0/2/1"."""

    path: str
    index: int
    depth: int
    text: str = ""
    resource_id: str = ""
    class_name: str = ""
    package: str = ""
    content_desc: str = ""
    bounds: Bounds = (0, 0, 0, 0)
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False

    @property
    def width(self) -> int:
        # Real dumps contain inverted bounds (views scrolled off screen); they have no area.
        return max(0, self.bounds[2] - self.bounds[0])

    @property
    def height(self) -> int:
        return max(0, self.bounds[3] - self.bounds[1])

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    @property
    def editable(self) -> bool:
        return "EditText" in self.class_name

    def contains(self, x: float, y: float) -> bool:
        """Half-open: the right and bottom edges belong to the neighbour, not to this element."""
        x1, y1, x2, y2 = self.bounds
        return x1 <= x < x2 and y1 <= y < y2

    def to_target(self) -> dict[str, Any]:
        """The step's target element, as stored on a step."""
        return {
            "bounds": list(self.bounds),
            "resource_id": self.resource_id,
            "class": self.class_name,
            "text": self.text,
            "content_desc": self.content_desc,
            "path": self.path,
        }


@dataclass
class UITree:
    """A parsed dump: every node in document order (parents before their children)."""

    elements: list[UIElement] = field(default_factory=list)
    rotation: int = 0
    _child_index: dict[str, list[int]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def root_bounds(self) -> Bounds:
        roots = [el for el in self.elements if el.depth == 0]
        if not roots:
            return (0, 0, 0, 0)
        return max(roots, key=lambda el: el.area).bounds

    @property
    def width(self) -> int:
        x1, _, x2, _ = self.root_bounds
        return max(0, x2 - x1)

    @property
    def height(self) -> int:
        _, y1, _, y2 = self.root_bounds
        return max(0, y2 - y1)

    @property
    def package(self) -> str:
        counts = Counter(el.package for el in self.elements if el.package)
        return counts.most_common(1)[0][0] if counts else ""

    def element_at(self, x: float, y: float) -> UIElement | None:
        """The element a tap at (x, y) lands on.

        Android hands a touch to the views under it from the top down: a later sibling is drawn
        over an earlier one, a child over its parent, and the first view on that path that takes
        touches gets the tap. So the first enabled clickable (or long-clickable) element in that
        order wins, however large; failing that the first checkable/focusable/scrollable one (a
        disabled clickable counts here: it is still what the user aimed at); then the first
        with text, content-desc or resource-id; then the topmost of all. A toolbar takes every
        touch on it, so nothing beneath one is hit. Zero-area elements never match.
        """
        under = self._elements_under(x, y)
        for tier in range(4):
            for el in under:
                if _hit_tier(el) == tier:
                    return el
        return None

    def _elements_under(self, x: float, y: float) -> list[UIElement]:
        """The elements containing the point, topmost first (reverse drawing order)."""
        children = self._children()
        under: list[UIElement] = []
        # (element index, children visited); no recursion, dumps can be deep.
        stack = [(i, False) for i in children.get("", ())]
        while stack:
            i, expanded = stack.pop()
            if expanded:
                el = self.elements[i]
                if el.contains(x, y):
                    under.append(el)
                    if el.class_name in _TOUCH_EATERS:
                        break
                continue
            stack.append((i, True))
            # Pushed in order, so the last (topmost) child is popped first.
            stack.extend((k, False) for k in children.get(self.elements[i].path, ()))
        return under

    def _children(self) -> dict[str, list[int]]:
        """Element indexes by parent path ("" for the roots), in document order."""
        if self._child_index is None:
            index: dict[str, list[int]] = {}
            for i, el in enumerate(self.elements):
                index.setdefault(_parent_path(el.path), []).append(i)
            self._child_index = index
        return self._child_index

    def find(
        self,
        resource_id: str | None = None,
        text: str | None = None,
        class_name: str | None = None,
        content_desc: str | None = None,
    ) -> list[UIElement]:
        """Elements matching every given field exactly.

        A resource_id without ":id/" also matches on the entry name, so "login" finds
        "com.example:id/login".
        """
        found = []
        for el in self.elements:
            if resource_id is not None and not _resource_id_matches(el.resource_id, resource_id):
                continue
            if text is not None and el.text != text:
                continue
            if class_name is not None and el.class_name != class_name:
                continue
            if content_desc is not None and el.content_desc != content_desc:
                continue
            found.append(el)
        return found

    def interactable(self) -> list[UIElement]:
        """Enabled, visible-sized elements a user can act on."""
        return [
            el
            for el in self.elements
            if el.enabled
            and el.area > 0
            and (el.clickable or el.long_clickable or el.checkable or el.scrollable or el.editable)
        ]

    def structure_tokens(self) -> list[str]:
        """One "depth:class#resource-id" token per element: the screen without its content."""
        return [f"{el.depth}:{el.class_name}#{el.resource_id}" for el in self.elements]

    def structure_signature(self) -> str:
        """sha256 hex of the tree shape with class names and resource-ids.

        Text, descriptions, states and bounds are left out, so two captures of one screen with
        different values agree. Runs of identical sibling subtrees count once, so a list showing
        five items and the same list showing six (or a map with more markers) is the same screen.
        """
        children: dict[str, list[int]] = {}
        for i, el in enumerate(self.elements):
            children.setdefault(_parent_path(el.path), []).append(i)
        digests: list[str] = [""] * len(self.elements)
        # Children follow their parent in document order, so walking backwards sees them first.
        for i in range(len(self.elements) - 1, -1, -1):
            el = self.elements[i]
            kids = _collapse_runs(digests[k] for k in children.get(el.path, ()))
            digests[i] = _sha256(f"{el.class_name}#{el.resource_id}({','.join(kids)})")
        roots = _collapse_runs(digests[k] for k in children.get("", ()))
        return _sha256(f"hierarchy({','.join(roots)})")


def structure_similarity(a: UITree, b: UITree) -> float:
    """Jaccard similarity (0..1) of the two screens' structure token multisets."""
    ta, tb = Counter(a.structure_tokens()), Counter(b.structure_tokens())
    union = sum((ta | tb).values())
    if union == 0:
        return 1.0
    return sum((ta & tb).values()) / union


def parse_bounds(s: str) -> Bounds:
    """ "[x1,y1][x2,y2]" -> (x1, y1, x2, y2)."""
    match = _BOUNDS_RE.fullmatch(s.strip()) if isinstance(s, str) else None
    if match is None:
        raise UIXmlError(f"bad bounds {s!r}")
    x1, y1, x2, y2 = (int(g) for g in match.groups())
    return x1, y1, x2, y2


def quote_attribute(value: str) -> str:
    """``value`` as a dump's attribute value: in double quotes, ``"`` as ``&quot;``, and
    characters XML cannot carry as "." (uiautomator's serializer writes them so; tools that read
    dumps with a regex such as ``text="([^"]*)"`` depend on it)."""
    return (
        '"'
        + _INVALID_XML_CHARS_RE.sub(CONTROL_REPLACEMENT, value).translate(_ATTRIBUTE_ESCAPES)
        + '"'
    )


def clean_ui_xml(data: bytes) -> bytes:
    """The dump with every character XML 1.0 cannot carry replaced by ".", as uiautomator does.

    Raw control characters and references to them (``&#7;``) both become "."; anything else is
    left byte for byte, so a clean dump comes back unchanged. UTF-16 input is left alone.
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data
    dot = CONTROL_REPLACEMENT.encode()
    return _CHAR_REF_RE.sub(_clean_char_ref, _CONTROL_BYTES_RE.sub(dot, data))


def _clean_char_ref(match: re.Match[bytes]) -> bytes:
    digits = match.group(1).decode()
    try:
        code = int(digits[1:], 16) if digits[0] == "x" else int(digits)
        char = chr(code)
    except (ValueError, OverflowError):
        return CONTROL_REPLACEMENT.encode()
    return CONTROL_REPLACEMENT.encode() if _INVALID_XML_CHARS_RE.match(char) else match.group(0)


def parse_ui_xml(data: bytes | str) -> UITree:
    """Parse a `uiautomator dump` document; raises UIXmlError on anything else.

    Characters XML cannot carry (a control character typed into a field) read as ".", the
    way uiautomator writes them, so such a dump still parses.
    """
    raw = clean_ui_xml(_prepare_input(data))
    # No DTDs, no entity expansion, no network: a dump never needs them (XXE, billion laughs).
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
        encoding="utf-8" if isinstance(data, str) else None,
    )
    try:
        doc = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError as exc:
        raise _syntax_error(exc, raw) from None
    except (etree.LxmlError, ValueError) as exc:
        raise UIXmlError(f"malformed UI XML: {exc}") from None
    if doc.getroottree().docinfo.doctype:
        raise UIXmlError("not uiautomator XML: a DOCTYPE is not allowed")
    if doc.tag != "hierarchy":
        raise UIXmlError(f"not uiautomator XML: root element is <{doc.tag}>, expected <hierarchy>")
    rotation = doc.get("rotation", "0")
    try:
        rotation_value = int(rotation)
    except ValueError:
        raise UIXmlError(f"<hierarchy>: bad rotation {rotation!r}") from None
    return UITree(elements=_read_nodes(doc), rotation=rotation_value)


def views_to_uiautomator_xml(views: list[dict[str, Any]], package: str = "") -> bytes:
    """Turn a DroidBot state's `views` list into a standard uiautomator dump.

    Roots are the views whose parent is -1 or None, in list order; children keep DroidBot's
    order. `package` fills in views that have none.
    """
    if not isinstance(views, list):
        raise UIXmlError(f"views must be a list, got {type(views).__name__}")
    by_id: dict[int, Mapping[str, Any]] = {}
    for position, view in enumerate(views):
        if not isinstance(view, Mapping):
            raise UIXmlError(f"view {position}: expected a dict, got {type(view).__name__}")
        view_id = view.get("temp_id", position)
        if not _is_int(view_id):
            raise UIXmlError(f"view {position}: bad temp_id {view_id!r}")
        if view_id in by_id:
            raise UIXmlError(f"view {view_id}: duplicate temp_id")
        children = view.get("children") or []
        if not isinstance(children, list) or not all(_is_int(c) for c in children):
            raise UIXmlError(f"view {view_id}: children must be a list of ids, got {children!r}")
        parent = view.get("parent")
        if parent is not None and not _is_int(parent):
            raise UIXmlError(f"view {view_id}: bad parent {parent!r}")
        by_id[view_id] = view
    for view_id, view in by_id.items():
        parent = view.get("parent")
        if parent not in (-1, None) and parent not in by_id:
            raise UIXmlError(f"view {view_id}: parent {parent!r} does not exist")

    hierarchy = etree.Element("hierarchy", rotation="0")
    roots = [vid for vid, view in by_id.items() if view.get("parent") in (-1, None)]
    # (view id, sibling index, parent XML element, depth); reversed so pops keep list order.
    stack = [(vid, i, hierarchy, 0) for i, vid in reversed(list(enumerate(roots)))]
    written: set[int] = set()
    while stack:
        view_id, sibling_index, parent_el, depth = stack.pop()
        if depth >= MAX_DEPTH:
            raise UIXmlError(f"view {view_id}: nested deeper than {MAX_DEPTH} levels")
        if view_id in written:
            raise UIXmlError(f"view {view_id}: appears more than once in the tree")
        written.add(view_id)
        view = by_id[view_id]
        node = etree.SubElement(parent_el, "node", _view_attributes(view_id, view, package))
        node.set("index", str(sibling_index))
        child_ids = view.get("children") or []
        for child_id in child_ids:
            if child_id not in by_id:
                raise UIXmlError(f"view {view_id}: child {child_id!r} does not exist")
            if by_id[child_id].get("parent") != view_id:
                raise UIXmlError(
                    f"view {view_id}: child {child_id!r} names "
                    f"{by_id[child_id].get('parent')!r} as its parent"
                )
        stack.extend((cid, i, node, depth + 1) for i, cid in reversed(list(enumerate(child_ids))))
    missing = [vid for vid in by_id if vid not in written]
    if missing:
        raise UIXmlError(f"view {missing[0]!r}: not reachable from a root view")
    return _XML_HEADER + etree.tostring(hierarchy, encoding="UTF-8", xml_declaration=False)


# --- parsing helpers -------------------------------------------------------------------------


def _prepare_input(data: bytes | str) -> bytes:
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UIXmlError(f"not valid text: {exc}") from None
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
    else:
        raise UIXmlError(f"expected bytes or str, got {type(data).__name__}")
    if len(raw) > MAX_INPUT_BYTES:
        raise UIXmlError(f"input too large: {len(raw)} bytes (limit {MAX_INPUT_BYTES})")
    trailer = _ADB_TRAILER_RE.search(raw, max(0, len(raw) - 256))
    if trailer:
        raw = raw[: trailer.start()]
    raw = raw.strip()
    if not raw:
        raise UIXmlError("empty input")
    if not raw.startswith(b"<") and not raw.startswith(_BOMS):
        raise UIXmlError(f"not XML: input starts with {raw[:8]!r}")
    return raw


def _syntax_error(exc: etree.XMLSyntaxError, raw: bytes) -> UIXmlError:
    line, column = exc.position if exc.position else (exc.lineno or 0, 0)
    message = _LXML_POSITION_RE.sub("", str(exc.msg or exc))
    if "Excessive depth" in message:
        return UIXmlError(f"too deeply nested: more than {MAX_DEPTH} levels of nodes")
    ends_early = _at_end_of_input(raw, line, column) and "mismatch" not in message
    if ends_early or message.startswith("Premature end of data"):
        return UIXmlError(
            f"truncated UI XML: the document ends early (line {line}, column {column})"
        )
    return UIXmlError(f"malformed UI XML at line {line}, column {column}: {message}")


def _at_end_of_input(raw: bytes, line: int, column: int) -> bool:
    last_line = raw.rsplit(b"\n", 1)[-1]
    # libxml2 counts columns in characters; a multi-byte last line has fewer of them than bytes.
    last_line_chars = len(last_line.decode("utf-8", errors="replace"))
    return line >= raw.count(b"\n") + 1 and column > min(last_line_chars, len(last_line))


def _read_nodes(hierarchy: etree._Element) -> list[UIElement]:
    elements: list[UIElement] = []
    # (xml element, path, depth); reversed so pops keep document order. No recursion.
    stack = [(n, str(i), 0) for i, n in reversed(list(enumerate(_child_nodes(hierarchy))))]
    while stack:
        node, path, depth = stack.pop()
        if depth >= MAX_DEPTH:
            raise UIXmlError(f"too deeply nested: more than {MAX_DEPTH} levels of nodes")
        elements.append(_read_node(node, len(elements), path, depth))
        kids = list(enumerate(_child_nodes(node)))
        stack.extend((kid, f"{path}/{i}", depth + 1) for i, kid in reversed(kids))
    return elements


def _child_nodes(el: etree._Element) -> list[etree._Element]:
    return [kid for kid in el if kid.tag == "node"]


def _read_node(node: etree._Element, number: int, path: str, depth: int) -> UIElement:
    where = f"node {number} (path {path})"
    attrs = dict(node.attrib)
    bounds_text = attrs.get("bounds")
    if bounds_text is None:
        raise UIXmlError(f"{where}: missing bounds")
    try:
        bounds = parse_bounds(bounds_text)
    except UIXmlError as exc:
        raise UIXmlError(f"{where}: {exc}") from None
    index_text = attrs.get("index")
    if index_text is None:
        index = int(path.rsplit("/", 1)[-1])
    else:
        try:
            index = int(index_text)
        except ValueError:
            raise UIXmlError(f"{where}: bad index {index_text!r}") from None
    flags = {field: attrs.get(name) == "true" for name, field in _BOOL_FIELDS}
    if "enabled" not in attrs:
        flags["enabled"] = True
    return UIElement(
        path=path,
        index=index,
        depth=depth,
        text=attrs.get("text", ""),
        resource_id=attrs.get("resource-id", ""),
        class_name=attrs.get("class", ""),
        package=attrs.get("package", ""),
        content_desc=attrs.get("content-desc", ""),
        bounds=bounds,
        **flags,
    )


def _hit_tier(el: UIElement) -> int:
    if (el.clickable or el.long_clickable) and el.enabled:
        return 0
    if el.checkable or el.focusable or el.scrollable or el.clickable or el.long_clickable:
        return 1
    if el.text or el.content_desc or el.resource_id:
        return 2
    return 3


def _resource_id_matches(actual: str, wanted: str) -> bool:
    if actual == wanted:
        return True
    return ":id/" not in wanted and actual.endswith(f":id/{wanted}")


def _parent_path(path: str) -> str:
    return path.rpartition("/")[0]


def _collapse_runs(digests: Iterable[str]) -> list[str]:
    return [digest for digest, _ in itertools.groupby(digests)]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- DroidBot helpers ------------------------------------------------------------------------


def _view_attributes(view_id: Any, view: Mapping[str, Any], package: str) -> dict[str, str]:
    flag = {name: view.get(name.replace("-", "_")) for name in _BOOL_ATTRS}
    flag["password"] = view.get("is_password")
    flag["enabled"] = view.get("enabled", True)
    attrs = {
        "index": "0",
        "text": _xml_text(view.get("text")),
        "resource-id": _xml_text(view.get("resource_id")),
        "class": _xml_text(view.get("class")),
        "package": _xml_text(view.get("package") or package),
        "content-desc": _xml_text(view.get("content_description")),
    }
    attrs.update((name, "true" if flag[name] else "false") for name in _BOOL_ATTRS)
    attrs["bounds"] = _view_bounds(view_id, view.get("bounds"))
    return attrs


def _view_bounds(view_id: Any, bounds: Any) -> str:
    try:
        (x1, y1), (x2, y2) = bounds
        numbers = [x1, y1, x2, y2]
    except (TypeError, ValueError):
        raise UIXmlError(f"view {view_id}: bad bounds {bounds!r}") from None
    if not all(_is_int(n) for n in numbers):
        raise UIXmlError(f"view {view_id}: bad bounds {bounds!r}")
    return f"[{x1},{y1}][{x2},{y2}]"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _xml_text(value: Any) -> str:
    if value is None:
        return ""
    # XML 1.0 cannot carry control characters or lone surrogates; uiautomator replaces them too.
    return _INVALID_XML_CHARS_RE.sub(CONTROL_REPLACEMENT, str(value))
