"""The generic solver of generated environments (issue 37): it follows a task_spec's locators
through the screen, as any agent plays, and proves an environment solvable before it is
installed.

Its plan is the public part of the task_spec (``devices.services.packages.public_plan``): for
each memory item, the taps from the app's home to the element that shows it (by data-testid,
which the device's dump writes as the resource id), the way the answer is formed from the
values read (joined by a separator, or the label of the lowest or highest), and the test ids of
the submission page. It never gets a value, a variable or the gold: it reads each value off the
screen (UI XML), remembers it (its memory field), opens the answer page, types the answer,
submits it, checks the page says Success! and answers with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from devices.virtual.hierarchy import resource_name
from trajectories.grading import number_of

from .solvers import Moves, Script, ScriptedSolver, Session, SolverStuck

SUCCESS = "Success!"


def rid(testid: str) -> str:
    """A data-testid as the device's dump names it (``tab-orders`` -> ``tab_orders``)."""
    return resource_name(testid)


def tap_testid(s: Session, testid: str) -> Moves[None]:
    """Tap the element of ``testid``, scrolling it into view first when it is not shown."""
    yield from s.scroll_to(id=rid(testid))
    yield s.tap(id=rid(testid))


def follow(s: Session, path: list[dict[str, Any]]) -> Moves[None]:
    for step in path:
        if "tap" in step:
            yield from tap_testid(s, step["tap"])
        elif "search" in step:
            yield from tap_testid(s, step["search"])
            yield s.type(str(step["query"]))
        else:
            raise SolverStuck(f"the plan has a step the solver does not know: {step}")


def answer_of(plan: dict[str, Any], values: dict[str, str]) -> str:
    """The answer from the values read, as the plan forms it."""
    answer = plan["answer"]
    keys = [read["key"] for read in plan["reads"]]
    if answer["op"] == "join":
        return answer["sep"].join(values[k] for k in keys)
    if answer["op"] == "holder":
        numbers = {k: number_of(values[k]) for k in keys}
        if any(n is None for n in numbers.values()):
            raise SolverStuck(f"a compared value is no number: {values}")
        pick = min if answer["of"] == "min" else max
        best = pick(numbers.values())
        winners = [k for k in keys if numbers[k] == best]
        if len(winners) != 1:
            raise SolverStuck(f"{len(winners)} values tie for the {answer['of']}")
        return answer["labels"][winners[0]]
    raise SolverStuck(f"the plan forms its answer by {answer['op']!r}, which the solver lacks")


def script_of(plan: dict[str, Any]) -> Callable[[Session], Script]:
    """The solver's script for one plan."""

    def play(s: Session) -> Script:
        app = plan["app"]
        if s.view.package != app["package"]:
            yield s.open_app(app["package"], app["label"])
        values: dict[str, str] = {}
        for read in plan["reads"]:
            yield from follow(s, read["path"])
            yield from s.scroll_to(id=rid(read["testid"]))
            value = s.view.text(id=rid(read["testid"]))
            values[read["key"]] = s.remember(read.get("what") or read["label"], value)
        answer = answer_of(plan, values)
        submit = plan["submit"]
        yield from tap_testid(s, submit["open"])
        yield from tap_testid(s, submit["input"])
        yield s.type(answer)
        yield from tap_testid(s, submit["submit"])
        result = s.view.find(id=rid(submit["result"]))
        if result is None or result.text.strip() != SUCCESS:
            said = result.text.strip() if result is not None else "nothing"
            raise SolverStuck(f"the answer page says {said!r} to {answer!r}, not {SUCCESS}")
        yield s.answer(answer)

    return play


def spec_solver(template_id: str, plan: dict[str, Any]) -> ScriptedSolver:
    """A solver agent for a generated environment's task, from its public plan."""
    return ScriptedSolver(template_id, script_of(plan))
