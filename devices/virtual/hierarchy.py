"""uiautomator-format XML from the walked DOM (see hierarchy.js), written the way a phone does.

Attributes in uiautomator's order, always in double quotes (``"`` written as ``&quot;``), one line;
characters XML cannot carry (a control character typed into a field) written as "." as
uiautomator's dumper does; resource ids that are valid Android resource names.
"""

from __future__ import annotations

import re

from trajectories.uixml import quote_attribute as attribute

XML_HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
FLAGS = (
    ("checkable", "checkable"),
    ("checked", "checked"),
    ("clickable", "clickable"),
    ("enabled", "enabled"),
    ("focusable", "focusable"),
    ("focused", "focused"),
    ("scrollable", "scrollable"),
    ("long-clickable", "longClickable"),
    ("password", "password"),
    ("selected", "selected"),
)
_NOT_IN_NAME = re.compile(r"[^a-z0-9_]+")


def device_bounds(bounds: list[float], scale: float, width: int, height: int) -> tuple[int, ...]:
    x1, y1, x2, y2 = (round(v * scale) for v in bounds)
    return max(0, x1), max(0, y1), min(width, x2), min(height, y2)


def resource_name(raw: str) -> str:
    """An HTML id as an Android resource name: lower case letters, digits and underscores.

    "product_boom-mini" -> "product_boom_mini", "appGrid" -> "app_grid"; a name cannot start
    with a digit, so "7up" -> "id_7up".
    """
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", raw).lower()
    name = _NOT_IN_NAME.sub("_", snake).strip("_")
    if not name:
        return ""
    return f"id_{name}" if name[0].isdigit() else name


def resource_id(node: dict) -> str:
    raw = node["id"]
    if not raw or ":id/" in raw:
        return raw
    name = resource_name(raw)
    return f"{node['pkg']}:id/{name}" if name else ""


def _write(node: dict, index: int, scale: float, size: tuple[int, int], out: list[str]) -> None:
    x1, y1, x2, y2 = device_bounds(node["bounds"], scale, *size)
    attrs = [
        f"index={attribute(str(index))}",
        f"text={attribute(node['text'])}",
        f"resource-id={attribute(resource_id(node))}",
        f"class={attribute(node['cls'])}",
        f"package={attribute(node['pkg'])}",
        f"content-desc={attribute(node['desc'])}",
    ]
    attrs += [f'{name}="{"true" if node[key] else "false"}"' for name, key in FLAGS]
    attrs.append(f'bounds="[{x1},{y1}][{x2},{y2}]"')
    # Rounding to device pixels can leave a sliver of a view with no area: a phone has none.
    children = [c for c in node["children"] if _has_area(c, scale, size)]
    if children:
        out.append(f"<node {' '.join(attrs)}>")
        for i, child in enumerate(children):
            _write(child, i, scale, size, out)
        out.append("</node>")
    else:
        out.append(f"<node {' '.join(attrs)} />")


def _has_area(node: dict, scale: float, size: tuple[int, int]) -> bool:
    x1, y1, x2, y2 = device_bounds(node["bounds"], scale, *size)
    return x2 > x1 and y2 > y1


def to_xml(windows: list[dict], scale: float, width: int, height: int) -> str:
    out = [XML_HEADER, '<hierarchy rotation="0">']
    for i, window in enumerate(windows):
        _write(window, i, scale, (width, height), out)
    out.append("</hierarchy>")
    return "".join(out)  # one line, as uiautomator writes it
