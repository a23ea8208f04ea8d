"""The Jinja2 environment of the pages whose render time matters (the annotation workspace, the
trajectory list's rows).

Django's own Jinja2 backend loads these templates from each app's ``jinja2/`` folder, with
autoescaping on; this adds what the Django templates have built in: ``url()``, ``static()``
and the few filters the pages use, read from the same functions as the Django templates'.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.template.defaultfilters import pluralize, truncatechars
from django.templatetags.static import static
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import dateformat, timezone
from jinja2 import ChainableUndefined, Environment

from trajectories.templatetags.trajectory_tags import action_summary, overlay_shapes


def url(name: str, *args: Any) -> str:
    """``{% url name args %}``, reversed once per process for each URL prefix, URLconf, name
    and arguments: the URL patterns do not change while a process runs, and the workspace
    names ~20 URLs of its trajectory on every draw."""
    try:
        urlconf = get_urlconf() or settings.ROOT_URLCONF
        return _reversed(get_script_prefix(), urlconf, name, args)
    except TypeError:  # an argument that cannot be a cache key
        return reverse(name, args=args)


@lru_cache(maxsize=4096)
def _reversed(prefix: str, urlconf: Any, name: str, args: tuple[Any, ...]) -> str:
    return reverse(name, args=args, urlconf=urlconf)


def date(value: datetime | None, format_string: str) -> str:
    """``|date``: the time in the current time zone, in Django's date format."""
    if value is None:
        return ""
    if timezone.is_aware(value):
        value = timezone.localtime(value)
    numeric = _numeric_format(format_string)
    if numeric is not None:
        return numeric.format(value)
    return dateformat.format(value, format_string)


# Django's zero-padded numeric format characters as str.format fields: the same text at a
# twentieth of dateformat's cost, for the history's times and the list's dates (15-25 a page).
NUMERIC_DATE = {
    "Y": "{0.year:04d}",
    "m": "{0.month:02d}",
    "d": "{0.day:02d}",
    "H": "{0.hour:02d}",
    "i": "{0.minute:02d}",
    "s": "{0.second:02d}",
}


@lru_cache(maxsize=64)
def _numeric_format(format_string: str) -> str | None:
    """``format_string`` as a str.format pattern, if it has only the characters of
    :data:`NUMERIC_DATE` besides punctuation and spaces; else None."""
    pattern = []
    for char in format_string:
        if char in NUMERIC_DATE:
            pattern.append(NUMERIC_DATE[char])
        elif char.isalnum() or char == "\\":
            return None
        else:
            pattern.append(char.replace("{", "{{").replace("}", "}}"))
    return "".join(pattern)


def username(user: Any) -> str:
    """``user.get_username`` of the Django templates: empty for no user."""
    return user.get_username() if user else ""


def environment(**options: Any) -> Environment:
    # As in Django's templates, a missing variable (or one of its attributes) is empty.
    options["undefined"] = ChainableUndefined
    env = Environment(**options)
    env.globals.update(url=url, static=static, overlay_shapes=overlay_shapes)
    env.filters.update(
        action_summary=action_summary,
        truncatechars=truncatechars,
        pluralize=pluralize,
        date=date,
        username=username,
    )
    return env
