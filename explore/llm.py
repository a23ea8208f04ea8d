"""``--strategy llm``: an OpenAI-compatible model picks the next action and writes the words
(a state's description, a transition's instruction and effect), as UI-KOBE's explorer does.

The model is the one the LLM proposer uses (``LLM_BASE_URL``, ``LLM_MODEL``, ``LLM_API_KEY``,
through :class:`core.llm.LLMClient`: its slots, retries and timeouts). An answer that is not
what was asked, or no answer at all, falls back to the walk's own choice and the XML's words;
``fallbacks`` counts them. The model sees the screenshot and the XML's words, never the device.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from core.llm import LLMClient, LLMError, image_part
from trajectories.uixml import UITree
from trajectories.validation import InvalidData

MAX_CHOICES = 30


class ModelWriter:
    def __init__(self, client: LLMClient | None = None):
        if client is None:
            if not settings.LLM_BASE_URL:
                raise InvalidData(
                    "strategy: llm needs a model: set LLM_BASE_URL (and LLM_MODEL, LLM_API_KEY)"
                )
            client = LLMClient(settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY)
        self.client = client
        self.fallbacks = 0
        self.calls = 0

    def _ask(self, content: list[dict[str, Any]] | str) -> dict[str, Any] | None:
        self.calls += 1
        try:
            answer = self.client.chat(content, json_object=True).text
            data = json.loads(answer.strip().removeprefix("```json").removesuffix("```"))
        except (LLMError, ValueError):
            self.fallbacks += 1
            return None
        if not isinstance(data, dict):
            self.fallbacks += 1
            return None
        return data

    def choose(
        self, node: dict[str, Any], todo: list[dict[str, Any]], tree: UITree | None
    ) -> dict[str, Any]:
        """The action to try next among ``todo`` (the first when the answer is unusable)."""
        listed = todo[:MAX_CHOICES]
        lines = "\n".join(f"{i}. {c['label']}" for i, c in enumerate(listed))
        prompt = (
            "You are exploring a mobile app to map every page. You are on: "
            f"{node['description']}\nActions not tried yet:\n{lines}\n"
            'Pick the action most likely to reach a page not seen yet. Answer JSON: {"choice": N}'
        )
        data = self._ask(prompt)
        choice = data.get("choice") if data else None
        if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(listed):
            if data is not None:
                self.fallbacks += 1
            return todo[0]
        return listed[choice]

    def describe_state(self, screenshot: bytes, tree: UITree | None, fallback: str) -> str:
        prompt = (
            "Describe this app page in one sentence: what it is for and what it shows (its main "
            f"content, not its first line). The XML says: {fallback}\n"
            'Answer JSON: {"description": "..."}'
        )
        data = self._ask([{"type": "text", "text": prompt}, image_part(screenshot)])
        text = data.get("description") if data else None
        if not isinstance(text, str) or not text.strip():
            if data is not None:
                self.fallbacks += 1
            return fallback
        return text.strip()[:300]

    def describe_edge(
        self, label: str, effect: str, source: dict[str, Any], target: dict[str, Any]
    ) -> tuple[str, str]:
        prompt = (
            f"On the page '{source['description']}' the action '{label}' led to "
            f"'{target['description']}' ({effect}). Write the instruction a user would give for "
            'it and its effect. Answer JSON: {"instruction": "...", "effect": "..."}'
        )
        data = self._ask(prompt)
        instruction = data.get("instruction") if data else None
        said = data.get("effect") if data else None
        if not isinstance(instruction, str) or not isinstance(said, str) or not instruction.strip():
            if data is not None:
                self.fallbacks += 1
            return label, effect
        return instruction.strip()[:300], said.strip()[:300]
