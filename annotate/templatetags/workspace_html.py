"""The workspace's repeated parts (filmstrip, track, label cards, graph), written in Python.

The template loops these replace were most of the workspace page's CPU (a dozen steps and
cells, each a few dozen variable lookups, filters and URL reversals). The HTML is the same
byte for byte: tests/annotate/test_workspace_html.py renders each part both ways.

Every text from the database goes through ``_esc``; numbers of integer fields go as they are.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from html import escape
from typing import Any

from django import template
from django.utils import timezone
from django.utils.safestring import SafeString
from django.utils.text import Truncator, add_truncation_text
from django.utils.translation import get_language, pgettext

from trajectories.models import Step
from trajectories.routes import route_parts
from trajectories.templatetags.trajectory_tags import action_overlay, action_summary

register = template.Library()


def _esc(value: Any) -> str:
    """``{{ value }}`` in a template: its text, HTML-escaped (a number has nothing to escape)."""
    if type(value) is int:
        return str(value)
    return escape(str(value))


def _truncated(text: str, size: int) -> str:
    """``{{ text|truncatechars:size }}``, without building a truncator and translating its
    mark on every call: a text that fits is only normalised, as the filter does."""
    text = unicodedata.normalize("NFC", text)
    if len(text) <= size:
        return text
    if size <= 0 or any(unicodedata.combining(char) for char in text):
        return Truncator(text).chars(size)
    pattern, marked = _truncation(get_language())
    return add_truncation_text(text[: max(size - marked, 0)], pattern)


@lru_cache(maxsize=32)
def _truncation(language: str | None) -> tuple[str, int]:
    """A language's truncation mark (as Django's truncators translate it) and how many
    characters it counts for."""
    pattern = pgettext("String to return when truncating text", "%(truncated_text)s…")
    mark = add_truncation_text("", pattern)
    return pattern, sum(1 for char in mark if not unicodedata.combining(char))


@register.simple_tag
def truncated(text: str, size: int) -> str:
    """``{{ text|truncatechars:size }}`` (escaped as a tag's answer is)."""
    return _truncated(str(text), size)


FRAME = (
    '\n    <li class="frame{selected}" id="frame-{i}" data-step="{i}">\n'
    '      <a href="?step={i}" title="Step {i}: {summary}">\n'
    '        <div class="shot" style="aspect-ratio: {w} / {h}">\n'
    '          <img src="{src}" alt="" loading="lazy" decoding="async"\n'
    '               width="{w}" height="{h}">\n'
    "          {overlay}\n"
    "        </div>\n"
    '        <span class="caption"><b>{i}</b> {caption}</span>\n'
    "      </a>\n"
    "    </li>\n  "
)


@register.simple_tag
def filmstrip(steps: Iterable[Step], index: int) -> SafeString:
    """One frame per step: its screenshot with the action drawn on it, and a caption."""
    head, tail = route_parts("blob")
    frames = []
    for step in steps:
        screen = step.screen
        frames.append(
            FRAME.format(
                selected=" selected" if step.index == index else "",
                i=step.index,
                summary=_esc(action_summary(step)),
                w=screen.width,
                h=screen.height,
                src=_esc(f"{head}{screen.screenshot_id}{tail}"),
                overlay=action_overlay(step, "overlay"),
                caption=_esc(_truncated(step.summary or str(step), 40)),
            )
        )
    return SafeString("".join(frames))  # every text in it is escaped


CELL = (
    '\n    <div class="cell{css}"\n'
    '         data-step="{i}"{subgoal}\n'
    '         title="Step {i}{title}">\n'
    "      {start}\n"
    '      <span class="num">{i}</span>\n'
    "      {success}\n"
    "      {marks}\n"
    "      {end}\n"
    "    </div>\n  "
)


@register.simple_tag
def track_cells(track: list[dict[str, Any]], index: int) -> SafeString:
    """One cell per step of the subgoal track (``annotate.workspace.track_of``)."""
    cells = []
    for cell in track:
        g, first, last, i = cell["subgoal"], cell["first"], cell["last"], cell["index"]
        css = "" if g else " uncovered"
        css += " first" if first else ""
        css += " last" if last else ""
        css += " current" if i == index else ""
        if g:
            gid = _esc(g["id"])
            subgoal = f' data-subgoal="{gid}" style="--c: {_esc(cell["colour"])}"'
            title = f": {_esc(g['text'] or '(no text)')} [{_esc(g['start'])}–{_esc(g['end'])}]" + (
                f" · {_esc(g['success'])}" if g["success"] else ""
            )
        else:
            subgoal, title = "", ": not in a subgoal"
        cells.append(
            CELL.format(
                css=css,
                i=i,
                subgoal=subgoal,
                title=title,
                start=(
                    f'<span class="handle start" data-edge="start" data-subgoal="{gid}"></span>'
                    if g and first
                    else ""
                ),
                success=(
                    f'<span class="succ s-{_esc(g["success"] or "none")}"></span>'
                    if g and first
                    else ""
                ),
                marks=f'<span class="marks">{_esc(cell["marks"])}</span>' if cell["marks"] else "",
                end=(
                    f'<span class="handle end" data-edge="end" data-subgoal="{gid}"></span>'
                    if g and last
                    else ""
                ),
            )
        )
    return SafeString("".join(cells))  # every text in it is escaped


# ---------------------------------------------------------------- the panels of _main.html

HX_MAIN = 'hx-target="#ws-main" hx-swap="outerHTML" hx-sync="#ws:queue all"'


def _vals(**fields: Any) -> str:
    """An ``hx-vals`` attribute's quoted JSON, of escaped values."""
    return "'{" + ", ".join(f'"{k}": "{v}"' for k, v in fields.items()) + "}'"


def _urls(context: template.Context, *ops: str) -> list[str]:
    edit = context["edit"]
    return [_esc(edit[op]) for op in ops]


@register.simple_tag(takes_context=True)
def memory_cards(context: template.Context) -> SafeString:
    """A card per memory target (its form, the steps it is needed at, its buttons), or none."""
    index = context["index"]
    update, toggle, delete = _urls(context, "memory_update", "memory_toggle", "memory_delete")
    cards = []
    for m in context["memory_targets"]:
        mid, here, encoded = _esc(m["id"]), m["here"], _esc(m["encode_step"])
        vals = f"{_vals(step=index, target=mid)} {HX_MAIN}"
        needed = "".join(
            f'<a href="?step={r}" data-jump="{r}" class="steplink">{r}</a>'
            for r in map(_esc, m["retrieve_steps"])
        )
        pill = {
            "encoded": '<span class="pill">encoded here</span>',
            "retrieved": '<span class="pill">needed here</span>',
        }.get(here, "")
        button = ""
        if index > m["encode_step"]:
            button = (
                f'\n            <button type="button" class="ghost small" hx-post="{toggle}"\n'
                f"                    hx-vals={vals}>"
                f"{'not needed here' if here == 'retrieved' else 'needed here'}</button>\n"
                "            "
            )
        cards.append(
            f'\n        <div class="label-card{" here" if here else ""}">\n'
            f'          <form hx-post="{update}" hx-swap="none"\n'
            '                hx-trigger="change, input delay:700ms" hx-sync="#ws:queue all"'
            ' class="mt-form">\n'
            f'            <input type="hidden" name="step" value="{index}">'
            f'<input type="hidden" name="target" value="{mid}">\n'
            '            <div class="row">\n'
            f'              <input type="text" name="key" value="{_esc(m["key"])}" class="key"'
            ' aria-label="Key">\n'
            f'              <input type="text" name="value" value="{_esc(m["value"])}"'
            ' aria-label="Value">\n'
            "            </div>\n"
            f'            <div class="small">encoded at <a href="?step={encoded}"'
            f' data-jump="{encoded}">step {encoded}</a>\n'
            '              · needed at <input type="text" name="retrieve_steps"'
            f' value="{_esc(m["retrieve_text"])}" class="steps" aria-label="Retrieve steps"'
            ' placeholder="e.g. 7, 9">\n'
            f"              {needed}\n"
            "            </div>\n"
            "          </form>\n"
            '          <div class="row small">\n'
            f"            {pill}\n"
            f"            {button}\n"
            f'            <button type="button" class="ghost small danger" hx-post="{delete}"\n'
            f"                    hx-vals={vals}>Delete</button>\n"
            "          </div>\n"
            "        </div>\n      "
        )
    if not cards:
        return SafeString('<p class="muted small">None yet.</p>')  # a constant
    return SafeString("".join(cards))  # every text in it is escaped


def _options(choices: Iterable[tuple[Any, Any]], selected: Any = None) -> str:
    """``<option>`` per choice; with ``selected``, each says whether it is the one."""
    if selected is None:
        return "".join(f'<option value="{_esc(v)}">{_esc(lab)}</option>' for v, lab in choices)
    return "".join(
        f'<option value="{_esc(v)}" {"selected" if v == selected else ""}>{_esc(lab)}</option>'
        for v, lab in choices
    )


@register.simple_tag(takes_context=True)
def anchor_cards(context: template.Context) -> SafeString:
    """A card per anchor on the selected step: its form, evidence and delete button."""
    index, types = context["index"], context["anchor_types"]
    update, delete = _urls(context, "anchor_update", "anchor_delete")
    cards = []
    for a in context["anchors_here"]:
        key = _esc(a["key"])
        bounds = a["evidence"].get("bounds")
        shown = f"box {','.join(map(_esc, bounds))}" if bounds else ""
        cards.append(
            '\n        <div class="label-card here">\n'
            f'          <form hx-post="{update}" hx-swap="none"\n'
            '                hx-trigger="change, input delay:700ms" hx-sync="#ws:queue all">\n'
            f'            <input type="hidden" name="step" value="{index}">'
            f'<input type="hidden" name="key" value="{key}">\n'
            f'            <div class="row"><code>{key}</code>\n'
            '              <select name="type" aria-label="Type">'
            f"{_options(types, a['type'])}</select>\n"
            "            </div>\n"
            f'            <input type="text" name="content" value="{_esc(a["content"])}"'
            ' aria-label="Content">\n'
            '            <input type="text" name="description"'
            f' value="{_esc(a["description"])}" placeholder="why it matters later"'
            ' aria-label="Description">\n'
            f'            <input type="hidden" name="evidence" id="an-evidence-{key}" value="">\n'
            "          </form>\n"
            '          <div class="row small">\n'
            f'            <button type="button" class="ghost small" data-pick="#an-evidence-{key}">'
            "Pick evidence</button>\n"
            f'            <span class="evidence-shown muted">{shown}</span>\n'
            '            <span class="spacer"></span>\n'
            f'            <button type="button" class="ghost small danger" hx-post="{delete}"\n'
            f"                    hx-vals={_vals(step=index, key=key)} {HX_MAIN}>Delete</button>\n"
            "          </div>\n"
            "        </div>\n      "
        )
    return SafeString("".join(cards))  # every text in it is escaped


@register.simple_tag
def options(choices: Iterable[tuple[Any, Any]], lower: bool = False) -> SafeString:
    """``<option>`` per ``(value, label)`` choice (the label in lower case with ``lower``)."""
    if lower:
        choices = [(v, str(lab).lower()) for v, lab in choices]
    return SafeString(_options(choices))  # every text in it is escaped


@register.simple_tag
def anchor_options(anchors: list[dict[str, Any]], selected: int = 0) -> SafeString:
    """``<option>`` per anchor key; with ``selected`` (1 for the first), each says whether it
    is the one."""
    keys = [_esc(a["key"]) for a in anchors]
    if not selected:
        return SafeString("".join(f'<option value="{k}">{k}</option>' for k in keys))
    return SafeString(  # every text in it is escaped
        "".join(
            f'<option value="{k}" {"selected" if n == selected else ""}>{k}</option>'
            for n, k in enumerate(keys, start=1)
        )
    )


@register.simple_tag
def relation_markers(relations: Iterable[tuple[str, str]]) -> SafeString:
    """The graph's arrow head for each relation."""
    return SafeString(  # every text in it is escaped
        "".join(
            f'<marker id="arrow-{v}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6"'
            ' markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"'
            f' class="rel-{v}"/></marker>'
            for v in (_esc(v) for v, _ in relations)
        )
    )


@register.simple_tag
def graph_lanes(graph: dict[str, Any]) -> SafeString:
    return SafeString(  # every text in it is escaped
        "".join(
            f'<text class="lane" x="2" y="{_esc(lane["y"])}">{_esc(lane["name"])}</text>'
            for lane in graph["lanes"]
        )
    )


@register.simple_tag
def graph_edges(graph: dict[str, Any]) -> SafeString:
    edges = []
    for e in graph["edges"]:
        rel, critical = _esc(e["relation"]), e["critical"]
        edges.append(
            f'<path class="edge rel-{rel}{" critical" if critical else ""}" d="{_esc(e["path"])}"'
            f' marker-end="url(#arrow-{rel})"><title>{_esc(e["source"])} {rel}'
            f" {_esc(e['target'])}{' (critical)' if critical else ''}</title></path>"
        )
    return SafeString("".join(edges))  # every text in it is escaped


@register.simple_tag
def graph_nodes(graph: dict[str, Any], index: int) -> SafeString:
    nodes = []
    for n in graph["nodes"]:
        key, step, kind = _esc(n["key"]), _esc(n["step"]), _esc(n["type"])
        x, y, left = _esc(n["x"]), _esc(n["y"]), n["label_left"]
        nodes.append(
            f'<g class="node type-{kind}{" here" if n["step"] == index else ""}"'
            f' data-key="{key}" data-step="{step}"><circle cx="{x}" cy="{y}" r="6"/>'
            f'<text x="{x}" y="{y}" dy="-8">{key}</text>'
            f'<text class="content{" left" if left else ""}" x="{x}" y="{y}"'
            f' dx="{"-9" if left else "9"}" dy="4">{_esc(n["label"])}</text>'
            f"<title>{key} · step {step} · {kind}: {_esc(n['content'])}</title></g>"
        )
    return SafeString("".join(nodes))  # every text in it is escaped


@register.simple_tag
def relation_legend(relations: Iterable[tuple[str, str]]) -> SafeString:
    return SafeString(  # every text in it is escaped
        "".join(
            '<span class="rel-key"><svg width="22" height="8" aria-hidden="true">'
            f'<line x1="0" y1="4" x2="22" y2="4" class="edge rel-{_esc(v)}"/></svg>'
            f" <kbd>{n}</kbd> {_esc(str(lab).lower())}</span>"
            for n, (v, lab) in enumerate(relations, start=1)
        )
    )


@register.simple_tag(takes_context=True)
def link_items(context: template.Context) -> SafeString:
    """A list item per anchor link, with its delete button."""
    index, (delete,) = context["index"], _urls(context, "link_delete")
    items = []
    for link in context["links"]:
        rel = _esc(link["relation"])
        critical = ' <span class="pill critical">critical</span>' if link["critical"] else ""
        items.append(
            f'\n        <li><code>{_esc(link["source"])}</code> <span class="rel rel-{rel}">'
            f"{rel}</span> <code>{_esc(link['target'])}</code>"
            f"{critical}\n"
            f'          <button type="button" class="link small danger" hx-post="{delete}"\n'
            f"                  hx-vals={_vals(step=index, link=_esc(link['id']))}"
            f' {HX_MAIN} aria-label="Delete link">✕</button></li>\n      '
        )
    return SafeString("".join(items))  # every text in it is escaped


@register.simple_tag
def anchor_jumps(anchors: list[dict[str, Any]]) -> SafeString:
    """Every anchor as a link to its step, separated by commas."""
    return SafeString(  # every text in it is escaped
        ", ".join(
            f'<a href="?step={step}" data-jump="{step}" title="{_esc(a["content"])}">'
            f"{_esc(a['key'])}@{step}</a>"
            for a in anchors
            for step in (_esc(a["step"]),)
        )
    )


@register.simple_tag(takes_context=True)
def history_items(context: template.Context) -> SafeString:
    """A list item per recent change (``annotate.history.history_entries``): when, who, what,
    its revert button and its lines; or a line saying there is none."""
    index, can_edit, (revert,) = context["index"], context["can_edit"], _urls(context, "revert")
    items = []
    for h in context["history"]:
        e = h["event"]
        pk = _esc(e.pk)
        who = (e.actor.get_username() if e.actor else "") or "system"
        button = ""
        if h["revertable"] and can_edit:
            button = (
                '<button type="button" class="link small revert"'
                ' title="Put back what this change replaced"\n'
                f'        hx-post="{revert}" hx-vals={_vals(event=pk, step=index)}\n'
                f"        {HX_MAIN}>revert</button>"
            )
        lines = ""
        if h["lines"]:
            lines = (
                '<ul class="change">'
                + "".join(f"<li>{_esc(line)}</li>" for line in h["lines"])
                + "</ul>"
            )
        items.append(
            f'\n    <li data-event="{pk}"><span class="muted">'
            f"{timezone.localtime(e.at).strftime('%H:%M:%S')}</span>"
            f" <b>{_esc(who)}</b> {_esc(h['what'])}\n"
            f"      {button}\n"
            f"      {lines}\n"
            "    </li>\n  "
        )
    if not items:
        return SafeString('<li class="muted">No changes yet.</li>')  # a constant
    return SafeString("".join(items))  # every text in it is escaped


@register.simple_tag
def problem_items(problems: list[dict[str, Any]]) -> SafeString:
    """A list item per problem to fix before submitting, linked to its step; or a line saying
    there is none."""
    items = []
    for p in problems:
        message = _esc(p["message"])
        if p["step"] is not None:
            step = _esc(p["step"])
            message = f'<a href="?step={step}" data-jump="{step}">{message}</a>'
        items.append(f"\n    <li>{message}</li>\n  ")
    if not items:
        items.append(
            '\n    <li class="muted">Every step is in a subgoal and every subgoal is labelled.</li>'
            "\n  "
        )
    return SafeString("".join(items))  # every text in it is escaped


@register.simple_tag
def success_choices(successes: Iterable[tuple[str, str]], chosen: Any) -> SafeString:
    """The subgoal's success as radio buttons numbered for the keyboard, ``chosen`` checked."""
    return SafeString(  # every text in it is escaped
        "".join(
            f'\n              <label class="chip s-{v}"><input type="radio" name="success"'
            f' value="{v}" {"checked" if value == chosen else ""}> <kbd>{n}</kbd>'
            f" {_esc(label)}</label>\n            "
            for n, (value, label) in enumerate(successes, start=1)
            for v in (_esc(value),)
        )
    )


def _name(user: Any) -> str:
    """``{{ user.get_username }}``: nothing for no user."""
    return _esc(user.get_username()) if user else ""


@register.simple_tag
def step_comments(comments: Iterable[Any]) -> SafeString:
    """The review comments on the selected step, above its screens."""
    return SafeString(  # every text in it is escaped
        "".join(
            f'\n      <div class="comment{" resolved" if c.resolved else ""}"'
            f' data-comment="{_esc(c.pk)}"><b>{_name(c.author)}</b>: {_esc(c.text)}'
            + (
                ' <span class="muted small">(resolved'
                + (f" by {_name(c.resolved_by)}" if c.resolved_by else "")
                + ")</span>"
                if c.resolved
                else ""
            )
            + "</div>\n    "
            for c in comments
        )
    )


@register.simple_tag(takes_context=True)
def review_comments(context: template.Context) -> SafeString:
    """Every review comment of the trajectory, with its resolve (or reopen) button."""
    index, can_resolve, (resolve,) = (
        context["index"],
        context["can_resolve"],
        _urls(context, "comment_resolve"),
    )
    items = []
    for c in context["comments"]:
        pk, done = _esc(c.pk), c.resolved
        if c.step_index is not None:
            step = _esc(c.step_index)
            where = f'<a href="?step={step}" data-jump="{step}">step {step}</a>'
        else:
            where = "overall"
        button = ""
        if can_resolve:
            vals = _vals(step=index, comment=pk, resolved="0" if done else "1")
            button = (
                f'<button type="button" class="ghost small" hx-post="{resolve}"\n'
                f"          hx-vals={vals} {HX_MAIN}>{'Reopen' if done else 'Resolve'}</button>"
            )
        items.append(
            f'<li class="ws-comment {"resolved muted" if done else "open"}" data-comment="{pk}">'
            f'<span class="pill {"status-approved" if done else "critical"}">'
            f"{'resolved' if done else 'open'}</span> {where} · <b>{_name(c.author)}</b>:"
            f" {_esc(c.text)}"
            + (
                f' <span class="small">(by {_name(c.resolved_by)})</span>'
                if done and c.resolved_by
                else ""
            )
            + f"\n        {button}</li>"
        )
    return SafeString("".join(items))  # every text in it is escaped
