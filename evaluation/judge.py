"""An optional LLM judge for M-Acc, through any OpenAI-compatible chat endpoint.

The rules of :func:`.metrics.memory_match` decide first; the judge is asked only about targets
they do not find complete (a paraphrase, another unit, a translation). Its answer must be one
of complete, partial or none; anything else, or an endpoint that fails, keeps the rules'
verdict and is counted and reported, never fatal. The requests go through the one client,
:class:`core.llm.LLMClient` (its retries, limits and timeout).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.llm import LLMClient, LLMError

PROMPT = (
    "An agent had to remember a value shown on a phone screen. Compare what it wrote down with "
    "the value.\nKey: {key}\nValue: {value}\nWhat the agent wrote: {memory}\n\n"
    "Answer with one word: complete (the value is there, possibly worded differently), partial "
    "(only part of it), or none."
)
VERDICT = re.compile(r"\b(complete|partial|none)\b", re.I)
MAX_REPORTED = 10


class JudgeError(Exception):
    pass


@dataclass
class Judge:
    url: str
    model: str
    api_key: str = ""
    timeout: float = 30.0
    asked: int = 0
    changed: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.client = LLMClient(self.url, self.model, self.api_key, timeout_s=self.timeout)

    def _ask(self, key: str, value: str, memory: str) -> str:
        prompt = PROMPT.format(key=key, value=value, memory=memory or "(nothing)")
        try:
            text = self.client.chat(prompt).text
        except LLMError as exc:
            raise JudgeError(f"the judge did not answer ({exc})") from None
        found = VERDICT.search(text)
        if not found:
            raise JudgeError(f"the judge answered {text[:60]!r}, not complete/partial/none")
        return found.group(1).lower()

    def grade(self, key: str, value: str, memory: str | None, verdict: str) -> str:
        """The judge's verdict on a target the rules did not find complete."""
        self.asked += 1
        try:
            judged = self._ask(key, value, memory or "")
        except JudgeError as exc:
            self.failed += 1
            if len(self.errors) < MAX_REPORTED:
                self.errors.append(f"{key}: {exc}")
            return verdict
        self.changed += judged != verdict
        return judged

    def report(self) -> dict:
        return {
            "model": self.model,
            "asked": self.asked,
            "changed": self.changed,
            "failed": self.failed,
            "errors": self.errors,
        }
