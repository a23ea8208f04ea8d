"""The benchmark's controls (issue 35): the scripted solver seeing only its last K observations.

- ``window``: reads only the UI XML of its last ``K`` observations (the screen it acts on and the
  ``K-1`` before it) and has no memory field. When it would type or answer with a value no
  screen of its window shows any longer, it cannot: it gives up (``terminate`` with failure). It
  must fail every instance that needs memory, and solve the others.
- ``window+memory``: the same agent writing what it reads into its memory field (the solver's
  own ``Memory:`` lines); a value that has left the window is still there in the memory it
  wrote, as STAMP's two-tier history keeps it. It must solve every instance the solver solves.

A value is used as :mod:`agents.memory_need` reads a path: at a ``type`` or ``answer`` whose text
carries it, and (a value compared, counted or used to find something) at the final answer. The
values checked are those the solver read with ``remember`` that a screen of the episode showed;
what it worked out on the spot (a count, a sum, a list it joined) no screen showed, and, as the
memory check reports such a value as never shown rather than as remembered, it is not checked.
What ``window+memory`` writes at a step is written before it acts (STAMP's Memory field comes
with the action). Neither agent sees anything a phone agent does not: the goal and the screens'
XML.
"""

from __future__ import annotations

from .base import AgentStep, Observation
from .memory_need import TEXT_ACTIONS, carries, screen_texts, shows
from .solvers import ScriptedSolver


class WindowAgent:
    """The solver of a template, under a window of ``k`` observations (with or without its
    memory field)."""

    def __init__(self, solver: ScriptedSolver, k: int, *, memory: bool) -> None:
        if k < 1:
            raise ValueError(f"the window holds at least one observation, not {k}")
        self.solver = solver
        self.k = k
        self.memory = memory
        self.name = f"{'window+memory' if memory else 'window'}:{solver.template_id}"
        self.seen: list[list[str]] = []  # every screen's texts; the window is the last k
        self.written: list[str] = []  # the memory it wrote, step by step

    def start(self, goal: str) -> None:
        self.solver.start(goal)
        self.seen = []
        self.written = []

    def in_window(self, value: str) -> bool:
        return any(shows(texts, value) for texts in self.seen[-self.k :])

    def in_memory(self, value: str) -> bool:
        return self.memory and any(shows([line], value) for line in self.written)

    def was_read(self, value: str) -> bool:
        return any(shows(texts, value) for texts in self.seen)

    def act(self, observation: Observation) -> AgentStep:
        self.seen.append(screen_texts(observation.xml))
        step = self.solver.act(observation)
        if self.memory and step.memory:
            self.written.append(step.memory)
        kind = step.action.get("type")
        if kind in TEXT_ACTIONS:
            text = str(step.action.get("text") or "")
            read = [v for v in self.solver.remembered if self.was_read(v)]
            used = read if kind == "answer" else [v for v in read if carries(text, v)]
            lost = [v for v in used if not self.in_window(v) and not self.in_memory(v)]
            if lost:
                return AgentStep(
                    {"type": "terminate", "status": "failure"},
                    raw_output=f"{lost[0]!r} has left the last {self.k} screens"
                    + (" and was not written down" if self.memory else " (no memory field)"),
                )
        if not self.memory:
            step.memory = ""
        return step
