"""``stamp-sft``: STAMP's supervised fine-tuning samples, one chat per trainable step.

Each line is ``{"messages": [...], "images": [...]}`` with one ``<image>`` placeholder per
image, the layout ms-swift and LLaMA-Factory (sharegpt, with ``dataset_info.json``) read.

- system: the ``mobile_use`` tool declaration and response rules of STAMP's Table 15, verbatim
  (GUI-Owl's screen is 1000x1000: coordinates are normalised to 0-1000).
- history, two-tier (STAMP appendix A.2): the last K turns before the current step (K=5) are
  kept in full, each a user turn holding its screenshot and the assistant's output; older
  steps become ``Step i: <action>\\nMemory: <memory or none>`` lines in the first user turn,
  which also holds the instruction (Table 7's user prompt).
- target: ``<think>thought</think>\\nAction: summary\\nMemory: memory\\n<tool_call>\\n{...}
  \\n</tool_call>`` with the canonical action mapped to ``mobile_use``.

Steps whose memory is not empty are memory steps; ``memory_ratio`` repeats their samples so
that there are about that many memory samples per other sample (STAMP's 1:1 and 3:1).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from trajectories.models import Step, Trajectory
from trajectories.validation import InvalidData

from .dataset import (
    DatasetWriter,
    ExportRun,
    Split,
    card_counts,
    check_memory_graph_option,
    describe_filter,
)
from .reasoning import TEMPLATE, step_source, template_reasoning
from .waypoint import iter_records

FORMAT = "stamp-sft"
SCHEMA_VERSION = 1
SYSTEM_PROMPT = (
    Path(__file__).with_name("stamp_system_prompt.txt").read_text(encoding="utf-8").rstrip("\n")
)
USER_PROMPT = (
    "Please generate the next move according to the UI screenshot, instruction and previous "
    "actions.\nInstruction: {goal}\nPrevious actions:\n{history}"
)
IMAGE = "<image>"
DEFAULT_K = 5
# The media placeholders ms-swift and LLaMA-Factory count in a sample's text: one written by a
# person (a goal that says "<image>", a typed "<video>") would claim an image the sample does
# not have, and they refuse such a sample.
PLACEHOLDER = re.compile(r"<(image|video|audio)>")


def _text(value: str) -> str:
    """Text of a sample with a literal placeholder broken by a zero-width space."""
    return PLACEHOLDER.sub("<\u200b\\1>", value)


def _call_json(call: dict[str, Any]) -> str:
    """The tool call's JSON; a literal placeholder in a string is written with ``\\u003c``,
    so the call still decodes to exactly the text that was typed."""
    return PLACEHOLDER.sub(r"\\u003c\1>", json.dumps(call, ensure_ascii=False))


SYSTEM_BUTTONS = {"back": "Back", "home": "Home", "enter": "Enter"}


def _point(x: float, y: float, width: int, height: int) -> list[int]:
    """Pixels to GUI-Owl's 0-1000 screen, clamped to it."""
    return [
        min(1000, max(0, round(x * 1000 / width))) if width else 0,
        min(1000, max(0, round(y * 1000 / height))) if height else 0,
    ]


def mobile_use_arguments(action: dict[str, Any], width: int, height: int) -> dict[str, Any]:
    """A canonical action as the arguments of a ``mobile_use`` call (0-1000 coordinates)."""
    kind = action["type"]
    if kind == "click":
        return {"action": "click", "coordinate": _point(action["x"], action["y"], width, height)}
    if kind == "long_press":
        return {
            "action": "long_press",
            "coordinate": _point(action["x"], action["y"], width, height),
            "time": action.get("duration_ms", 1000) / 1000,
        }
    if kind == "swipe":
        return {
            "action": "swipe",
            "coordinate": _point(action["x"], action["y"], width, height),
            "coordinate2": _point(action["x2"], action["y2"], width, height),
        }
    if kind == "type":
        return {"action": "type", "text": action["text"]}
    if kind == "key":
        keycode = action["keycode"]
        if keycode.upper().startswith("KEYCODE_"):
            keycode = keycode[len("KEYCODE_") :].lower()
        return {"action": "key", "text": keycode}
    if kind in SYSTEM_BUTTONS:
        return {"action": "system_button", "button": SYSTEM_BUTTONS[kind]}
    if kind == "open_app":
        return {"action": "open", "text": action.get("app_label") or action["package"]}
    if kind == "wait":
        return {"action": "wait", "time": action["duration_ms"] / 1000}
    if kind == "answer":
        return {"action": "answer", "text": action["text"]}
    if kind == "terminate":
        return {"action": "terminate", "status": action["status"]}
    raise InvalidData(f"action: {kind!r} has no mobile_use equivalent")


