"""STAMP's rewards for a rollout (section 3.5): r(τ) = r_task + r_fmt + r_mem.

- ``task``: 1 when the task succeeds: the device's grader (``waypoint grade``, the one grading
  function ``trajectories.grading``) finds the agent's answer right.
- ``format``: -0.3 when the agent's output format is invalid: an output the parser of its
  format (``rl.actions``) reads as no action. STAMP's r_fmt is the trajectory's: given once,
  at the first invalid output, however many follow.
- ``memory``: 0.3 · Γ, with Γ ∈ {1, 0.5, 0} the completeness of the memory the agent wrote
  (from the first screen that showed a memory variable on) against the environment's values:
  by the rules of M-Acc (``evaluation.metrics.memory_match``), or by the judge with STAMP's
  Table 17 prompt (``evaluation.judge``, through ``core.llm``; a judge that gives no verdict
  leaves the rules' grade, and the info says so).

The task and memory rewards are known when the episode ends: they are given at its last step,
as OpenEnv's trajectory rubrics give a delayed reward (``intermediate_reward`` before). The
format penalty is given at the invalid output (``delay: "step"``) or with the others at the end
(``delay: "end"``: every earlier step earns 0). Each step's info reports the parts given at it,
and the last step's the episode's sums.

A config names which parts count and their weights: ``{"parts": {"task": 1, "format": -0.3,
"memory": 0.3}, "memory_by": "rules", "delay": "step"}`` (STAMP's, the default); a part left
out is neither computed nor reported.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from evaluation.judge import Judge
from evaluation.metrics import TASK_SCORES, memory_match, task_memory_verdict
from trajectories.validation import InvalidData

PARTS = ("task", "format", "memory")
STAMP_WEIGHTS = {"task": 1.0, "format": -0.3, "memory": 0.3}
MEMORY_BY = ("rules", "judge")
DELAYS = ("step", "end")
CONFIG_KEYS = ("parts", "memory_by", "delay")


@dataclass(frozen=True)
class RewardConfig:
    weights: dict[str, float] = field(default_factory=lambda: dict(STAMP_WEIGHTS))
    memory_by: str = "rules"
    delay: str = "step"

    def as_dict(self) -> dict[str, Any]:
        return {"parts": dict(self.weights), "memory_by": self.memory_by, "delay": self.delay}


def check_rewards(value: Any, where: str = "rewards") -> RewardConfig:
    """A reward config from its JSON form; ``{}`` or None is STAMP's. Bad input is refused with
    an :class:`InvalidData` naming the place."""
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise InvalidData(f"{where}: must be an object, got {type(value).__name__}")
    unknown = [key for key in value if key not in CONFIG_KEYS]
    if unknown:
        raise InvalidData(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(CONFIG_KEYS)})")
    parts = value.get("parts", STAMP_WEIGHTS)
    if not isinstance(parts, dict) or not parts:
        raise InvalidData(
            f"{where}.parts: must name at least one of {', '.join(PARTS)} with its weight"
        )
    weights: dict[str, float] = {}
    for name, weight in parts.items():
        if name not in PARTS:
            raise InvalidData(f"{where}.parts: unknown part {name!r} (known: {', '.join(PARTS)})")
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not math.isfinite(weight)
        ):
            raise InvalidData(f"{where}.parts.{name}: must be a number, got {weight!r}")
        weights[name] = float(weight)
    memory_by = value.get("memory_by", "rules")
    if memory_by not in MEMORY_BY:
        raise InvalidData(f"{where}.memory_by: must be {' or '.join(MEMORY_BY)}, got {memory_by!r}")
    if memory_by == "judge" and not settings.WAYPOINT_JUDGE_URL:
        raise InvalidData(
            f"{where}.memory_by: judge needs the server's judge, and WAYPOINT_JUDGE_URL is not set"
        )
    delay = value.get("delay", "step")
    if delay not in DELAYS:
        raise InvalidData(f"{where}.delay: must be {' or '.join(DELAYS)}, got {delay!r}")
    return RewardConfig(weights=weights, memory_by=memory_by, delay=delay)


@dataclass(frozen=True)
class Turn:
    """One output of the agent, as the memory reward reads it: the variables the screen it
    decided on showed (their refs), and the memory it wrote."""

    shown: frozenset[str]
    memory: str


@dataclass(frozen=True)
class MemoryItem:
    key: str  # the variable's ref, e.g. "weather.temp_lima"
    value: str
    description: str = ""


def written_memory(turns: Sequence[Turn], keys: set[str]) -> str:
    """What the agent wrote as memory from the first screen that showed one of ``keys`` on, in
    order (STAMP's M̂(τ); the runner's M-Acc reads the same)."""
    first = next((i for i, turn in enumerate(turns) if turn.shown & keys), 0)
    texts = [t.memory.strip() for t in turns[first:]]
    return "\n".join(t for t in texts if t and t.lower() != "none")


def memory_grade_by_rules(turns: Sequence[Turn], items: Sequence[MemoryItem]) -> str | None:
    """complete, partial or none for the episode's memory; None when the task has none."""
    if not items:
        return None
    text = written_memory(turns, {item.key for item in items})
    return task_memory_verdict([memory_match(text, item.value) for item in items])


