"""The workspace's repeated parts (filmstrip, track, label cards, graph), written in Python.

The template loops these replace were most of the workspace page's CPU (a dozen steps and
cells, each a few dozen variable lookups, filters and URL reversals). The HTML is the same
byte for byte: tests/annotate/test_workspace_html.py renders each part both ways.

Every text from the database goes through ``_esc``; numbers of integer fields go as they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from trajectories.models import Step
from trajectories.routes import route_parts
from trajectories.templatetags.trajectory_tags import action_overlay, action_summary

register = template.Library()


def _esc(value: Any) -> str:
    """``{{ value }}`` in a template: its text, HTML-escaped."""
    return escape(str(value))


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
                caption=_esc(Truncator(step.summary or str(step)).chars(40)),
            )
        )
    return mark_safe("".join(frames))  # noqa: S308 (every text in it is escaped)


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
    return mark_safe("".join(cells))  # noqa: S308 (every text in it is escaped)
