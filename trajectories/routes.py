"""A route's URL for many ids from one ``reverse``: lists link every row to the same route."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.urls import reverse

PROBE = 987654321987654321  # an id no route contains elsewhere


def route_parts(
    name: str, wrap: Callable[[str], str] = str, *, before: tuple[Any, ...] = ()
) -> tuple[str, str]:
    """``(head, tail)`` of route ``name`` around its last argument: its URL for ``pk`` is
    ``f"{head}{pk}{tail}"``. ``before`` are the arguments ahead of it, the same for every URL;
    ``wrap`` makes the URL wanted of the path (an absolute one)."""
    head, tail = wrap(reverse(name, args=[*before, PROBE])).split(str(PROBE), 1)
    return head, tail
