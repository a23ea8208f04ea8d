"""An OpenAI-compatible chat model as an agent, in the prompt regimes of the papers.

- ``mobile_use`` (STAMP / GUI-Owl): STAMP's Table 15 system prompt (the one the ``stamp-sft``
  export writes), its two-tier history (the last K=5 turns in full with their screenshots and
  outputs, older ones as ``Step i: <action>`` / ``Memory: <memory>`` lines in the first user
  turn), and the answer ``Action: ...`` / ``Memory: ...`` / ``<tool_call>`` with 0-1000
  coordinates, read by the evaluator's own reader (``evaluation.predictions``).
- ``androtmem-v1``, ``-v2``, ``-v3`` (AndroTMem's released inference code, ``evaluation/prompts.py``
  and ``evaluation/utils.py``): one JSON action per answer with 0-1000 coordinates; the user
  turn holds the task and, by regime, the last three actions (v1), the previous answer's
  one-sentence summary (v2), or the milestone anchors accumulated so far (v3, Anchored State
  Memory). The prompts below say what theirs say in words of our own.

Any regime takes the memory block of a memory graph, retrieved for each screenshot
(``graphs.services.retrieve_for_screen``) and put before it, as the ``stamp-sft`` export does.

- ``app-graph`` (UI-KOBE's runtime agent, section 4): each screenshot is located on the app
  knowledge graph of its app (``graphs.appkg_jobs.app_graph_locator``), and the prompt carries the
  located page and its options: self-loop actions (with the fields they change), transitions to
  neighbouring pages (instruction and effect), task completion, and a free action for what the
  graph does not cover. The model answers in ``mobile_use``'s format, naming the option it takes
  first (``Option: N``); its memory keeps the instructions carried out and the facts it noted.
  Any other regime takes the same block with ``appgraph=V``.

A model answer that cannot be read is an invalid output: the step's action is empty and
``extra["invalid"]`` says why (the runner counts it and asks again). The endpoint's own failures
(after ``core.llm``'s retries) are :class:`core.llm.LLMError`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from core.llm import Completion, LLMClient, image_part
from evaluation.predictions import TOOL_CALL, parse_raw_output
from formats.stamp_sft import SYSTEM_PROMPT, USER_PROMPT
from graphs.appkg import AppGraphLocator, Location, fixed_options, format_options, node_options
from graphs.models import MemoryGraph
from graphs.services import retrieve_for_screen
from trajectories.validation import InvalidData

from .base import AgentStep, Observation

DEFAULT_K = 5
THINK = re.compile(r"<think>(.*?)</think>", re.S)
ACTION_LINE = re.compile(r"^Action:[ \t]*(.+)$", re.M)
KEYS = {"back": "back", "home": "home", "enter": "enter"}
SWIPE_SPAN = {"long": 0.6, "medium": 0.4, "short": 0.2}


class InvalidOutput(ValueError):
    """The model's answer is no action this device can take; the message says why."""


