"""An optional LLM judge for M-Acc, as STAMP grades memory: its Table 17 prompt.

For each task with memory targets, the judge reads the task, the content to memorise (every
target's key and value) and what the agent wrote as memory from the first encode step on, and
answers "Complete Match", "Partial Match" or "No Match" (g = 1, 0.5, 0). Its figure is reported
apart from the rules'. Anything else, or an endpoint that fails, leaves the task unjudged and is
counted and reported, never fatal. The requests go through the one client,
:class:`core.llm.LLMClient` (its retries, limits and timeout).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.llm import LLMClient, LLMError

# STAMP (shared/papers/stamp-memory-world.txt), Table 17, word for word.
PROMPT = (
    "I have a task to perform using Chrome on my phone, as follows:\n{task}\n"
    "Please note that this task requires memorizing specific information to complete.\n"
    "I will now provide the content that needs to be memorized for this task, as follows:\n"
    "{reference}\n"
    "I have a mobile AI agent that has completed this task, and it has memorized the "
    "following:\n{memory}\n"
    "Now, please determine whether the information the mobile phone agent has memorized is "
    "accurate based on the information above:\n"
    "1. If the mobile phone agent\u2019s memory completely matches the provided content to be "
    "memorized, output \u201cComplete Match\u201d.\n"
    "2. If the mobile phone agent\u2019s memory partially matches the provided content to be "
    "memorized, output \u201cPartial Match\u201d.\n"
    "3. If the mobile phone agent\u2019s memory does not match the provided content to be "
    "memorized at all, output \u201cNo Match\u201d.\n"
    "\u201cMatch\u201d means that both expressions convey the same meaning. They do not need to "
    "be completely identical. As long as the core content to be memorized, such as numbers or "
    "strings, is the same, it is acceptable.\n"
    "Now, after careful consideration, please directly output your final judgment. You must "
    "choose one of \u201cComplete Match\u201d, \u201cPartial Match\u201d, or \u201cNo Match\u201d "
    "and do not output any other content."
)
VERDICT = re.compile(r"\b(complete|partial|no)\s+match\b", re.I)
VERDICTS = {"complete": "complete", "partial": "partial", "no": "none"}
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
    failed: int = 0
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.client = LLMClient(self.url, self.model, self.api_key, timeout_s=self.timeout)

    def _ask(self, task: str, reference: str, memory: str) -> str:
        prompt = PROMPT.format(task=task, reference=reference, memory=memory or "(nothing)")
        try:
            text = self.client.chat(prompt).text
        except LLMError as exc:
            raise JudgeError(f"the judge did not answer ({exc})") from None
        found = VERDICT.findall(text)
        if len({f.lower() for f in found}) != 1:
            raise JudgeError(
                f"the judge answered {text[:60]!r}, not one of Complete / Partial / No Match"
            )
        return VERDICTS[found[0].lower()]

    def grade_task(self, task: str, reference: str, memory: str, label: str = "") -> str | None:
        """complete, partial or none for a task's memory; None when the judge gave no
        verdict (counted in the report, under ``label``)."""
        self.asked += 1
        try:
            return self._ask(task, reference, memory)
        except JudgeError as exc:
            self.failed += 1
            if len(self.errors) < MAX_REPORTED:
                self.errors.append(f"{label or task[:40]}: {exc}")
            return None

    def report(self) -> dict:
        return {
            "model": self.model,
            "prompt": "STAMP Table 17",
            "asked": self.asked,
            "failed": self.failed,
            "errors": self.errors,
        }
