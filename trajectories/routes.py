"""A route's URL for many ids from one ``reverse``: lists link every row to the same route."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.urls import get_script_prefix, get_urlconf, reverse

PROBE = 987654321987654321  # an id no route contains elsewhere


def route_parts(
    name: str, wrap: Callable[[str], str] = str, *, before: tuple[Any, ...] = ()
) -> tuple[str, str]:
    """``(head, tail)`` of route ``name`` around its last argument: its URL for ``pk`` is
    ``f"{head}{pk}{tail}"``. ``before`` are the arguments ahead of it, the same for every URL;
    ``wrap`` makes the URL wanted of the path (an absolute one)."""
    if wrap is str:  # a path: the same until the URL prefix or the URL configuration changes
        urlconf = get_urlconf() or settings.ROOT_URLCONF
        return _path_parts(name, before, get_script_prefix(), urlconf)
    head, tail = wrap(reverse(name, args=[*before, PROBE])).split(str(PROBE), 1)
    return head, tail


@lru_cache(maxsize=4096)
def _path_parts(name: str, before: tuple[Any, ...], prefix: str, urlconf: Any) -> tuple[str, str]:
    # The prefix and the URL configuration are the key: reverse() reads them from the thread.
    head, tail = reverse(name, args=[*before, PROBE], urlconf=urlconf).split(str(PROBE), 1)
    return head, tail


def route_url(name: str, *args: Any) -> str:
    """``reverse(name, args=args)``, from a reverse kept per route when the last argument is
    an id (an int: written into the URL as it is); otherwise reversed as usual."""
    if args and isinstance(args[-1], int) and not isinstance(args[-1], bool):
        head, tail = route_parts(name, before=args[:-1])
        return f"{head}{args[-1]}{tail}"
    if not args:
        return _path(name, get_script_prefix(), get_urlconf() or settings.ROOT_URLCONF)
    return reverse(name, args=args)


@lru_cache(maxsize=256)
def _path(name: str, prefix: str, urlconf: Any) -> str:
    return reverse(name, urlconf=urlconf)