def _pixel(value: Any, size: int, what: str) -> int:
    """A 0-1000 coordinate on a screen side of ``size`` pixels, clamped to it."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidOutput(f"{what} must be a number, got {value!r}") from None
    if number != number or abs(number) > 1e9:
        raise InvalidOutput(f"{what} must be a number, got {value!r}")
    return max(0, min(size - 1, round(number / 1000 * (size - 1))))


def _point(value: Any, width: int, height: int, what: str) -> tuple[int, int]:
    if not isinstance(value, list | tuple) or len(value) < 2:
        raise InvalidOutput(f"{what} must be [x, y], got {value!r}")
    return _pixel(value[0], width, f"{what}[0]"), _pixel(value[1], height, f"{what}[1]")


def swipe_from_centre(direction: str, span: float, width: int, height: int) -> dict[str, Any]:
    """A swipe of the finger in ``direction`` across ``span`` of the screen, from its centre."""
    x, y = width // 2, height // 2
    dx = {"left": -1, "right": 1}.get(direction, 0) * round(span * width / 2)
    dy = {"up": -1, "down": 1}.get(direction, 0) * round(span * height / 2)
    if not dx and not dy:
        raise InvalidOutput(f"swipe direction must be up, down, left or right, got {direction!r}")
    return {
        "type": "swipe",
        "x": x,
        "y": y,
        "x2": max(0, min(width - 1, x + dx)),
        "y2": max(0, min(height - 1, y + dy)),
        "duration_ms": 400,
    }


def _seconds_ms(value: Any, default: float) -> int:
    try:
        seconds = float(value) if value is not None else default
    except (TypeError, ValueError):
        seconds = default
    return max(0, min(60_000, round(seconds * 1000)))


def mobile_use_action(arguments: dict[str, Any], width: int, height: int) -> dict[str, Any]:
    """A ``mobile_use`` call's arguments as a canonical action in pixels."""
    kind = str(arguments.get("action", "")).lower()
    if kind in ("click", "long_press"):
        x, y = _point(arguments.get("coordinate"), width, height, "coordinate")
        if kind == "click":
            return {"type": "click", "x": x, "y": y}
        return {
            "type": "long_press",
            "x": x,
            "y": y,
            "duration_ms": _seconds_ms(arguments.get("time"), 1),
        }
    if kind == "swipe":
        x, y = _point(arguments.get("coordinate"), width, height, "coordinate")
        x2, y2 = _point(arguments.get("coordinate2"), width, height, "coordinate2")
        return {"type": "swipe", "x": x, "y": y, "x2": x2, "y2": y2, "duration_ms": 400}
    if kind in ("type", "open", "answer", "key"):
        text = arguments.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InvalidOutput(f"{kind} needs a text, got {text!r}")
        if kind == "type":
            return {"type": "type", "text": text}
        if kind == "open":
            return {"type": "open_app", "package": text.strip()}
        if kind == "answer":
            return {"type": "answer", "text": text.strip()}
        return {"type": "key", "keycode": "KEYCODE_" + text.strip().upper()}
    if kind == "system_button":
        button = str(arguments.get("button", "")).lower()
        if button in KEYS:
            return {"type": KEYS[button]}
        if button == "menu":
            return {"type": "key", "keycode": "KEYCODE_MENU"}
        raise InvalidOutput(f"system_button must be Back, Home, Menu or Enter, got {button!r}")
    if kind == "wait":
        return {"type": "wait", "duration_ms": _seconds_ms(arguments.get("time"), 1)}
    if kind == "terminate":
        status = str(arguments.get("status", "")).lower()
        if status not in ("success", "failure"):
            raise InvalidOutput(f"terminate status must be success or failure, got {status!r}")
        return {"type": "terminate", "status": status}
    if kind == "interact":
        raise InvalidOutput("interact: there is no user to ask during a benchmark")
    raise InvalidOutput(f"unknown mobile_use action {kind!r}")


def _text_chars(messages: list[dict[str, Any]]) -> int:
    """The prompt's size in characters of text (images not counted)."""
    total = 0
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            total += len(content)
        else:
            total += sum(len(part.get("text", "")) for part in content)
    return total


class MobileUse:
    """STAMP's ``mobile_use`` regime (GUI-Owl's output format, two-tier history)."""

    def __init__(self, k: int = DEFAULT_K) -> None:
        self.k = k
        self.turns: list[dict[str, Any]] = []  # screenshot, output, summary, memory

    def reset(self) -> None:
        self.turns = []

    def messages(
        self, goal: str, observation: Observation, extra: list[str]
    ) -> list[dict[str, Any]]:
        t = len(self.turns)
        first_full = max(0, t - self.k)
        history = "\n".join(
            f"Step {i + 1}: {turn['summary']}\nMemory: {turn['memory'] or 'none'}"
            for i, turn in enumerate(self.turns[:first_full])
        )
        prompt = USER_PROMPT.format(goal=goal, history=history)
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
        for turn in range(first_full, t + 1):
            screenshot = observation.screenshot if turn == t else self.turns[turn]["screenshot"]
            parts: list[dict[str, Any]] = []
            if turn == first_full:
                parts.append({"type": "text", "text": prompt})
            if turn == t:
                parts += [{"type": "text", "text": text} for text in extra]
            parts.append(image_part(screenshot))
            messages.append({"role": "user", "content": parts})
            if turn < t:
                messages.append({"role": "assistant", "content": self.turns[turn]["output"]})
        return messages

    def read(self, text: str, observation: Observation) -> AgentStep:
        try:
            _, memory = parse_raw_output(text, observation.width, observation.height)
        except ValueError as exc:
            raise InvalidOutput(str(exc)) from None
        call = json.loads(TOOL_CALL.search(text).group(1))
        action = mobile_use_action(call["arguments"], observation.width, observation.height)
        memory = "" if (memory or "").strip().lower() in ("", "none") else memory.strip()
        thought = THINK.search(text)
        summary = ACTION_LINE.search(text.split("</think>")[-1])
        return AgentStep(
            action=action,
            memory=memory,
            extra={
                "thought": thought.group(1).strip() if thought else "",
                "summary": summary.group(1).strip() if summary else "",
            },
        )

    def remember(self, step: AgentStep, observation: Observation) -> None:
        self.turns.append(
            {
                "screenshot": observation.screenshot,
                "output": step.raw_output,
                "summary": step.extra.get("summary") or step.action["type"],
                "memory": step.memory,
            }
        )


