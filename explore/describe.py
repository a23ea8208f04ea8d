"""Words for what the explorer found: a state's description, a transition's effect.

Without a model they come from the XML: a state is its title (the first text of the top bar)
and what its content holds (rows of a list, fields, buttons); an effect is the difference
between the screens before and after (the page it opened, or the texts and states that
changed). With a model (``--strategy llm``) the model writes them, and these are its fallback.
"""

from __future__ import annotations

import re
from collections import Counter

from trajectories.uixml import UIElement, UITree

TOP_BAR = 0.14  # the share of the screen's height where a title sits
MAX_CHANGES = 3


def _texts(tree: UITree) -> list[UIElement]:
    return [el for el in tree.elements if el.text.strip() and el.area > 0]


def title_of(tree: UITree) -> str:
    """The screen's title: the first text in its top bar, else its first text."""
    texts = _texts(tree)
    if not texts:
        return ""
    height = max((el.bounds[3] for el in tree.elements), default=0) or 1
    top = [el for el in texts if el.bounds[1] < height * TOP_BAR and not el.clickable]
    chosen = min(top or texts, key=lambda el: (el.bounds[1], el.bounds[0]))
    return chosen.text.strip()[:60]


def _stem(rid: str) -> str:
    short = rid.rsplit("/", 1)[-1]
    return re.sub(r"[_-]?[^_-]*$", "", short) if re.search(r"[_-]", short) else short


def describe_state(tree: UITree | None, package: str) -> str:
    """ "Inbox: a list of 12 rows (mail), 1 button" and the like."""
    if tree is None:
        return package or "screen"
    title = title_of(tree) or package
    rows = Counter(
        _stem(el.resource_id)
        for el in tree.interactable()
        if el.clickable and el.resource_id and not el.text.strip()
    )
    parts = []
    height = max((el.bounds[3] for el in tree.elements), default=0) or 1
    content = [
        el
        for el in _texts(tree)
        if el.bounds[1] >= height * TOP_BAR and not el.clickable and len(el.text.strip()) > 3
    ]
    if content:  # what the page is about: its first text below the top bar
        first = min(content, key=lambda el: (el.bounds[1], el.bounds[0]))
        parts.append(f"showing “{first.text.strip()[:50]}”")
    for stem, count in sorted(rows.items(), key=lambda item: (-item[1], item[0])):
        if count > 1 and stem:
            parts.append(f"a list of {count} {stem} rows")
    fields = [el for el in tree.elements if el.editable]
    if fields:
        names = ", ".join((el.text or el.content_desc or "field")[:30] for el in fields[:3])
        parts.append(f"{len(fields)} text field{'s' * (len(fields) > 1)} ({names})")
    buttons = [
        el.text.strip() or el.content_desc.strip()
        for el in tree.interactable()
        if el.clickable and (el.text.strip() or el.content_desc.strip())
    ]
    if buttons:
        shown = ", ".join(b[:20] for b in buttons[:4])
        more = f" and {len(buttons) - 4} more" if len(buttons) > 4 else ""
        parts.append(f"buttons {shown}{more}")
    return f"{title}: {'; '.join(parts)}" if parts else title


def describe_effect(
    before: UITree | None,
    after: UITree | None,
    *,
    same_state: bool,
    target_description: str,
    left_for: str = "",
) -> str:
    """What the action changed, from the two screens."""
    if left_for:
        return f"Leaves the app for {left_for}"
    if not same_state:
        return f"Opens {target_description}"
    if before is None or after is None:
        return "Stays on the page"
    old = {el.path: el for el in before.elements}
    changes: list[str] = []
    for el in after.elements:
        was = old.get(el.path)
        if was is None:
            continue
        name = el.resource_id.rsplit("/", 1)[-1] or el.class_name.rsplit(".", 1)[-1]
        if was.text != el.text and (was.text or el.text):
            changes.append(f"{name} “{was.text[:25]}” → “{el.text[:25]}”")
        for flag in ("checked", "selected", "focused"):
            if getattr(was, flag) != getattr(el, flag):
                changes.append(f"{name} {'now' if getattr(el, flag) else 'no longer'} {flag}")
    added = len(after.elements) - len(before.elements)
    if added:
        changes.append(
            f"{abs(added)} element{'s' * (abs(added) > 1)} {'more' if added > 0 else 'fewer'}"
        )
    if not changes:
        return "Stays on the page; nothing visible changes"
    more = f" (+{len(changes) - MAX_CHANGES} more)" if len(changes) > MAX_CHANGES else ""
    return "Stays on the page: " + "; ".join(changes[:MAX_CHANGES]) + more
