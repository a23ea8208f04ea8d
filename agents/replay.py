"""The replay agent: plays a recorded trajectory's actions in order, with the memory each step
had. A recording replayed at its seed must succeed: this checks the recording and the
environment alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trajectories.models import Trajectory

from .base import AgentStep, Observation

POINTS = (("x", "y"), ("x2", "y2"))


@dataclass
class Recorded:
    action: dict[str, Any]  # canonical, with its type
    memory: str
    width: int  # of the screenshot the action's points are in
    height: int


def recorded_steps(trajectory: Trajectory) -> list[Recorded]:
    steps = trajectory.steps.select_related("screen").order_by("index")
    return [
        Recorded(
            {"type": step.action_type, **step.action},
            step.memory,
            step.screen.width,
            step.screen.height,
        )
        for step in steps
    ]


class ReplayAgent:
    """Plays ``steps``; a point is placed on the observed screen at the same relative place
    (a replay on a phone of another size); when the steps run out it gives up."""

    def __init__(self, steps: list[Recorded], source: str = "") -> None:
        self.steps = steps
        self.name = f"replay:{source}" if source else "replay"
        self.next = 0

    def start(self, goal: str) -> None:
        self.next = 0

    def act(self, observation: Observation) -> AgentStep:
        if self.next >= len(self.steps):
            return AgentStep(
                action={"type": "terminate", "status": "failure"},
                raw_output="The recording has no more steps.",
            )
        recorded = self.steps[self.next]
        self.next += 1
        action = dict(recorded.action)
        for xk, yk in POINTS:
            if xk in action and recorded.width and recorded.height:
                action[xk] = min(
                    observation.width - 1, round(action[xk] * observation.width / recorded.width)
                )
                action[yk] = min(
                    observation.height - 1,
                    round(action[yk] * observation.height / recorded.height),
                )
        return AgentStep(action=action, memory=recorded.memory, raw_output="replayed")