def describe_action(action: dict[str, Any], width: int, height: int) -> str:
    """A short description for a step that has no summary, its points on the 0-1000 screen
    its tool call uses."""
    kind = action["type"]
    if kind in ("click", "long_press"):
        x, y = _point(action["x"], action["y"], width, height)
        return f"{kind.replace('_', ' ')} at ({x}, {y})"
    if kind == "swipe":
        (x, y), (x2, y2) = (
            _point(action["x"], action["y"], width, height),
            _point(action["x2"], action["y2"], width, height),
        )
        return f"swipe from ({x}, {y}) to ({x2}, {y2})"
    if kind in ("type", "answer"):
        return f"{kind} {json.dumps(action['text'], ensure_ascii=False)}"
    if kind == "open_app":
        return f"open {action.get('app_label') or action['package']}"
    if kind == "key":
        return f"press {action['keycode']}"
    if kind == "terminate":
        return f"terminate ({action['status']})"
    return kind.replace("_", " ")


def _memory(text: str) -> str:
    return _text(text) if text.strip() else "none"


def _summary(step: dict[str, Any], width: int, height: int) -> str:
    return _text(step["summary"] or describe_action(step["action"], width, height))


def reasoning_of(record: dict[str, Any], step: dict[str, Any]) -> tuple[str, str]:
    """The step's reasoning and where it came from (``formats/reasoning.py``)."""
    if str(step.get("thought") or "").strip():
        return step["thought"], step_source(record, step)
    return template_reasoning(step), TEMPLATE


def assistant_output(
    step: dict[str, Any], width: int, height: int, thought: bool = True, reasoning: str = ""
) -> str:
    call = {"name": "mobile_use", "arguments": mobile_use_arguments(step["action"], width, height)}
    parts = [f"<think>{_text(reasoning or step['thought'])}</think>"] if thought else []
    parts += [
        f"Action: {_summary(step, width, height)}",
        f"Memory: {_memory(step['memory'])}",
        f"<tool_call>\n{_call_json(call)}\n</tool_call>",
    ]
    return "\n".join(parts)


