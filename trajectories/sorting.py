"""Sortable table headers: each column's link sorts by it, a second click reverses.

The orderings themselves are in :mod:`trajectories.selectors` (one place for the page, the
API and exports); this only builds the links a list page's header shows.
"""

from __future__ import annotations

from typing import TypedDict

from django.http import HttpRequest


class SortColumn(TypedDict):
    label: str
    key: str  # "" for a column that cannot be sorted
    css: str
    href: str
    aria_sort: str  # "ascending", "descending" or "none"


def sort_columns(
    request: HttpRequest, columns: list[tuple[str, str, str]], current: str
) -> list[SortColumn]:
    """The header of a list sorted by ``current`` (``key`` or ``-key``): (label, key, css
    class) per column, each with the link that sorts by it, the page's other filters kept."""
    active = current.strip()
    out: list[SortColumn] = []
    for label, key, css in columns:
        query = request.GET.copy()
        query.pop("page", None)
        query["sort"] = f"-{key}" if active == key else key
        aria = "none"
        if active == key:
            aria = "ascending"
        elif active == f"-{key}":
            aria = "descending"
        out.append(
            SortColumn(label=label, key=key, css=css, href=f"?{query.urlencode()}", aria_sort=aria)
        )
    return out
