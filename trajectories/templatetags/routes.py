"""``{% route 'name' id %}``: ``{% url %}`` for the routes every page names, from a reverse kept
per route (trajectories/routes.py) instead of one per use."""

from __future__ import annotations

from typing import Any

from django import template

from ..routes import route_url

register = template.Library()


@register.simple_tag
def route(name: str, *args: Any) -> str:
    return route_url(name, *args)
