"""A scripted "model" for the OpenAI-compatible agent's tests: it reads the UI XML the agent
puts in its prompt (``xml=1``), decides as the scripted solver of freshcart-order-number does,
and answers in GUI-Owl's or AndroTMem's format, with faults (malformed output, 429s, slow
answers) played first when asked."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agents.base import AgentStep, Observation
from formats.stamp_sft import mobile_use_arguments
from trajectories.uixml import UIElement, UITree, parse_ui_xml

XML_HEADER = "UI XML of the screen:\n"


def element(tree: UITree, *, id_suffix: str = "", text: str = "") -> UIElement | None:
    """The first element whose resource id ends in ``id_suffix`` (or whose text matches the
    regular expression ``text``)."""
    for el in tree.elements:
        if id_suffix and el.resource_id.endswith(id_suffix):
            return el
        if text and re.fullmatch(text, el.text or ""):
            return el
    return None


class FreshCartOrderNumber:
    """``freshcart-order-number`` decided from the screen alone, as the scripted model
    answers each request afresh: open FreshCart, its Orders tab, answer the first number."""

    PACKAGE = "com.waypoint.freshcart"

    def start(self, goal: str) -> None:
        self.goal = goal

    def act(self, observation: Observation) -> AgentStep:
        tree = parse_ui_xml(observation.xml)
        if observation.package != self.PACKAGE:
            return AgentStep(
                {"type": "open_app", "package": self.PACKAGE}, raw_output="Open FreshCart."
            )
        number = element(tree, text=r"FC-\d+")
        if number is not None:
            return AgentStep(
                {"type": "answer", "text": number.text},
                memory=f"latest FreshCart order number: {number.text}",
                raw_output="The newest order is first on the Orders tab: answer its number.",
            )
        orders = element(tree, id_suffix="/tab_orders")
        if orders is not None:
            x, y = orders.center
            return AgentStep({"type": "click", "x": x, "y": y}, raw_output="Open the Orders tab.")
        return AgentStep({"type": "back"}, raw_output="No Orders tab here: go back.")


def texts(body: dict[str, Any]) -> list[str]:
    """The text parts of the request's last user turn."""
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    return [p["text"] for p in content if p.get("type") == "text"]


def solver_step(body: dict[str, Any]):
    xml = next(t[len(XML_HEADER) :] for t in texts(body) if t.startswith(XML_HEADER))
    tree = parse_ui_xml(xml)
    width, height = tree.width, tree.height
    solver = FreshCartOrderNumber()
    solver.start("")
    observation = Observation("", b"", xml, width, height, 0, tree.package)
    return solver.act(observation), width, height


def gui_owl(body: dict[str, Any]) -> str:
    step, width, height = solver_step(body)
    call = {"name": "mobile_use", "arguments": mobile_use_arguments(step.action, width, height)}
    return (
        f"<think>{step.raw_output}</think>\nAction: {step.raw_output}\n"
        f"Memory: {step.memory or 'none'}\n<tool_call>\n{json.dumps(call)}\n</tool_call>"
    )


def androtmem(body: dict[str, Any]) -> str:
    step, width, height = solver_step(body)
    action = step.action
    inner = {"action": "", "x": 0, "y": 0, "value": "", "x_end": 0, "y_end": 0}
    if action["type"] == "click":
        inner.update(
            action="tap",
            x=round(action["x"] / (width - 1) * 1000),
            y=round(action["y"] / (height - 1) * 1000),
        )
    elif action["type"] == "open_app":
        inner.update(action="open_app", value="FreshCart")
    elif action["type"] == "answer":
        inner.update(action="FINISH", value=action["text"])
    else:
        inner.update(action=action["type"])
    answer: dict[str, Any] = {"action": inner}
    answer["summary_en"] = step.raw_output
    answer["milestones"] = (
        [{"content_en": "[context_info] " + step.memory, "description_en": "the answer"}]
        if step.memory
        else [{"content_en": "[subgoal] " + step.raw_output, "description_en": ""}]
    )
    return json.dumps(answer)


def replies(
    answer: Callable[[dict[str, Any]], str], faults: list[tuple] | None = None
) -> Callable[[dict[str, Any]], tuple]:
    """The server's replies: ``faults`` first ((status, content, delay), in order), then the
    scripted answer to each request."""
    pending = list(faults or [])

    def reply(body: dict[str, Any]) -> tuple:
        if pending:
            return pending.pop(0)
        return (200, answer(body), 0)

    return reply
