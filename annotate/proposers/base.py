"""What every proposer reads and returns.

A proposer sees a trajectory as plain data (:class:`Episode`: the goal, each step's action and
the screens around it), so it runs the same on a stored trajectory, on a
:class:`~trajectories.records.TrajectoryRecord` before import, and in a benchmark. It returns a
payload in the JSON of :mod:`trajectories.labels.parts` (``subgoals``, ``memory_targets``,
``anchors``), which :func:`check_payload` validates before anything is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from trajectories.models import AnchorType, SubgoalSuccess
from trajectories.validation import InvalidData, fail


@dataclass(frozen=True)
class ScreenView:
    package: str = ""
    activity: str = ""
    xml: bytes | None = None
    # The virtual device's own word on which memory variables the screen shows (each with
    # its "value"); empty on phones.
    visible_memory: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Episode:
    """``screens[i]`` is the screen before step ``i``; ``screens[-1]`` the final one."""

    goal: str
    actions: list[dict[str, Any]]  # each with its "type"
    screens: list[ScreenView]
    images: list[bytes] = field(default_factory=list)  # screenshots, for proposers that look

    def __post_init__(self) -> None:
        if len(self.screens) != len(self.actions) + 1:
            raise ValueError(
                f"an episode of {len(self.actions)} steps needs {len(self.actions) + 1} screens, "
                f"got {len(self.screens)}"
            )


@dataclass
class Proposed:
    """A proposer's answer: the payload, or the error and the raw text that caused it."""

    payload: dict[str, Any]
    model: str = ""
    raw_output: str = ""
    error: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Proposer(Protocol):
    name: str
    prompt_version: str

    def propose(self, episode: Episode) -> Proposed: ...


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(where, f"must be a step index, got {value!r}")
    return value


def check_payload(payload: Any, step_count: int) -> dict[str, Any]:
    """The payload if it is well formed: segments inside the trajectory and not overlapping,
    known success values and anchor types, memory targets retrieved after they are encoded."""
    if not isinstance(payload, dict):
        raise InvalidData(f"proposal: must be an object, got {type(payload).__name__}")
    unknown = set(payload) - {"subgoals", "memory_targets", "anchors"}
    if unknown:
        raise fail("proposal", f"unknown part(s) {', '.join(sorted(unknown))}")
    subgoals = payload.get("subgoals", [])
    if not isinstance(subgoals, list):
        raise fail("subgoals", "must be a list")
    last_end = -1
    for i, g in enumerate(subgoals):
        where = f"subgoals[{i}]"
        if not isinstance(g, dict):
            raise fail(where, "must be an object")
        start, end = _int(g.get("start"), f"{where}.start"), _int(g.get("end"), f"{where}.end")
        if not 0 <= start <= end < step_count:
            raise fail(where, f"steps {start}–{end} are not inside 0–{step_count - 1}")
        if start <= last_end:
            raise fail(where, f"steps {start}–{end} overlap the previous subgoal")
        last_end = end
        if g.get("success", "") not in ("", *SubgoalSuccess.values):
            raise fail(f"{where}.success", f"unknown success {g.get('success')!r}")
        for name in ("text", "effect", "behaviour"):
            if not isinstance(g.get(name, ""), str):
                raise fail(f"{where}.{name}", "must be a string")
    targets = payload.get("memory_targets", [])
    if not isinstance(targets, list):
        raise fail("memory_targets", "must be a list")
    for i, m in enumerate(targets):
        where = f"memory_targets[{i}]"
        if not isinstance(m, dict) or not isinstance(m.get("key"), str) or not m["key"].strip():
            raise fail(where, "must be an object with a key")
        if not isinstance(m.get("value"), str):
            raise fail(f"{where}.value", "must be a string")
        encode = _int(m.get("encode_step"), f"{where}.encode_step")
        if not 0 <= encode < step_count:
            raise fail(f"{where}.encode_step", f"step {encode} is not inside the trajectory")
        retrieve = m.get("retrieve_steps", [])
        if not isinstance(retrieve, list):
            raise fail(f"{where}.retrieve_steps", "must be a list")
        for r in retrieve:
            if not encode < _int(r, f"{where}.retrieve_steps") < step_count:
                raise fail(f"{where}.retrieve_steps", f"step {r} is not after {encode}")
    anchors = payload.get("anchors", [])
    if not isinstance(anchors, list):
        raise fail("anchors", "must be a list")
    for i, a in enumerate(anchors):
        where = f"anchors[{i}]"
        if not isinstance(a, dict):
            raise fail(where, "must be an object")
        step = _int(a.get("step"), f"{where}.step")
        if not 0 <= step < step_count:
            raise fail(f"{where}.step", f"step {step} is not inside the trajectory")
        if a.get("type") not in AnchorType.values:
            raise fail(f"{where}.type", f"unknown anchor type {a.get('type')!r}")
        if not isinstance(a.get("content"), str) or not a["content"].strip():
            raise fail(f"{where}.content", "must not be empty")
    return {"subgoals": subgoals, "memory_targets": targets, "anchors": anchors}
