"""An optional LLM judge for M-Acc, through any OpenAI-compatible chat endpoint.

The rules of :func:`.metrics.memory_match` decide first; the judge is asked only about targets
they do not find complete (a paraphrase, another unit, a translation). Its answer must be one
of complete, partial or none; anything else, or an endpoint that fails, keeps the rules'
verdict and is counted and reported, never fatal.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass, field

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

    def _ask(self, key: str, value: str, memory: str) -> str:
        body = json.dumps(
            {
                "model": self.model,
                "temperature": 0,
                "messages": [
                    {
                        "role": "user",
                        "content": PROMPT.format(
                            key=key, value=value, memory=memory or "(nothing)"
                        ),
                    }
                ],
            }
        ).encode()
        request = urllib.request.Request(
            self.url.rstrip("/") + "/chat/completions",
            data=body,
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.loads(response.read())
            text = answer["choices"][0]["message"]["content"]
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise JudgeError(f"the judge did not answer ({exc})") from None
        except (ValueError, KeyError, IndexError, TypeError):
            raise JudgeError("the judge's reply is not a chat completion") from None
        found = VERDICT.search(str(text))
        if not found:
            raise JudgeError(f"the judge answered {str(text)[:60]!r}, not complete/partial/none")
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
