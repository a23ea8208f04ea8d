"""The one interface every agent has: what it sees of the device, and what it answers.

An agent sees what a phone agent sees (the goal, a screenshot, optionally the UI XML) and answers
with an action of the canonical schema a recording uses (``trajectories.validation``); it never
gets the adb shell, the gold answer or the environment's variables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Observation:
    goal: str  # the task instance's instruction, as a person reads it
    screenshot: bytes  # PNG of the screen now
    xml: str | None  # its uiautomator dump (None when the regime hides it)
    width: int
    height: int
    step: int  # 0-based index of the step about to be taken
    package: str  # the foreground package


@dataclass
class AgentStep:
    action: dict[str, Any]  # canonical: {"type": "click", "x": .., "y": ..}, {"type": "answer", ..}
    memory: str = ""  # what the agent wrote down as memory at this step
    raw_output: str = ""  # the model's text (or a solver's reasoning line)
    prompt_chars: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class Agent(Protocol):
    name: str

    def start(self, goal: str) -> None:
        """A new episode of ``goal``."""
        ...

    def act(self, observation: Observation) -> AgentStep:
        """The next step for what is on the screen."""
        ...
