"""Reading untrusted input within bounds: files and lines no larger than a limit, JSON no
deeper than a limit (and :func:`trajectories.validation.shown` cuts what a message repeats).

Every reader of an upload or an import goes through these, so a hostile input (a 100,000-deep
JSON array, an 800 MB upload, a 60 MB line) is refused by name, as :class:`InvalidData`
naming the place, before it costs memory or the stack, and an error never repeats it back.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import IO, Any

import orjson
from django.conf import settings

from .validation import InvalidData, fail

# Deeper than any document Waypoint reads or writes (a trajectory record is 6 levels), and far
# below the interpreter's recursion limit, so that what is read can be walked, validated and
# written again by recursive code (serializers, ``json.dumps``) wherever it goes.
MAX_JSON_DEPTH = 100

CHUNK = 1024**2


def human_size(size: float) -> str:
    """``1536`` -> ``"1.5 KiB"``."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def check_file_size(size: int, where: str) -> None:
    """Refuse a file over ``WAYPOINT_MAX_FILE_BYTES``: the most one file of an import, or one
    document read whole, may hold."""
    limit = settings.WAYPOINT_MAX_FILE_BYTES
    if size > limit:
        raise InvalidData(
            f"{where}: file is {human_size(size)}, over the limit of {human_size(limit)} "
            "(WAYPOINT_MAX_FILE_BYTES)"
        )


def read_upload(upload: Any, where: str) -> bytes:
    """An uploaded file's bytes, its size checked before a byte is read into memory."""
    check_file_size(upload.size, where)
    return b"".join(upload.chunks())


def bounded_lines(handle: IO[str], limit: int | None = None) -> Iterator[tuple[int, str | None]]:
    """(number from 1, line) for each line of a text file; a line longer than ``limit``
    characters (``WAYPOINT_MAX_FILE_BYTES`` by default) is read in pieces, never held whole,
    and given as None."""
    limit = settings.WAYPOINT_MAX_FILE_BYTES if limit is None else limit
    number = 0
    while line := handle.readline(limit + 1):
        number += 1
        if len(line) > limit and not line.endswith("\n"):
            while (rest := handle.readline(CHUNK)) and not rest.endswith("\n"):
                pass
            yield number, None
            continue
        yield number, line


def line_too_long(limit: int | None = None) -> str:
    limit = settings.WAYPOINT_MAX_FILE_BYTES if limit is None else limit
    return f"longer than {human_size(limit)} (WAYPOINT_MAX_FILE_BYTES)"


def check_json_depth(value: Any, where: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """Refuse a parsed JSON value nested deeper than ``limit`` arrays and objects.

    Walked a level at a time, without recursion; the exact types ``json`` builds are compared,
    which keeps the walk to a fifth of the time the parse took."""
    _walk(value, where, limit)
    return value


# orjson reads an integer beyond 64 bits as a float, of at least this size.
_BIG = float(2**63)


def _walk(value: Any, where: str, limit: int) -> bool:
    """The depth check; also whether a float of at least 2**63 (maybe a long integer) is in."""
    level, depth, big = [value], 1, False
    while level:
        if depth > limit:
            raise fail(where, "invalid JSON: nested too deeply")
        below = []
        for item in level:
            for child in item.values() if type(item) is dict else item:
                kind = type(child)
                if kind is dict or kind is list:
                    below.append(child)
                elif kind is float and not -_BIG < child < _BIG:
                    big = True
        level, depth = below, depth + 1
    return big


def load_json(raw: bytes | str, where: str, **options: Any) -> Any:
    """``json.loads``, with the parser's own limits refused by name, and at most
    :data:`MAX_JSON_DEPTH` levels of nesting.

    The parser raises ``RecursionError`` for deep nesting (e.g. 100,000 ``[``), at a depth
    that depends on the caller's stack, and a plain ``ValueError`` for an integer of more
    digits than ``sys.get_int_max_str_digits()``; both become :class:`InvalidData` naming
    the place, as does anything nested deeper than the fixed limit. Syntax and encoding
    errors (``JSONDecodeError``, ``UnicodeDecodeError``) pass through for the caller to word.
    ``options`` go to ``json.loads`` (``parse_constant``).
    """
    value = _fast_loads(raw) if not options else _FAILED
    if value is _FAILED:
        value = _loads(raw, where, **options)
        if isinstance(value, dict | list):
            _walk(value, where, MAX_JSON_DEPTH)
        return value
    if _odd_number(value, where, MAX_JSON_DEPTH):
        return load_json(raw, where, parse_int=int)  # by json: the same values, exactly
    return value


_FAILED = object()


def _odd_number(value: Any, where: str, limit: int | None) -> bool:
    """Whether orjson's ``value`` holds a float of at least 2**63 (an integer beyond 64 bits
    is read so), with the depth check on the way (``limit`` None: no limit)."""
    if isinstance(value, dict | list):
        return _walk(value, where, limit if limit is not None else sys.maxsize)
    return type(value) is float and not -_BIG < value < _BIG


def _fast_loads(raw: bytes | str) -> Any:
    """orjson's parse, or ``_FAILED`` for anything it refuses: that input then goes through
    ``json`` itself, so what is refused, and in which words, does not depend on orjson (whose
    limits are narrower: UTF-8 only, no ``NaN``, no lone surrogates). orjson reads integers
    beyond 64 bits as floats: the callers read such input again with ``json``."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _FAILED


def _loads(raw: bytes | str, where: str, **options: Any) -> Any:
    try:
        return json.loads(raw, **options)
    except RecursionError:
        raise fail(where, "invalid JSON: nested too deeply") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError as exc:
        if "digits" not in str(exc):  # parse_constant's own refusal, e.g. of NaN
            raise
        limit = sys.get_int_max_str_digits()
        raise fail(where, f"invalid JSON: a number has more than {limit} digits") from None


def read_db_json(raw: bytes | str) -> Any:
    """JSON Waypoint wrote itself (a database column): orjson, or ``json`` for what orjson
    would read otherwise (integers beyond 64 bits, ``NaN``), without the untrusted input's
    depth walk."""
    value = _fast_loads(raw)
    if value is _FAILED or (value and _odd_number(value, "", None)):
        return json.loads(raw)
    return value
