"""From a verified run to training data (STAMP §3.3): each step's reasoning written by a model,
and a step-level critic (an LLM judge of the step's action and memory) whose rejections mask
the step (it stops being trainable) rather than drop the trajectory.

Both go through the one OpenAI-compatible client (``core/llm.py``: ``LLM_BASE_URL``,
``LLM_MODEL``, ``LLM_API_KEY``, allow-listed hosts only). Without a configured model nothing is
written: the stamp-sft export gives a step without reasoning Waypoint's own template text and
says so (``formats/reasoning.py``), and no step is judged. What was done is kept in the
trajectory's metadata (``reasoning``: the model, the prompt version and the steps it wrote;
``critic``: the verdict of each step), and every write is a label edit of the trajectory.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.conf import settings

from core.llm import LLMClient, LLMError, image_part
from trajectories import events
from trajectories.blobs import read_blob
from trajectories.labels.protocol import edit, update_metadata
from trajectories.models import Step, Trajectory

PROMPT_VERSION = 1
REASONING_PROMPT = """You write the reasoning of a mobile GUI agent for one step of a task it \
completed. Write one to three sentences in the first person: why this action is the right one \
on this screen, and, when the step writes memory, why that value must be kept for later (it \
will leave the screen before it is used). Name nothing that is neither on the screen nor in the \
memory. Answer with the reasoning alone, in English.

Task: {goal}
Earlier steps:
{history}
Texts on the screen: {texts}
The action taken: {action}
Memory written at this step: {memory}"""
CRITIC_PROMPT = """You are the critic of a GUI agent's training data (STAMP's step critic). \
Judge one step of a successful run.
- action: "valid" if it is a sensible step toward the task on this screen, else "invalid".
- memory: "none" if the step writes no memory; "valid" if what it writes is on the screen \
and needed later by the task; else "invalid".
Answer with JSON only: {{"action": "valid|invalid", "memory": "valid|invalid|none", \
"reason": "one sentence"}}

Task: {goal}
Texts on the screen: {texts}
The action taken: {action}
Memory written at this step: {memory}"""
MAX_TEXTS = 60
VERDICT = re.compile(r"\{.*\}", re.DOTALL)


def configured_client() -> LLMClient | None:
    """The default model of the environment (``LLM_BASE_URL``), or None."""
    if not settings.LLM_BASE_URL:
        return None
    return LLMClient(settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY)


def _texts(step: Step) -> str:
    if step.screen.ui_xml is None:
        return "(none)"
    found = re.findall(r' text="([^"]+)"', read_blob(step.screen.ui_xml).decode("utf-8", "replace"))
    return "; ".join(found[:MAX_TEXTS]) or "(none)"


def _action(step: Step) -> str:
    return json.dumps({"type": step.action_type, **step.action}, ensure_ascii=False)


def _ask_reasoning(client: LLMClient, goal: str, step: Step, history: list[str]) -> str:
    prompt = REASONING_PROMPT.format(
        goal=goal,
        history="\n".join(history) or "(none)",
        texts=_texts(step),
        action=_action(step),
        memory=step.memory or "(none)",
    )
    content = [{"type": "text", "text": prompt}, image_part(read_blob(step.screen.screenshot))]
    text = client.chat(content).text.strip()
    text = re.sub(r"</?think>", "", text).strip()
    return text


def _ask_critic(client: LLMClient, goal: str, step: Step) -> dict[str, str]:
    prompt = CRITIC_PROMPT.format(
        goal=goal, texts=_texts(step), action=_action(step), memory=step.memory or "(none)"
    )
    text = client.chat(prompt, json_object=True).text
    match = VERDICT.search(text)
    try:
        verdict = json.loads(match.group(0)) if match else None
    except ValueError:
        verdict = None
    if not isinstance(verdict, dict) or verdict.get("action") not in ("valid", "invalid"):
        return {"verdict": "unjudged", "reason": "the critic's answer was not a verdict"}
    memory = verdict.get("memory") if verdict.get("memory") in ("valid", "invalid") else "none"
    rejected = verdict["action"] == "invalid" or memory == "invalid"
    return {
        "verdict": "rejected" if rejected else "accepted",
        "action": verdict["action"],
        "memory": memory,
        "reason": str(verdict.get("reason", ""))[:300],
    }


def prepare_training(trajectory: Trajectory, options: dict[str, Any]) -> dict[str, Any]:
    """Reasoning for every step and the critic's verdicts, by the configured model; what was
    done, for the environment's report."""
    client = configured_client()
    if client is None:
        return {"reasoning": "template", "critic": "none (no model configured)"}
    goal = trajectory.task.goal
    steps = list(
        Step.objects.filter(trajectory=trajectory)
        .select_related("screen__ui_xml", "screen__screenshot")
        .order_by("index")
    )
    written: dict[str, str] = {}
    verdicts: dict[str, dict[str, str]] = {}
    history: list[str] = []
    errors = 0
    for step in steps:
        if options.get("reasoning", True):
            try:
                thought = _ask_reasoning(client, goal, step, history)
            except LLMError:
                thought, errors = "", errors + 1
            if thought:
                written[str(step.index)] = thought
        if options.get("critic", True):
            try:
                verdicts[str(step.index)] = _ask_critic(client, goal, step)
            except LLMError as exc:
                verdicts[str(step.index)] = {"verdict": "unjudged", "reason": str(exc)[:300]}
        history.append(f"Step {step.index + 1}: {_action(step)}")
    _write(trajectory, written, verdicts, client.model)
    rejected = sorted(int(i) for i, v in verdicts.items() if v["verdict"] == "rejected")
    return {
        "reasoning": f"model:{client.model}" if written else "template",
        "reasoning_steps": len(written),
        "model_errors": errors,
        "critic": f"model:{client.model}" if verdicts else "none",
        "masked_steps": rejected,
    }


def _write(
    trajectory: Trajectory,
    written: dict[str, str],
    verdicts: dict[str, dict[str, str]],
    model: str,
) -> None:
    """Each step's reasoning and mask as a label edit; the provenance in the metadata."""
    for index, thought in sorted(written.items(), key=lambda item: int(item[0])):

        def write(locked: Trajectory, index: int = int(index), text: str = thought) -> None:
            Step.objects.filter(trajectory=locked, index=index).update(thought=text)

        trajectory.refresh_from_db(fields=["version"])
        edit(
            trajectory,
            None,
            trajectory.version,
            events.REASONING_SYNTHESIZED,
            f"step:{index}",
            write,
            object_type="Step",
        )
    for index, verdict in sorted(verdicts.items(), key=lambda item: int(item[0])):
        if verdict["verdict"] != "rejected":
            continue

        def mask(locked: Trajectory, index: int = int(index)) -> None:
            Step.objects.filter(trajectory=locked, index=index).update(trainable=False)

        trajectory.refresh_from_db(fields=["version"])
        edit(
            trajectory, None, trajectory.version, events.STEP_CRITIC, f"step:{index}", mask,
            object_type="Step",
        )  # fmt: skip

    def keep(metadata: dict[str, Any]) -> None:
        if written:
            metadata["reasoning"] = {
                "model": model,
                "prompt_version": PROMPT_VERSION,
                "steps": {i: "model" for i in written},
            }
        if verdicts:
            metadata["critic"] = {"model": model, "prompt_version": PROMPT_VERSION,
                                  "steps": verdicts}  # fmt: skip

    update_metadata(trajectory, keep)