# AndroTMem's action space and output, described in our words (their evaluation/prompts.py).
ANDROTMEM_ACTIONS = (
    "tap",
    "long_press",
    "text",
    "swipe",
    "swipe_two_points",
    "open_app",
    "wait",
    "finish",
    "home",
    "back",
    "need_feedback",
    "capture_screen",
)
ANDROTMEM_SYSTEM = (
    "Mobile GUI agent.\n\n"
    "I. Actions you may take: tap, long_press, text, swipe, swipe_two_points, open_app, wait, "
    "FINISH, home, back, need_feedback, capture_screen.\n\n"
    "II. Fields: x and y are on a 0-1000 grid over the screenshot, (0, 0) at the top left. "
    "value carries the text to type, the question for the user, the app to open, or the final "
    "answer with FINISH. swipe takes a direction (up, down, left or right) and a distance "
    "(long, medium or short); x_end and y_end are for swipe_two_points only. Set numbers you "
    'do not use to 0 and strings to "".\n\n'
    "III. How to decide: act only on what the screenshot shows; wait while something loads; "
    "aim at the middle of the element; give exactly one action each time.\n"
    "{section_four}\n"
    "V. Answer with one JSON object and nothing else: "
    '{{"action": {{"action": ..., "x": ..., "y": ..., "value": ..., "x_end": ..., '
    '"y_end": ..., "direction": ..., "distance": ...}}{extra_fields}}}\n'
)
ANDROTMEM_SECTION_FOUR = {
    "v1": ("", ""),
    "v2": (
        '\nIV. Add "summary_en": one sentence saying what this step does and what it leads to.\n',
        ', "summary_en": "..."',
    ),
    "v3": (
        '\nIV. Add "milestones": the anchors this step creates, each '
        '{"content_en": "[Category] what happened", "description_en": "why it matters later"}, '
        "with the category one of [subgoal], [state_change], [dependency], [exception], "
        "[context_info], [finish]; [] when nothing worth keeping happened.\n",
        ', "milestones": [...]',
    ),
}
MAX_MILESTONES = 50
JSON_OBJECT = re.compile(r"\{.*\}", re.S)


