"""The links of every page's top bar, from one reverse per route and URL prefix.

A page of Waypoint names thirteen routes in its top bar; reversing each on every request cost
the busiest pages more than the rest of their header.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape

from django import template
from django.urls import get_script_prefix, reverse
from django.utils.safestring import SafeString

from trajectories.routes import route_parts

register = template.Library()

SITE_LINKS = (
    ("Projects", "project-list"),
    ("Inbox", "annotate-inbox"),
    ("Review", "annotate-review"),
    ("Devices", "device-list"),
)
PROJECT_LINKS = (
    ("Import", "project-import"),
    ("Export", "project-export"),
    ("Progress", "annotate-progress"),
    ("Assign", "annotate-assignments"),
    ("Agreement", "annotate-agreement"),
    ("Proposals", "annotate-proposals"),
    ("Graphs", "project-graphs"),
    ("Members", "project-members"),
)


@lru_cache(maxsize=8)
def _links(prefix: str) -> tuple[str, str, tuple[tuple[str, str, str], ...]]:
    """For a URL prefix: the site links' markup, the project list's (head, tail) and each
    project link as (head, tail, label)."""
    site = "\n      ".join(
        f'<a href="{escape(reverse(name))}">{label}</a>' for label, name in SITE_LINKS
    )
    project = tuple((*route_parts(name), label) for label, name in PROJECT_LINKS)
    return site, route_parts("trajectory-list"), project


@register.simple_tag
def topnav_links(project=None) -> SafeString:
    """The signed-in user's links: the site's, then (on a project's pages) the project's."""
    site, (head, tail), links = _links(get_script_prefix())
    if not project:
        return SafeString(site)
    name = escape(project.name)
    parts = [
        site,
        '<span class="sep">/</span>',
        f'<a class="project-name" href="{head}{project.pk}{tail}" title="{name}">{name}</a>',
        *(f'<a href="{h}{project.pk}{t}">{label}</a>' for h, t, label in links),
    ]
    return SafeString("\n      ".join(parts))
