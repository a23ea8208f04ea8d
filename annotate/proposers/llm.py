"""The LLM proposer: any OpenAI-compatible chat completions API, following the subgoal memory
graph paper's procedure in two requests.

1. *Segment*: the whole action sequence in, subgoal boundaries out.
2. *Annotate*: each subgoal's actions and boundary screenshots in, its text (intent), effect
   (comparing the boundary screens), behaviour and success out; optionally anchors and memory
   targets.

Answers are JSON, validated (:func:`.base.check_payload`): bad JSON, overlapping or
out-of-range segments, unknown labels are asked again up to ``LLM_INVALID_RETRIES`` times, then
the proposal fails with every raw answer kept. 429s, 5xx and timeouts are retried with
exponential backoff (or the server's ``Retry-After``). At most ``LLM_MAX_IN_FLIGHT`` requests
are in flight at once and at most ``LLM_REQUESTS_PER_MINUTE`` start in a minute, counted over
every worker process (:mod:`.limits`).
"""

from __future__ import annotations

import base64
import json
import re
import time
import urllib.error
import urllib.request
from typing import Any

from django.conf import settings

from trajectories.validation import InvalidData

from .base import Episode, Proposed, check_payload
from .limits import LimitWait, request_slot

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


class LLMError(Exception):
    pass


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


def _image_type(data: bytes) -> str:
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "image/png"


class LLMProposer:
    name = "llm"
    prompt_version = PROMPT_VERSION
    wants_images = True

    def __init__(self) -> None:
        if not settings.LLM_BASE_URL:
            raise InvalidData(
                "proposer: the llm proposer needs LLM_BASE_URL (an OpenAI-compatible API)"
            )
        self.url = settings.LLM_BASE_URL.rstrip("/") + "/chat/completions"
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
                    image = episode.images[screen]
                    data = base64.b64encode(image).decode()
                    url = f"data:{_image_type(image)};base64,{data}"
                    content.append({"type": "image_url", "image_url": {"url": url}})
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
        body = json.dumps(
            {
                "model": self.model,
                "temperature": 0,
                "response_format": {"type": "json_object"},
                "messages": [{"role": "user", "content": content}],
            }
        ).encode()
        headers = {"Content-Type": "application/json"}
        if settings.LLM_API_KEY:
            headers["Authorization"] = f"Bearer {settings.LLM_API_KEY}"
        wait = settings.LLM_BACKOFF_MS / 1000
        last = ""
        for attempt in range(1 + max(0, settings.LLM_HTTP_RETRIES)):
            if attempt:
                time.sleep(wait)
                wait *= 2
            request = urllib.request.Request(self.url, data=body, headers=headers)
            try:
                with (
                    request_slot(self.url),
                    urllib.request.urlopen(request, timeout=settings.LLM_TIMEOUT_S) as response,
                ):
                    answer = json.loads(response.read())
            except LimitWait as exc:
                raise LLMError(str(exc)) from None
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} from {self.url}"
                if exc.code == 429 or exc.code >= 500:
                    retry_after = exc.headers.get("Retry-After", "")
                    if retry_after.isdigit():
                        wait = float(retry_after)
                    continue
                raise LLMError(last) from None
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                last = f"no answer from {self.url} ({getattr(exc, 'reason', exc)})"
                continue
            except ValueError:
                raise LLMError(f"{self.url} answered something that is not JSON") from None
            try:
                usage = answer.get("usage") or {}
                self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
                self.completion_tokens += int(usage.get("completion_tokens") or 0)
                return str(answer["choices"][0]["message"]["content"])
            except (KeyError, IndexError, TypeError, ValueError, AttributeError):
                raise LLMError(
                    f"{self.url} answered something that is not a chat completion"
                ) from None
        raise LLMError(f"gave up after {1 + settings.LLM_HTTP_RETRIES} requests: {last}")