class AndroTMem:
    """AndroTMem's regimes: v1 (last three actions), v2 (last summary), v3 (milestone anchors,
    their Anchored State Memory)."""

    def __init__(self, version: str) -> None:
        self.version = version
        four, extra = ANDROTMEM_SECTION_FOUR[version]
        self.system = ANDROTMEM_SYSTEM.format(section_four=four, extra_fields=extra)
        self.reset()

    def reset(self) -> None:
        self.actions: list[dict[str, Any]] = []
        self.summary = ""
        self.milestones: list[dict[str, str]] = []

    def context(self) -> str:
        if self.version == "v1":
            last = self.actions[-3:]
            return f"Action History (last {len(last)} steps): {json.dumps(last)}"
        if self.version == "v2":
            return f"Last Step Summary: {self.summary}"
        lines = [
            f"- {m['content_en']}" + (f" → {m['description_en']}" if m["description_en"] else "")
            for m in self.milestones[-MAX_MILESTONES:]
        ]
        return "Milestone Anchors:\n" + ("\n".join(lines) if lines else "Start")

    def messages(
        self, goal: str, observation: Observation, extra: list[str]
    ) -> list[dict[str, Any]]:
        parts = [{"type": "text", "text": f"Task: {goal}\n{self.context()}"}]
        parts += [{"type": "text", "text": text} for text in extra]
        parts.append(image_part(observation.screenshot))
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": parts},
        ]

    def read(self, text: str, observation: Observation) -> AgentStep:
        found = JSON_OBJECT.search(text)
        if not found:
            raise InvalidOutput("no JSON object in the answer")
        try:
            answer = json.loads(found.group(0))
        except json.JSONDecodeError as exc:
            raise InvalidOutput(f"the answer is not JSON ({exc.msg})") from None
        inner = answer.get("action") if isinstance(answer, dict) else None
        if not isinstance(inner, dict):
            raise InvalidOutput('the answer has no "action" object')
        action = self._action(inner, observation.width, observation.height)
        extra: dict[str, Any] = {"androtmem_action": inner}
        memory = ""
        if self.version == "v2":
            memory = str(answer.get("summary_en") or "").strip()
            extra["summary"] = memory
        elif self.version == "v3":
            milestones = answer.get("milestones")
            kept = [
                {
                    "content_en": str(m.get("content_en") or "").strip(),
                    "description_en": str(m.get("description_en") or "").strip(),
                }
                for m in (milestones if isinstance(milestones, list) else [])
                if isinstance(m, dict) and str(m.get("content_en") or "").strip()
            ]
            extra["milestones"] = kept
            memory = "\n".join(
                m["content_en"] + (f" → {m['description_en']}" if m["description_en"] else "")
                for m in kept
            )
        return AgentStep(action=action, memory=memory, extra=extra)

    def _action(self, inner: dict[str, Any], width: int, height: int) -> dict[str, Any]:
        kind = str(inner.get("action", "")).lower().strip()
        value = str(inner.get("value") or "")
        if kind in ("tap", "long_press"):
            x = _pixel(inner.get("x"), width, "x")
            y = _pixel(inner.get("y"), height, "y")
            if kind == "tap":
                return {"type": "click", "x": x, "y": y}
            return {"type": "long_press", "x": x, "y": y, "duration_ms": 1000}
        if kind == "text":
            if not value:
                raise InvalidOutput("text needs a value")
            return {"type": "type", "text": value}
        if kind == "swipe":
            span = SWIPE_SPAN.get(str(inner.get("distance", "")).lower(), SWIPE_SPAN["medium"])
            direction = str(inner.get("direction", "")).lower()
            return swipe_from_centre(direction, span, width, height)
        if kind == "swipe_two_points":
            return {
                "type": "swipe",
                "x": _pixel(inner.get("x"), width, "x"),
                "y": _pixel(inner.get("y"), height, "y"),
                "x2": _pixel(inner.get("x_end"), width, "x_end"),
                "y2": _pixel(inner.get("y_end"), height, "y_end"),
                "duration_ms": 400,
            }
        if kind == "open_app":
            if not value.strip():
                raise InvalidOutput("open_app needs the app in value")
            return {"type": "open_app", "package": value.strip()}
        if kind in ("wait", "capture_screen"):
            return {"type": "wait", "duration_ms": 1000 if kind == "wait" else 0}
        if kind == "finish":
            if value.strip():
                return {"type": "answer", "text": value.strip()}
            return {"type": "terminate", "status": "success"}
        if kind in ("home", "back"):
            return {"type": kind}
        if kind == "need_feedback":
            raise InvalidOutput("need_feedback: there is no user to ask during a benchmark")
        raise InvalidOutput(f"unknown action {kind!r} (known: {', '.join(ANDROTMEM_ACTIONS)})")

    def remember(self, step: AgentStep, observation: Observation) -> None:
        inner = step.extra.get("androtmem_action") or {}
        pixels = {
            "action": str(inner.get("action", "")).lower(),
            **{k: v for k, v in step.action.items() if k in ("x", "y", "x2", "y2", "text")},
        }
        self.actions.append(pixels)
        if self.version == "v2":
            self.summary = step.memory
        if self.version == "v3":
            self.milestones.extend(step.extra.get("milestones", []))


APP_GRAPH_RULES = (
    "\n\n# App graph guidance\n"
    "Each turn also gives the page of the app's knowledge graph the screen is on, and numbered "
    "options there: actions that stay on the page (and the fields they change), actions that "
    "lead to another page (and which), task completion, and a free action. Choose the option "
    "that brings the task forward and write its number first, as `Option: <number>`; then "
    "`Action:` the one instruction you carry out now, `Memory:` the facts the task needs "
    "later, and the tool call that performs it. Prefer the graph's options; take the free "
    "action when none fits or the page is not in the graph."
)
OPTION_LINE = re.compile(r"^Option:[ \t]*(\d+)", re.M)
MAX_DONE = 20  # instructions carried out that the prompt recalls


