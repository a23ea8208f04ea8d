"""Reading predictions: AndroTMem's layout, or GUI-Owl / Stamp-GUI raw output text.

One step per line, with ``task_id`` and ``step_index``, and either

- ``prediction``: ``{"action": {"action": "tap", "x": 512, "y": 320, "value": "",
  "direction": ""}, "memory": "..."}`` in screenshot pixels (AndroTMem's layout; ``memory`` is
  optional), with ``credited_as_correct`` honoured as AndroTMem's scorer does; or
- ``output`` (or ``response``): the model's text, ``<think>...</think>\\nAction: ...\\nMemory:
  ...\\n<tool_call>{"name": "mobile_use", "arguments": {...}}</tool_call>`` with 0-1000
  coordinates, placed on the step's screenshot size from the benchmark.

A line that cannot be read is counted and reported with its number and reason; a line past
a limit (longer than ``WAYPOINT_MAX_FILE_BYTES``, nested deeper than ``MAX_JSON_DEPTH``)
refuses the file, naming the line. A line that names its step but whose prediction cannot be
parsed still counts as that step's prediction (scored 0), as an unparseable model output is a
wrong answer, not a missing one.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from trajectories.bounds import bounded_lines, line_too_long, load_json
from trajectories.invalid import InvalidData

MAX_REPORTED = 20

TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
FIELD = re.compile(
    r"^(Action|Memory):[ \t]*(.*?)(?=^\s*(?:Action:|Memory:|<tool_call>)|\Z)", re.S | re.M
)
BUTTONS = {"back": "back", "home": "home", "enter": "enter", "menu": "menu"}


@dataclass
class Prediction:
    action: dict[str, Any] | None
    memory: str | None = None
    credited: bool = False


@dataclass
class Malformed:
    count: int = 0
    lines: list[dict[str, Any]] = field(default_factory=list)

    def add(self, number: int, reason: str) -> None:
        self.count += 1
        if len(self.lines) < MAX_REPORTED:
            self.lines.append({"line": number, "reason": reason})


def _scale(point: Any, width: int, height: int) -> tuple[float, float]:
    try:
        if not isinstance(point, list | tuple) or len(point) < 2:
            raise TypeError
        x, y = float(point[0]), float(point[1])
    except (TypeError, ValueError, OverflowError):
        raise ValueError("coordinate must be [x, y] numbers") from None
    return x * width / 1000, y * height / 1000


def _direction(start: tuple[float, float], end: tuple[float, float]) -> str:
    dx, dy = end[0] - start[0], end[1] - start[1]
    if abs(dx) > abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def mobile_use_to_action(arguments: dict[str, Any], width: int, height: int) -> dict[str, Any]:
    """A ``mobile_use`` call as an AndroTMem action in screenshot pixels."""
    kind = str(arguments.get("action", "")).lower()
    action: dict[str, Any] = {"action": kind, "value": "", "direction": ""}
    if kind in ("click", "long_press"):
        action["action"] = "tap" if kind == "click" else "long_press"
        action["x"], action["y"] = _scale(arguments.get("coordinate"), width, height)
    elif kind == "swipe":
        start = _scale(arguments.get("coordinate"), width, height)
        end = _scale(arguments.get("coordinate2"), width, height)
        action["direction"] = _direction(start, end)
    elif kind == "type":
        action.update(action="text", value=str(arguments.get("text", "")))
    elif kind == "system_button":
        button = str(arguments.get("button", "")).lower()
        action["action"] = BUTTONS.get(button, button)
    elif kind == "open":
        action.update(action="open_app", value=str(arguments.get("text", "")))
    elif kind == "answer":
        action.update(action="finish", value=str(arguments.get("text") or ""))
    elif kind == "terminate":
        # Scored as a finish (AndroTMem folds the alias), but its status is not an answer.
        action.update(action="terminate", value=str(arguments.get("status") or ""))
    elif kind in ("key", "interact"):
        action.update(action="need_feedback" if kind == "interact" else "key")
        action["value"] = str(arguments.get("text", ""))
    return action


def parse_raw_output(text: str, width: int, height: int) -> tuple[dict[str, Any], str | None]:
    """(action, memory) from GUI-Owl raw output; ``ValueError`` says what is wrong."""
    fields = {name: value.strip() for name, value in FIELD.findall(text.split("</think>")[-1])}
    call_match = TOOL_CALL.search(text)
    if not call_match:
        raise ValueError("no <tool_call> block")
    try:
        call = load_json(call_match.group(1), "the <tool_call>")  # too deep: a ValueError too
    except json.JSONDecodeError as exc:
        raise ValueError(f"the <tool_call> is not JSON ({exc.msg})") from None
    arguments = call.get("arguments") if isinstance(call, dict) else None
    if not isinstance(arguments, dict):
        raise ValueError("the <tool_call> has no arguments object")
    memory = fields.get("Memory")
    return mobile_use_to_action(arguments, width, height), memory


class _StepSizes:
    """Each step's screenshot size, by (task id, step index), gathered on the first look: only
    GUI-Owl raw output (0-1000 coordinates) needs it."""

    def __init__(self, tasks: list[dict[str, Any]]) -> None:
        self.tasks = tasks
        self.sizes: dict[tuple[str, str], tuple[int, int]] | None = None

    def get(self, key: tuple[str, str]) -> tuple[int, int]:
        if self.sizes is None:
            self.sizes = {
                (str(task["task_id"]), str(step.get("step_index"))): (
                    int(step.get("width") or 1000),
                    int(step.get("height") or 1000),
                )
                for task in self.tasks
                for step in task.get("steps", [])
            }
        return self.sizes.get(key, (1000, 1000))


def read_predictions(
    source: Path | str | IO[bytes], tasks: list[dict[str, Any]]
) -> tuple[dict[str, dict[str, Prediction]], Malformed]:
    """Predictions by task id and step index (as strings), and the malformed lines.

    ``source`` is a path or a binary file (an upload).
    """
    if hasattr(source, "read"):
        return _read(io.TextIOWrapper(source, encoding="utf-8", errors="replace"), tasks)
    source = Path(source)
    if not source.is_file():
        raise InvalidData(f"{source}: no such file")
    with open(source, encoding="utf-8", errors="replace") as handle:
        return _read(handle, tasks)


def _read(
    handle: IO[str], tasks: list[dict[str, Any]]
) -> tuple[dict[str, dict[str, Prediction]], Malformed]:
    sizes = _StepSizes(tasks)
    predictions: dict[str, dict[str, Prediction]] = {}
    malformed = Malformed()
    for number, line in bounded_lines(handle):
        # A line past a limit (its length, its nesting) refuses the file, as an import is
        # refused; a line that is merely wrong is counted.
        where = f"predictions line {number}:"
        if line is None:
            raise InvalidData(f"{where} {line_too_long()}")
        if not line.strip():
            continue
        try:
            record = load_json(line, where)
        except json.JSONDecodeError as exc:
            malformed.add(number, f"invalid JSON ({exc.msg})")
            continue
        if not isinstance(record, dict) or "task_id" not in record or "step_index" not in record:
            malformed.add(number, "no task_id and step_index")
            continue
        key = (str(record["task_id"]), str(record["step_index"]))
        try:
            prediction = _prediction(record, sizes)
        except ValueError as exc:
            malformed.add(number, str(exc))
            prediction = Prediction(action=None)
        predictions.setdefault(key[0], {})[key[1]] = prediction
    return predictions, malformed


def _prediction(record: dict[str, Any], sizes: _StepSizes) -> Prediction:
    credited = record.get("credited_as_correct") is True
    raw = record.get("output", record.get("response"))
    if "prediction" not in record and isinstance(raw, str):
        key = (str(record["task_id"]), str(record["step_index"]))
        action, memory = parse_raw_output(raw, *sizes.get(key))
        return Prediction(action=action, memory=memory, credited=credited)
    inner = record.get("prediction")
    if not isinstance(inner, dict):
        if credited:
            return Prediction(action={"action": "AUTO_PASS"}, credited=True)
        raise ValueError("prediction must be an object (or give the raw model output as output)")
    action = inner.get("action", inner)
    if isinstance(action, str):
        action = {"action": action}
    if not isinstance(action, dict):
        raise ValueError("prediction.action must be an object")
    memory = inner.get("memory")
    return Prediction(
        action=action, memory=memory if isinstance(memory, str) else None, credited=credited
    )
