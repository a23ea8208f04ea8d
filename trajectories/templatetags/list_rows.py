"""The rows of the trajectory list, written in Python.

The template loop this replaces cost a third of the list page's CPU under load (25 rows of
eight lookups, three display names and a date each; bench/bench_load.py). The HTML is the same
(tests/trajectories/test_list_rows.py renders both).
"""

from __future__ import annotations

from collections.abc import Iterable

from django import template
from django.utils import formats, timezone
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from ..models import Outcome, Source, Status, Trajectory
from ..routes import route_parts

register = template.Library()

ROW = (
    "    <tr>\n"
    '      <td class="goal"><a href="{}" title="{}">{}</a></td>\n'
    '      <td class="num">{}</td>\n'
    '      <td><span class="pill status-{}">{}</span></td>\n'
    '      <td><span class="pill outcome-{}">{}</span></td>\n'
    "      <td>{}</td>\n"
    '      <td class="cut">{}</td>\n'
    '      <td class="nowrap">{}</td>\n'
    "    </tr>\n"
)
EMPTY = '    <tr><td colspan="7" class="muted">No trajectories match.</td></tr>\n'
DATE = "%Y-%m-%d %H:%M"  # the list's "Y-m-d H:i", in the current time zone
STATUSES, OUTCOMES, SOURCES = dict(Status.choices), dict(Outcome.choices), dict(Source.choices)


@register.simple_tag
def trajectory_rows(trajectories: Iterable[Trajectory]) -> SafeString:
    """One ``<tr>`` per trajectory (its goal linking to its page), or a row saying none match."""
    head, tail = route_parts("trajectory-detail")
    rows = [
        (
            f"{head}{t.pk}{tail}",
            *(goal := "" if t.task is None else t.task.goal, goal),
            formats.localize(t.step_count),
            t.status,
            STATUSES.get(t.status, t.status),
            t.outcome,
            OUTCOMES.get(t.outcome, t.outcome),
            SOURCES.get(t.source, t.source),
            t.recorded_by.get_username() if t.recorded_by else (t.recorder_name or "—"),
            "" if t.created_at is None else timezone.localtime(t.created_at).strftime(DATE),
        )
        for t in trajectories
    ]
    if not rows:
        return SafeString(EMPTY)  # a constant
    return format_html_join("", ROW, rows)