class AppGraphGuided(MobileUse):
    """UI-KOBE's graph-guided runtime agent: one decision among the located page's options per
    step, with a light memory of what was done and noted (the page and options come in the
    ``extra`` text the agent puts before the screenshot)."""

    def __init__(self, k: int = DEFAULT_K) -> None:
        super().__init__(k)
        self.system = SYSTEM_PROMPT + APP_GRAPH_RULES

    def messages(
        self, goal: str, observation: Observation, extra: list[str]
    ) -> list[dict[str, Any]]:
        first = max(0, len(self.turns) - MAX_DONE)
        done = "\n".join(
            f"Step {first + i + 1}: {turn['summary']}"
            + (f"\nMemory: {turn['memory']}" if turn["memory"] else "")
            for i, turn in enumerate(self.turns[first:])
        )
        parts: list[dict[str, Any]] = [
            {"type": "text", "text": f"Task: {goal}\nDone so far:\n{done or 'nothing yet'}"}
        ]
        parts += [{"type": "text", "text": text} for text in extra]
        parts.append(image_part(observation.screenshot))
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": parts},
        ]

    def read(self, text: str, observation: Observation) -> AgentStep:
        step = super().read(text, observation)
        option = OPTION_LINE.search(text.split("</think>")[-1])
        step.extra["option"] = int(option.group(1)) if option else None
        return step


REGIMES = {
    "mobile_use": lambda k: MobileUse(k),
    "androtmem-v1": lambda k: AndroTMem("v1"),
    "androtmem-v2": lambda k: AndroTMem("v2"),
    "androtmem-v3": lambda k: AndroTMem("v3"),
    "app-graph": lambda k: AppGraphGuided(k),
}
GUIDED = ("app-graph",)  # regimes that need an app graph


class ChatAgent:
    """One model behind an OpenAI-compatible endpoint, in one regime."""

    def __init__(
        self,
        regime: str,
        *,
        base_url: str,
        model: str,
        api_key: str = "",
        with_xml: bool = False,
        k: int = DEFAULT_K,
        graph: MemoryGraph | None = None,
        app_graphs: Callable[[str], AppGraphLocator | None] | None = None,
        registered: bool = False,
    ) -> None:
        if regime in GUIDED and app_graphs is None:
            raise ValueError(f"the {regime} regime needs app graphs")
        self.name = f"openai:{regime}:{model}"
        self.regime = REGIMES[regime](k)
        self.client = LLMClient(base_url, model, api_key, registered=registered)
        self.with_xml = with_xml
        self.graph = graph
        self.app_graphs = app_graphs  # the app graph of a package, None when there is none
        self.goal = ""

    def start(self, goal: str) -> None:
        self.goal = goal
        self.regime.reset()

    def guidance(self, observation: Observation) -> str:
        """The app graph's page for the screen and its options, as a prompt block."""
        package = observation.package
        locator = self.app_graphs(package) if package and self.app_graphs else None
        if locator is None:
            where = Location(None, 0.0, 0.0, f"no app graph of {package or 'this app'}", [])
            return format_options(where, fixed_options())
        try:
            # The XML places the screen even when the regime does not show it to the model.
            where = locator.locate(observation.screenshot, observation.xml)
        except InvalidData as exc:
            where = Location(None, 0.0, 0.0, f"the screen could not be read: {exc}", [])
        node = where.node.id if where.node else None
        return format_options(where, node_options(locator.graph, node))

    def extra(self, observation: Observation) -> list[str]:
        """What goes before the screenshot, a text part each: the memory graph's block, the app
        graph's page and options, and the XML if asked."""
        parts = []
        if self.app_graphs is not None:
            parts.append(self.guidance(observation))
        if self.graph is not None:
            found = retrieve_for_screen(
                self.graph, observation.screenshot, observation.xml, task=self.goal
            )
            if found["memory_block"]:
                parts.append(found["memory_block"])
        if self.with_xml and observation.xml:
            parts.append(f"UI XML of the screen:\n{observation.xml}")
        return parts

    def act(self, observation: Observation) -> AgentStep:
        messages = self.regime.messages(self.goal, observation, self.extra(observation))
        began = time.perf_counter()
        completion: Completion = self.client.complete(messages)
        latency = (time.perf_counter() - began) * 1000
        try:
            step = self.regime.read(completion.text, observation)
        except InvalidOutput as exc:
            step = AgentStep(action={}, extra={"invalid": str(exc)})
        step.raw_output = completion.text
        step.prompt_chars = _text_chars(messages)
        step.tokens_in = completion.prompt_tokens
        step.tokens_out = completion.completion_tokens
        step.latency_ms = round(latency, 1)
        if "invalid" not in step.extra:
            self.regime.remember(step, observation)
        return step
