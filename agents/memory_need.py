"""Whether a task instance needs memory: on the reference solver's path, has a value left the
agent's window by the time it is used? (DESIGN.md, "A memory task needs memory"; issue 35.)

Pure functions: no device, no database. The input is a solver episode, as steps in order, each
the UI XML of the screen *before* its action and the action in the canonical schema
(``trajectories.validation``: ``{"type": "type", "text": ...}``, ``{"type": "answer", ...}``),
and the instance's memory values (variable ref -> value, as ``load_apps(seed)`` gives them:
``Catalog.variable(ref).value`` for each of ``Task.variables``).

Steps are numbered by their place in the list, from 0. Observation ``i`` is the screen before
step ``i``; the agent decides step ``i`` looking at it.

- **Showing.** A screen shows a value when one of its visible elements (non-zero area) carries
  it in its text or content-desc: the value as the app renders it, case and runs of white space
  aside, not inside a longer word or number ("7°" is not in "17°", "20" is not in "$20.49").
  The XML cannot tell a value from an equal text elsewhere on the screen (every "Direct" of a
  flight list), so such a value counts as shown wherever its text is; a step may carry what the
  device declared instead (``SolverStep.declared``), which can.
- **Use.** A value is used at every step whose typed or answered text carries it: as above, or,
  for a value that is a number (a price, "7°", "76%"), any number in the text equal to it, the
  way the device grades by ``number`` (:func:`trajectories.grading.number_of`). A value no
  such text carries was compared, counted or used to find something rather than copied: it is
  used at the final answer step (the last ``answer`` action, else the episode's last step).
- **Distance.** For a use at step ``u``, the value's last showing step is the last ``s <= u``
  whose screen shows it; its memory distance is ``u - s`` (0: on the screen the agent acts on).
  A value no screen at or before ``u`` showed has no distance: it is reported as never shown,
  not as 0 (the path reached it some other way, or the XML does not carry it).
- **Window.** At step ``u`` the agent's window holds the last ``K`` observations: the screens
  before steps ``u-K+1 .. u`` (the current screen and the ``K-1`` before it), as STAMP keeps
  "the screenshots from the most recent five user turns" (appendix A.4, ``UserTurns_{t-4:t}``).
  The value needs memory at that use iff it was shown and none of those screens shows it, that
  is iff its distance is ``K`` or more. An instance needs memory iff at least one of its values
  needs it at one of its uses.

``K`` is ``settings.WAYPOINT_MEMORY_WINDOW`` (:func:`window`), 5 by default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from trajectories.grading import NUMBER, number_of
from trajectories.uixml import UITree, UIXmlError, parse_ui_xml

TEXT_ACTIONS = ("type", "answer")
_SPACE = re.compile(r"\s+")


def window() -> int:
    """``K``: how many of the latest observations the agent sees (``WAYPOINT_MEMORY_WINDOW``)."""
    return settings.WAYPOINT_MEMORY_WINDOW


@dataclass(frozen=True)
class SolverStep:
    """One step of a solver episode: the screen before its action (UI XML) and the action.

    ``declared``: the refs of the variables the virtual device said this screen shows
    (``Screen.visible_memory``); when given, showing is read from it instead of the XML, which
    tells a value from an equal text elsewhere on the screen."""

    xml: str | bytes | None
    action: Mapping[str, Any]
    declared: frozenset[str] | None = None


@dataclass
class Use:
    """One use of a value: the step, how it was used, and the last screen showing it."""

    step: int
    by: str  # "type", "answer" (the text carries the value) or "final" (the answer step)
    last_shown: int | None  # the last step at or before ``step`` whose screen shows the value
    needs_memory: bool = False

    @property
    def distance(self) -> int | None:
        return None if self.last_shown is None else self.step - self.last_shown


@dataclass
class ValueNeed:
    """One memory value of the instance on the solver's path."""

    ref: str
    value: str
    shown_at: list[int] = field(default_factory=list)  # every step whose screen shows it
    uses: list[Use] = field(default_factory=list)

    @property
    def needs_memory(self) -> bool:
        return any(use.needs_memory for use in self.uses)

    @property
    def never_shown(self) -> bool:
        """Shown on no screen at or before any of its uses."""
        return all(use.last_shown is None for use in self.uses)

    @property
    def distance(self) -> int | None:
        """The largest memory distance among its uses (None: never shown before a use)."""
        known = [use.distance for use in self.uses if use.distance is not None]
        return max(known) if known else None


