"""The LLM proposer: any OpenAI-compatible chat completions API, following the subgoal memory
graph paper's procedure in two requests.

1. *Segment*: the whole action sequence in, subgoal boundaries out.
2. *Annotate*: each subgoal's actions and boundary screenshots in, its text (intent), effect
   (comparing the boundary screens), behaviour and success out; optionally anchors and memory
   targets.

Answers are JSON, validated (:func:`.base.check_payload`): bad JSON, overlapping or
out-of-range segments, unknown labels are asked again up to ``LLM_INVALID_RETRIES`` times, then
the proposal fails with every raw answer kept. The requests go through the one client,
:class:`core.llm.LLMClient`, with its retries (429s, 5xx and timeouts, with backoff or the
server's ``Retry-After``), its timeout and its limits (``LLM_MAX_IN_FLIGHT`` requests at once,
``LLM_REQUESTS_PER_MINUTE``, counted over every worker process).
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings

from core.llm import LLMClient, LLMError, image_part
from trajectories.validation import InvalidData

from .base import Episode, Proposed, check_payload

PROMPT_VERSION = "llm1"
MAX_TEXT = 2000  # longer label text in an answer is refused
MAX_RAW = 100_000  # what is kept of the raw answers of a failed proposal

SEGMENT = """You segment a mobile GUI agent's trajectory into subgoals.
Task: {goal}
The steps (index, app, action):
{steps}

A subgoal is a run of consecutive steps that together realise one coherent sub-intent, e.g.
"open the search bar and submit a query" or "add the selected item to the basket".
Cover every step from 0 to {last} exactly once, in order.
Answer with JSON only: {{"subgoals": [{{"start": 0, "end": 2}}, ...]}}"""

ANNOTATE = """Task: {goal}
Subgoals of the trajectory (steps inclusive), with their actions:
{subgoals}
{images}
For each subgoal give: "text" (its intent, one short sentence), "effect" (one sentence: what
changed between its first and its last screen), "behaviour" (the dominant interaction pattern
of its actions) and "success" (one of "yes", "no", "uncertain").
Optionally also "anchors" (step, type one of subgoal, state_change, dependency, exception,
context_info, finish; content; description) and "memory_targets" (key, value, encode_step,
retrieve_steps: values seen on one screen and needed at later steps).
Answer with JSON only: {{"subgoals": [{{"start": .., "end": .., "text": "..", "effect": "..",
"behaviour": "..", "success": ".."}}], "anchors": [], "memory_targets": []}}"""


def _json_of(text: str) -> Any:
    """The JSON object in an answer (a ```json fence around it is tolerated)."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    body = fenced.group(1) if fenced else text
    try:
        return json.loads(body.strip())
    except json.JSONDecodeError as exc:
        raise InvalidData(f"answer: not JSON ({exc.msg} at line {exc.lineno})") from None


def _check_texts(payload: dict[str, Any]) -> None:
    for part in ("subgoals", "anchors", "memory_targets"):
        for i, item in enumerate(payload.get(part) or []):
            if not isinstance(item, dict):
                continue
            for name, value in item.items():
                if isinstance(value, str) and len(value) > MAX_TEXT:
                    raise InvalidData(f"{part}[{i}].{name}: over {MAX_TEXT} characters")


def _describe(action: dict[str, Any]) -> str:
    fields = {k: v for k, v in action.items() if k != "type"}
    return (
        f"{action.get('type', '?')} {json.dumps(fields, ensure_ascii=False)}"
        if fields
        else (str(action.get("type", "?")))
    )


class LLMProposer:
    name = "llm"
    prompt_version = PROMPT_VERSION
    wants_images = True

    def __init__(self) -> None:
        if not settings.LLM_BASE_URL:
            raise InvalidData(
                "proposer: the llm proposer needs LLM_BASE_URL (an OpenAI-compatible API)"
            )
        self.client = LLMClient(settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY)
        self.model = settings.LLM_MODEL
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.raw: list[str] = []

    # ------------------------------------------------------------ the procedure

    def propose(self, episode: Episode) -> Proposed:
        n = len(episode.actions)
        try:
            segments = self._valid(
                [{"type": "text", "text": self._segment_prompt(episode)}],
                lambda data: self._check_segments(data, n),
            )
            payload = self._valid(
                self._annotate_content(episode, segments),
                lambda data: self._check_annotation(data, segments, n),
            )
        except (LLMError, InvalidData) as exc:
            return self._answer({}, str(exc))
        return self._answer(payload, "")

    def _answer(self, payload: dict[str, Any], error: str) -> Proposed:
        raw = "\n\n--- next answer ---\n\n".join(self.raw)
        return Proposed(
            payload=payload,
            model=self.model,
            raw_output=raw[:MAX_RAW],
            error=error,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
        )

    def _segment_prompt(self, episode: Episode) -> str:
        steps = "\n".join(
            f"{i}. [{episode.screens[i].package or '?'}] {_describe(a)}"
            for i, a in enumerate(episode.actions)
        )
        return SEGMENT.format(goal=episode.goal, steps=steps, last=len(episode.actions) - 1)

    def _annotate_content(self, episode: Episode, segments: list[dict]) -> list[dict[str, Any]]:
        lines = []
        for g in segments:
            actions = "; ".join(
                _describe(episode.actions[i]) for i in range(g["start"], g["end"] + 1)
            )
            lines.append(f"- steps {g['start']}–{g['end']}: {actions}")
        images = bool(episode.images)
        text = ANNOTATE.format(
            goal=episode.goal,
            subgoals="\n".join(lines),
            images="Each subgoal's first and last screen follow, in order." if images else "",
        )
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if images:
            for g in segments:
                for screen in (g["start"], g["end"] + 1):
                    content.append(image_part(episode.images[screen]))
        return content

    @staticmethod
    def _check_segments(data: Any, n: int) -> list[dict[str, Any]]:
        payload = check_payload(
            {"subgoals": (data or {}).get("subgoals") if isinstance(data, dict) else data}, n
        )
        segments = [{"start": g["start"], "end": g["end"]} for g in payload["subgoals"]]
        if not segments:
            raise InvalidData("subgoals: none given")
        return segments

    @staticmethod
    def _check_annotation(data: Any, segments: list[dict], n: int) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise InvalidData(f"answer: must be an object, got {type(data).__name__}")
        _check_texts(data)
        payload = check_payload(
            {k: data.get(k) or [] for k in ("subgoals", "anchors", "memory_targets")}, n
        )
        got = [(g["start"], g["end"]) for g in payload["subgoals"]]
        wanted = [(g["start"], g["end"]) for g in segments]
        if got != wanted:
            raise InvalidData(f"subgoals: annotated {got}, not the segments {wanted}")
        keep = ("start", "end", "text", "effect", "behaviour", "success")
        payload["subgoals"] = [{k: g.get(k, "") for k in keep} for g in payload["subgoals"]]
        return payload

    # ------------------------------------------------------------ requests

    def _valid(self, content: list[dict[str, Any]], check) -> Any:
        """Ask until the answer passes ``check`` (bounded); the last error otherwise."""
        error = ""
        for _ in range(1 + max(0, settings.LLM_INVALID_RETRIES)):
            text = self._complete(content)
            self.raw.append(text)
            try:
                return check(_json_of(text))
            except InvalidData as exc:
                error = str(exc)
        raise InvalidData(f"no valid answer after {len(self.raw)} tries: {error}")

    def _complete(self, content: list[dict[str, Any]]) -> str:
        answer = self.client.chat(content, json_object=True)
        self.prompt_tokens += answer.prompt_tokens
        self.completion_tokens += answer.completion_tokens
        return answer.text
