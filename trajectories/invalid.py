"""InvalidData, and how its messages name a place and a value: importable without Django's app
registry (the evaluator from the shell, ``python -m evaluation``, starts without it).

:mod:`trajectories.validation` re-exports all of it; the rules about a trajectory live there.
"""

from __future__ import annotations

from typing import Any

from .grading import GRADING_RULES, UnknownGradingRule


class InvalidData(ValueError):
    """Input that breaks a rule of the domain; the message names the place."""


class InvalidRequest(InvalidData):
    """A request that is malformed in itself (a missing field, a wrong type), whatever the data.

    The API answers it 400, and a well-formed request that breaks a rule of the domain given the
    stored data (a step past the last one, an unknown user) 422.
    """


def field_at(where: str, field: str) -> str:
    """Name a field inside a place: ``"line 3:"`` + ``"task"`` or ``"task"`` + ``"goal"``."""
    if not where:
        return field
    return f"{where} {field}" if where.endswith(":") else f"{where}.{field}"


def fail(where: str, message: str) -> InvalidData:
    if not where:
        return InvalidData(message)
    return InvalidData(f"{where} {message}" if where.endswith(":") else f"{where}: {message}")


SHOWN = 80  # characters of a value a message repeats


def cut(text: str, limit: int = SHOWN) -> str:
    """``text`` as a message may repeat it: at most ``limit`` characters and an ellipsis."""
    return text if len(text) <= limit else text[:limit] + "…"


def shown(value: Any, limit: int = SHOWN) -> str:
    """A value as a message names it (``repr``), cut short: a 60 MB string sent is not sent
    back; a list or an object is named by its type."""
    if isinstance(value, str):
        return repr(cut(value, limit))
    if value is None or isinstance(value, bool | int | float):
        return cut(repr(value), limit)
    return type(value).__name__


def check_grading_rule(value: Any, where: str) -> str:
    if value not in GRADING_RULES:
        raise fail(where, str(UnknownGradingRule(cut(value) if isinstance(value, str) else value)))
    return value
