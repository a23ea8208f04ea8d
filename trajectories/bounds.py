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

from core.limits import limit as current_limit

from .invalid import InvalidData, fail

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
    limit = current_limit("WAYPOINT_MAX_FILE_BYTES")
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
    limit = current_limit("WAYPOINT_MAX_FILE_BYTES") if limit is None else limit
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
    limit = current_limit("WAYPOINT_MAX_FILE_BYTES") if limit is None else limit
    return f"longer than {human_size(limit)} (WAYPOINT_MAX_FILE_BYTES)"


def check_json_depth(value: Any, where: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """Refuse a parsed JSON value nested deeper than ``limit`` arrays and objects.

    Walked a level at a time, without recursion; the exact types ``json`` builds are compared,
    which keeps the walk to a fifth of the time the parse took."""
    level, depth = [value], 1
    while level:
        if depth > limit:
            raise fail(where, "invalid JSON: nested too deeply")
        below = []
        for item in level:
            for child in item.values() if type(item) is dict else item:
                if type(child) is dict or type(child) is list:
                    below.append(child)
        level, depth = below, depth + 1
    return value


# An integer of 19 digits or more may be past 64 bits, which orjson reads as a float where
# ``json`` keeps it an int: a text with a run of 19 digits is read by ``json``, as is any text
# orjson refuses. The runs are found with every digit made a 0 (fast on bytes, unlike a regex).
_ZEROED = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
_UNREAD = object()


def _orjson_loads(raw: bytes | str) -> Any:
    """What ``json.loads`` gives for ``raw``, when orjson gives the same; else ``_UNREAD``."""
    if isinstance(raw, str):
        try:
            data = raw.encode()
        except UnicodeEncodeError:  # a lone surrogate: orjson refuses it, json reads it
            return _UNREAD
    elif isinstance(raw, bytes):
        data = raw
    else:
        return _UNREAD
    if _LONG_NUMBER in data.translate(_ZEROED):
        return _UNREAD
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return _UNREAD  # json says what is wrong, in its words (or reads what orjson would not)


def _brackets(raw: bytes | str) -> int:
    """An upper bound on the nesting of a JSON text: its ``[`` and ``{``, in strings too."""
    if isinstance(raw, str):
        return raw.count("[") + raw.count("{")
    return raw.count(b"[") + raw.count(b"{")


def load_json(raw: bytes | str, where: str, **options: Any) -> Any:
    """``json.loads``, with the parser's own limits refused by name, and at most
    :data:`MAX_JSON_DEPTH` levels of nesting.

    The parser raises ``RecursionError`` for deep nesting (e.g. 100,000 ``[``), at a depth
    that depends on the caller's stack, and a plain ``ValueError`` for an integer of more
    digits than ``sys.get_int_max_str_digits()``; both become :class:`InvalidData` naming
    the place, as does anything nested deeper than the fixed limit. Syntax and encoding
    errors (``JSONDecodeError``, ``UnicodeDecodeError``) pass through for the caller to word.
    ``options`` go to ``json.loads`` (``parse_constant``).

    The text is parsed by orjson (a few times faster) when it gives what ``json`` gives: for
    any text orjson refuses (NaN, 1e400, a lone surrogate, a syntax error...) and for one with
    a run of 19 digits (an integer orjson would make a float) ``json`` reads it, so the value,
    the refusal and its message are ``json``'s. A text with fewer ``[`` and ``{`` than the
    limit cannot be nested past it and is not walked.
    """
    # parse_constant is only ever called for NaN and the infinities, which orjson refuses.
    value = _orjson_loads(raw) if set(options) <= {"parse_constant"} else _UNREAD
    if value is _UNREAD:
        try:
            value = json.loads(raw, **options)
        except RecursionError:
            raise fail(where, "invalid JSON: nested too deeply") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise
        except ValueError as exc:
            if "digits" not in str(exc):  # parse_constant's own refusal, e.g. of NaN
                raise
            limit = sys.get_int_max_str_digits()
            raise fail(where, f"invalid JSON: a number has more than {limit} digits") from None
    if isinstance(value, dict | list) and _brackets(raw) > MAX_JSON_DEPTH:
        check_json_depth(value, where)
    return value
