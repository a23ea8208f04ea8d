"""uiautomator-format XML from the walked DOM (see hierarchy.js)."""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

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


def device_bounds(bounds: list[float], scale: float, width: int, height: int) -> tuple[int, ...]:
    x1, y1, x2, y2 = (round(v * scale) for v in bounds)
    return max(0, x1), max(0, y1), min(width, x2), min(height, y2)


def resource_id(node: dict) -> str:
    raw = node["id"]
    if not raw or ":id/" in raw:
        return raw
    return f"{node['pkg']}:id/{raw}"


def _write(node: dict, index: int, scale: float, size: tuple[int, int], out: list[str], depth: int):
    x1, y1, x2, y2 = device_bounds(node["bounds"], scale, *size)
    attrs = [
        f"index={quoteattr(str(index))}",
        f"text={quoteattr(node['text'])}",
        f"resource-id={quoteattr(resource_id(node))}",
        f"class={quoteattr(node['cls'])}",
        f"package={quoteattr(node['pkg'])}",
        f"content-desc={quoteattr(node['desc'])}",
    ]
    attrs += [f'{name}="{"true" if node[key] else "false"}"' for name, key in FLAGS]
    attrs.append(f'bounds="[{x1},{y1}][{x2},{y2}]"')
    if node["children"]:
        out.append(f"<node {' '.join(attrs)}>")
        for i, child in enumerate(node["children"]):
            _write(child, i, scale, size, out, depth + 1)
        out.append("</node>")
    else:
        out.append(f"<node {' '.join(attrs)} />")


def to_xml(windows: list[dict], scale: float, width: int, height: int) -> str:
    out = [XML_HEADER, '<hierarchy rotation="0">']
    for i, window in enumerate(windows):
        _write(window, i, scale, (width, height), out, 1)
    out.append("</hierarchy>")
    return "".join(out)  # one line, as uiautomator writes it