def _encoded(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


SYSTEM_MESSAGE = _encoded({"role": "system", "content": SYSTEM_PROMPT})
IMAGE_TURN = _encoded({"role": "user", "content": IMAGE})


def sample_lines(
    record: dict[str, Any],
    image_of: Callable[[str], str],
    *,
    k: int = DEFAULT_K,
    thought: bool = True,
    trainable_only: bool = True,
    memory_blocks: dict[int, str] | None = None,
    memory_weight: float = 1.0,
) -> list[tuple[dict[str, Any], str]]:
    """(step, JSONL line) for every step of a native record that becomes a sample.

    A line is ``{"messages": [...], "images": [...], "memory_required": ..., "weight": ...,
    "reasoning": ...}`` exactly as ``json.dumps`` writes it (no spaces, UTF-8 kept; no
    ``reasoning`` without thoughts); the messages each step repeats in later samples (its
    assistant output, its screenshot) are encoded once. ``memory_blocks`` (by step index): the
    retrieval memory put before the current step's screenshot. ``memory_weight``: a memory
    step's ``weight`` (STAMP's n).
    """
    screens = record["screens"]
    steps = record["steps"]
    outputs: list[str] = []
    images: list[str] = []
    sources: list[str] = []
    lines_of_history: list[str] = []
    for step in steps:
        screen = screens[step["screen"]]
        reasoning, source = reasoning_of(record, step) if thought else ("", "")
        sources.append(source)
        output = assistant_output(step, screen["width"], screen["height"], thought, reasoning)
        outputs.append(_encoded({"role": "assistant", "content": output}))
        images.append(_encoded(image_of(screen["screenshot"])))
        lines_of_history.append(
            f"Step {len(lines_of_history) + 1}: "
            f"{_summary(step, screen['width'], screen['height'])}\n"
            f"Memory: {_memory(step['memory'])}"
        )
    goal = _text(record["task"]["goal"])
    result = []
    for t, step in enumerate(steps):
        if trainable_only and not step["trainable"]:
            continue
        first_full = max(0, t - k)
        prompt = USER_PROMPT.format(goal=goal, history="\n".join(lines_of_history[:first_full]))
        messages = [SYSTEM_MESSAGE]
        memory = _text((memory_blocks or {}).get(step["index"]) or "")
        for turn in range(first_full, t + 1):
            image = f"{memory}\n{IMAGE}" if memory and turn == t else IMAGE
            if turn == first_full:
                messages.append(_encoded({"role": "user", "content": f"{prompt}\n{image}"}))
            elif image != IMAGE:
                messages.append(_encoded({"role": "user", "content": image}))
            else:
                messages.append(IMAGE_TURN)
            messages.append(outputs[turn])
        required = bool(step["memory"].strip())
        extra = {"memory_required": required, "weight": memory_weight if required else 1.0}
        if thought:
            extra["reasoning"] = sources[t]
        line = (
            '{"messages":['
            + ",".join(messages)
            + '],"images":['
            + ",".join(images[first_full : t + 1])
            + "],"
            + _encoded(extra)[1:]
            + "\n"
        )
        result.append((step, line))
    return result


def _option(options: dict[str, Any], name: str, kind: type, default: Any, check=None) -> Any:
    value = options.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
        raise InvalidData(f"options.{name}: must be {kind.__name__}, got {value!r}")
    if check and not check(value):
        raise InvalidData(f"options.{name}: {value!r} is out of range")
    return value


KNOWN_OPTIONS = (
    "k",
    "max_side",
    "memory_ratio",
    "memory_weight",
    "parquet",
    "thought",
    "trainable_only",
    "memory_graph",
)


def check_options(options: dict[str, Any] | None) -> dict[str, Any]:
    options = dict(options or {})
    unknown = set(options) - set(KNOWN_OPTIONS)
    if unknown:
        raise InvalidData(
            f"options: unknown option {sorted(unknown)[0]!r} for {FORMAT} "
            f"(known: {', '.join(KNOWN_OPTIONS)})"
        )
    for name in ("memory_ratio", "memory_weight"):
        value = options.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            options[name] = float(value)
    return {
        "k": _option(options, "k", int, DEFAULT_K, lambda v: 0 <= v <= 100),
        "max_side": _option(options, "max_side", int, None, lambda v: 16 <= v <= 10000),
        "memory_ratio": _option(options, "memory_ratio", float, None, lambda v: 0 < v <= 100),
        "memory_weight": _option(options, "memory_weight", float, None, lambda v: 0 < v <= 1000),
        "thought": _option(options, "thought", bool, True),
        "trainable_only": _option(options, "trainable_only", bool, True),
        "parquet": _option(options, "parquet", bool, False),
        "memory_graph": check_memory_graph_option(options.get("memory_graph")),
    }


def critic_masked(record: dict[str, Any]) -> int:
    """How many of the record's steps a step critic rejected (``metadata["critic"]``)."""
    verdicts = ((record.get("metadata") or {}).get("critic") or {}).get("steps") or {}
    return sum(
        1 for v in verdicts.values() if isinstance(v, dict) and v.get("verdict") == "rejected"
    )


def _step_counts(trajectories: QuerySet[Trajectory], trainable_only: bool) -> tuple[int, int]:
    """(memory steps, other steps) that become samples."""
    steps = Step.objects.filter(trajectory__in=trajectories)
    if trainable_only:
        steps = steps.filter(trainable=True)
    memory = steps.exclude(memory__regex=r"^\s*$").count()
    return memory, steps.count() - memory


def _repeats(memory: int, other: int, ratio: float | None) -> int:
    """How many times each memory step's sample is written to reach the ratio."""
    if not ratio or not memory or not other:
        return 1
    return max(1, round(ratio * other / memory))


def balance_weight(memory: int, other: int, given: float | None, ratio: float | None) -> float:
    """A memory sample's weight, STAMP's n: the one given, else the other steps per memory
    step (memory steps weigh as much as the rest); 1 when ``memory_ratio`` repeats them."""
    if ratio:
        return 1.0
    if given is not None:
        return given
    if not memory or not other:
        return 1.0
    return round(max(1.0, other / memory), 3)


def dataset_info(split_names: list[str]) -> str:
    """LLaMA-Factory's dataset_info.json: one sharegpt dataset per split."""
    info = {
        f"waypoint_stamp_sft_{name}": {
            "file_name": f"{name}.jsonl",
            "formatting": "sharegpt",
            "columns": {"messages": "messages", "images": "images"},
            "tags": {
                "role_tag": "role",
                "content_tag": "content",
                "user_tag": "user",
                "assistant_tag": "assistant",
                "system_tag": "system",
            },
        }
        for name in split_names
    }
    return json.dumps(info, indent=2) + "\n"


def export_stamp_sft(
    trajectories: QuerySet[Trajectory],
    dest: Path,
    progress: Callable[[int, int], None] | None = None,
    *,
    options: dict[str, Any] | None = None,
    filters: dict[str, Any] | None = None,
    split: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the trajectories as STAMP SFT samples into the new folder ``dest``."""
    opts = check_options(options)
    division = Split.parse(split, "train")
    run = ExportRun(division, trajectories, progress)
    memory_steps, other_steps = _step_counts(trajectories, opts["trainable_only"])
    repeats = _repeats(memory_steps, other_steps, opts["memory_ratio"])
    weight = balance_weight(memory_steps, other_steps, opts["memory_weight"], opts["memory_ratio"])
    step_memory = _step_memory(trajectories, opts["memory_graph"])
    counts = {"trajectories": 0, "steps": 0, "samples": 0, "memory_samples": 0, "images": 0}
    reasoning: Counter = Counter()
    masked = 0
    with DatasetWriter(
        dest,
        FORMAT,
        SCHEMA_VERSION,
        splits=division.names,
        max_side=opts["max_side"],
        parquet=opts["parquet"],
    ) as writer:
        for name, record in run.records(iter_records(trajectories, lean=True)):
            pairs = sample_lines(
                record,
                writer.image,
                k=opts["k"],
                thought=opts["thought"],
                trainable_only=opts["trainable_only"],
                memory_blocks=step_memory.blocks(record) if step_memory else None,
                memory_weight=weight,
            )
            masked += critic_masked(record)
            for step, line in pairs:
                is_memory = bool(step["memory"].strip())
                if opts["thought"]:
                    reasoning[reasoning_of(record, step)[1].partition(":")[0]] += 1
                for _ in range(repeats if is_memory else 1):
                    writer.write_line(name, line)
                    run.per_split[name]["samples"] += 1
                    counts["samples"] += 1
                    counts["memory_samples"] += is_memory
                    run.count_apps(record, name)
            counts["trajectories"] += 1
            counts["steps"] += len(record["steps"])
        counts["images"] = writer.images_written
        counts["splits"] = writer.counts_per_split()
        counts["reasoning"] = dict(sorted(reasoning.items()))
        counts["critic_masked_steps"] = masked
        writer.write_text("dataset_info.json", dataset_info(division.names))
        head = {**run.head(opts, filters), "memory_repeats": repeats, "memory_weight": weight}
        card = _card(counts, run.per_split, run.apps, opts, filters, division, repeats, weight)
        writer.finish(head, counts, card)
    run.finished()
    return counts


def _step_memory(trajectories: QuerySet[Trajectory], version: int | None):
    """The memory blocks of the project's graph ``version`` (None: no memory blocks)."""
    if version is None:
        return None
    from graphs.exports import StepMemory

    return StepMemory(trajectories, version)


def _memory_line(opts) -> str:
    if not opts["memory_graph"]:
        return ""
    return (
        f"- Memory: each sample's current screenshot follows the retrieval memory block of the "
        f"project's memory graph v{opts['memory_graph']}, without the subgoals and states of "
        "trajectories of the sample's own task.\n"
    )


def _card(counts, per_split, apps, opts, filters, division, repeats, weight) -> str:
    names = division.names
    files = ", ".join(f'"{n}": "{n}.jsonl"' for n in names)
    return f"""# Waypoint export: stamp-sft

STAMP supervised fine-tuning samples (Stamp-GUI / GUI-Owl `mobile_use` output format): one
chat sample per {"trainable " if opts["trainable_only"] else ""}step, in the
`{{"messages": [...], "images": [...]}}` layout that ms-swift and LLaMA-Factory read.

- Trajectories: {counts["trajectories"]}, steps: {counts["steps"]}, samples: {counts["samples"]}
  (memory samples: {counts["memory_samples"]}, each written {repeats} time(s){
        f" for a memory ratio of {opts['memory_ratio']}:1" if opts["memory_ratio"] else ""
    }), images: {counts["images"]}.
- Selection: {describe_filter(filters)}.
- Split: by {division.by}, seed {division.seed}, ratios {dict(division.ratios)}.
- History: the last {opts["k"]} turns in full (screenshot and assistant output), older steps as
  `Step i: <action>` / `Memory: <memory or none>` lines; thought {
        "included" if opts["thought"] else "left out"
    };
  images {
        f"resized to at most {opts['max_side']} px on the longest side"
        if opts["max_side"]
        else "at full size"
    }.
- Coordinates: 0-1000 on both axes (the `mobile_use` screen is 1000x1000).
- STAMP's step fields beside `messages` and `images`: `memory_required` (b_t, the step writes
  memory), `weight` (w_bal: {weight:g} for a memory step, 1 otherwise{
        "; memory samples are repeated instead" if opts["memory_ratio"] else ""
    }){
        ", `reasoning` (where the `<think>` came from: model:NAME, recorded or template)"
        if opts["thought"]
        else ""
    }. Reasoning by source: {
        ", ".join(f"{k} {v}" for k, v in counts["reasoning"].items()) or "none"
    }; steps masked by the step critic (not trainable, no sample): {counts["critic_masked_steps"]}.
{_memory_line(opts)}
## Counts

{card_counts(per_split, apps, "samples")}

## Loading

```python
from datasets import load_dataset
ds = load_dataset("json", data_files={{{files}}})
```

Image paths are relative to this folder. For LLaMA-Factory, point `dataset_dir` at this folder
and use the datasets named in `dataset_info.json` (sharegpt formatting). For ms-swift, pass the
`.jsonl` files as `--dataset`.

`manifest.json` lists the sha256 of every file.
"""
