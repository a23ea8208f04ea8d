"""Scripted solvers: one per task template, playing it like any agent.

A solver sees what every agent sees (``Observation``: the goal, the screenshot and the UI XML)
and answers with canonical actions; it never reads the gold answer, the environment's variables
or the adb shell. Its episodes prove each instance solvable, and are demonstrations whose memory
labels come from the environment.

``SOLVERS`` maps a template id to a factory; :func:`solver_for` is how the runner gets one.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from trajectories.uixml import UIElement, UITree, UIXmlError, parse_ui_xml

from .base import Agent, AgentStep, Observation


def ui_tree(observation: Observation) -> UITree | None:
    """The observation's UI tree (None when there is no XML or it cannot be read)."""
    if not observation.xml:
        return None
    try:
        return parse_ui_xml(observation.xml)
    except UIXmlError:
        return None


def element(tree: UITree | None, *, id_suffix: str = "", text: str = "") -> UIElement | None:
    """The first element whose resource id ends in ``id_suffix`` (or whose text matches the
    regular expression ``text``)."""
    for el in tree.elements if tree else []:
        if id_suffix and el.resource_id.endswith(id_suffix):
            return el
        if text and re.fullmatch(text, el.text or ""):
            return el
    return None


def click(el: UIElement, why: str) -> AgentStep:
    x, y = el.center
    return AgentStep(action={"type": "click", "x": x, "y": y}, raw_output=why)


class FreshCartOrderNumber:
    """``freshcart-order-number``: open FreshCart, its Orders tab, read the latest order's number
    (the first on the list) and answer it."""

    name = "solver:freshcart-order-number"
    PACKAGE = "com.waypoint.freshcart"

    def start(self, goal: str) -> None:
        self.goal = goal

    def act(self, observation: Observation) -> AgentStep:
        tree = ui_tree(observation)
        if observation.package != self.PACKAGE:
            return AgentStep(
                action={"type": "open_app", "package": self.PACKAGE}, raw_output="Open FreshCart."
            )
        number = element(tree, text=r"FC-\d+")
        if number is not None:
            return AgentStep(
                action={"type": "answer", "text": number.text},
                memory=f"latest FreshCart order number: {number.text}",
                raw_output="The newest order is first on the Orders tab: answer its number.",
            )
        orders = element(tree, id_suffix="/tab_orders")
        if orders is not None:
            return click(orders, "Open the Orders tab.")
        return AgentStep(action={"type": "back"}, raw_output="No Orders tab here: go back.")


SOLVERS: dict[str, Callable[[], Agent]] = {
    "freshcart-order-number": FreshCartOrderNumber,
}


def solver_for(template_id: str) -> Agent:
    """The scripted solver of a task template; KeyError when it has none."""
    return SOLVERS[template_id]()