def reference_memory(items: Sequence[MemoryItem]) -> str:
    """M*(τ) as the judge reads it: one ``what: value`` line per memory variable."""
    return "\n".join(f"{item.description or item.key}: {item.value}" for item in items)


def judge() -> Judge:
    """The server's judge (its endpoint and key are the server's settings, never a client's)."""
    return Judge(
        url=settings.WAYPOINT_JUDGE_URL,
        model=settings.WAYPOINT_JUDGE_MODEL,
        api_key=settings.WAYPOINT_JUDGE_API_KEY,
    )


def memory_grade(
    config: RewardConfig, instruction: str, turns: Sequence[Turn], items: Sequence[MemoryItem]
) -> tuple[str | None, str]:
    """Γ's grade for the episode and who gave it (``rules``, ``judge``, or the rules with why
    the judge did not)."""
    rules = memory_grade_by_rules(turns, items)
    if config.memory_by != "judge" or rules is None:
        return rules, "rules"
    asking = judge()
    text = written_memory(turns, {item.key for item in items})
    verdict = asking.grade_task(instruction, reference_memory(items), text)
    if verdict is None:
        why = asking.errors[0] if asking.errors else "the judge gave no verdict"
        return rules, f"rules ({why})"
    return verdict, "judge"


def _rounded(value: float) -> float:
    return round(value, 6) + 0.0  # no -0.0


class EpisodeRewards:
    """The rewards of one rollout as it goes: what each output earns when it is given (a
    trajectory rubric: the format penalty at once or delayed, the rest at the end)."""

    def __init__(self, config: RewardConfig) -> None:
        self.config = config
        self.penalised = False  # r_fmt was earned (once per trajectory)
        self.given: list[dict[str, float]] = []  # per output: the parts given then, and total

    def _step(self, parts: dict[str, float]) -> dict[str, float]:
        shown = {name: _rounded(parts.get(name, 0.0)) for name in self.config.weights}
        shown["total"] = _rounded(sum(shown.values()))
        self.given.append(shown)
        return dict(shown)

    def on_output(self, invalid: bool) -> dict[str, float]:
        """The parts given for an output that does not end the episode."""
        return self._step(self._format_now(invalid))

    def _format_now(self, invalid: bool) -> dict[str, float]:
        weights = self.config.weights
        if not invalid or "format" not in weights or self.penalised:
            return {}
        self.penalised = True
        return {"format": weights["format"]} if self.config.delay == "step" else {}

    def at_end(
        self, invalid: bool, success: bool, grade: str | None
    ) -> tuple[dict[str, float], dict[str, float]]:
        """The parts given at the episode's last output, and the episode's sums."""
        weights = self.config.weights
        parts = self._format_now(invalid)
        if "task" in weights:
            parts["task"] = weights["task"] * (1.0 if success else 0.0)
        if "memory" in weights:
            parts["memory"] = weights["memory"] * TASK_SCORES.get(grade or "none", 0.0)
        if self.config.delay == "end" and self.penalised:
            parts["format"] = weights["format"]
        last = self._step(parts)
        episode = {
            name: _rounded(sum(step[name] for step in self.given)) for name in self.config.weights
        }
        episode["total"] = _rounded(sum(episode.values()))
        return last, episode