@dataclass
class InstanceNeed:
    """The instance's values, and whether it needs memory beyond a window of ``k``."""

    k: int
    steps: int
    values: list[ValueNeed]

    @property
    def needs_memory(self) -> bool:
        return any(value.needs_memory for value in self.values)


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def _pattern(value: str) -> re.Pattern[str] | None:
    """The value as a whole word of a text: not inside a longer word or number."""
    value = _normal(value)
    if not value:
        return None
    left = r"(?<!\w)(?<!\d[.,])" if value[0].isalnum() else ""
    right = r"(?!\w)(?![.,]\d)" if value[-1].isalnum() else ""
    return re.compile(left + re.escape(value).replace(r"\ ", r"\s+") + right)


def number_value(value: str) -> float | None:
    """The number a value is, when it is one and nothing else ("$1,234.50", "7°", "76%");
    None for a code, a time or a name ("FC-643615", "14:30", "17D")."""
    match = NUMBER.search(value)
    if match is None:
        return None
    rest = value[: match.start()] + value[match.end() :]
    if any(c.isalnum() for c in rest):
        return None
    return number_of(value)


def shows(texts: Sequence[str], value: str) -> bool:
    """Whether one of the texts (a screen's) carries ``value`` as the app renders it."""
    pattern = _pattern(value)
    return pattern is not None and any(pattern.search(_normal(t)) for t in texts)


def carries(text: str, value: str) -> bool:
    """Whether typed or answered ``text`` carries ``value``: its words, or its number."""
    if shows([text], value):
        return True
    number = number_value(value)
    if number is None:
        return False
    return any(float(m.group(0).replace(",", "")) == number for m in NUMBER.finditer(text))


def screen_texts(xml: str | bytes | None) -> list[str]:
    """The texts and content-descs of a screen's visible elements (none for a bad dump)."""
    if not xml:
        return []
    try:
        tree: UITree = parse_ui_xml(xml)
    except UIXmlError:
        return []
    return [
        text
        for el in tree.elements
        if el.area > 0
        for text in (el.text, el.content_desc)
        if text and text.strip()
    ]


def final_answer_step(steps: Sequence[SolverStep]) -> int:
    """The last ``answer`` action's step, else the episode's last step."""
    answers = [i for i, s in enumerate(steps) if s.action.get("type") == "answer"]
    return answers[-1] if answers else len(steps) - 1


def measure(steps: Sequence[SolverStep], values: Mapping[str, str], k: int) -> InstanceNeed:
    """Each value's uses and memory distances on the path, and whether the instance needs
    memory beyond a window of the last ``k`` observations (see the module's docstring)."""
    if k < 1:
        raise ValueError(f"the window holds at least one observation, not {k}")
    texts = [screen_texts(step.xml) if step.declared is None else [] for step in steps]
    typed = [
        (i, str(step.action.get("type")), str(step.action.get("text") or ""))
        for i, step in enumerate(steps)
        if step.action.get("type") in TEXT_ACTIONS
    ]
    need = []
    for ref, value in values.items():
        shown_at = [
            i
            for i, (step, screen) in enumerate(zip(steps, texts, strict=True))
            if (shows(screen, value) if step.declared is None else ref in step.declared)
        ]
        uses = [(i, kind) for i, kind, text in typed if carries(text, value)]
        if not uses and steps:
            uses = [(final_answer_step(steps), "final")]
        item = ValueNeed(ref, value, shown_at)
        for u, kind in uses:
            last = max((s for s in shown_at if s <= u), default=None)
            use = Use(u, kind, last)
            use.needs_memory = use.distance is not None and use.distance >= k
            item.uses.append(use)
        need.append(item)
    return InstanceNeed(k, len(steps), need)
