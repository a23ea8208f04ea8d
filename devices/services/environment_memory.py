"""Memory labels from the environment: the virtual device knows its memory variables and which
screen showed each (``Screen.visible_memory``), so a recording of one of its tasks is labelled
without an annotator.

For each variable the task needs (its ``memory_items``), the encode step is the first step whose
screen shows it, the value is the variable's value, and the retrieve steps are the later steps
that type or answer it. Each becomes a memory target (evidence ``source: environment``) and the
encode step's memory says it, through the edit protocol (one undoable edit per part, audit kind
``labels.memory_from_environment``). A person's label always wins: a key they already have,
or a step memory they wrote, is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trajectories import events
from trajectories.grading import number_of
from trajectories.labels.parts import memory_target_row
from trajectories.labels.protocol import edit
from trajectories.models import ActionType, MemoryTarget, Screen, Step, Trajectory

ENVIRONMENT = "environment"


@dataclass
class Found:
    key: str
    value: str
    description: str
    encode_step: int
    screen: int  # the encode step's screen, by its place in the trajectory
    bounds: list[int]
    retrieve_steps: list[int] = field(default_factory=list)

    @property
    def memory(self) -> str:
        return f"{self.description or self.key}: {self.value}"


def _uses(text: str, value: str) -> bool:
    """Whether typed or answered ``text`` carries ``value`` (a number in any format counts)."""
    if value.strip() and value.strip().lower() in text.lower():
        return True
    number = number_of(value)
    return number is not None and number_of(text) == number


def find_memory(trajectory: Trajectory) -> list[Found]:
    """Every variable of the trajectory's task that one of its screens showed."""
    wanted = {
        str(item["key"]): item
        for item in trajectory.task.memory_items
        if isinstance(item, dict) and item.get("key")
    }
    if not wanted:
        return []
    screens = list(
        Screen.objects.filter(trajectory=trajectory)
        .order_by("pk")
        .values_list("pk", "visible_memory")
    )
    place = {pk: i for i, (pk, _) in enumerate(screens)}
    shown = dict(screens)
    steps = list(
        Step.objects.filter(trajectory=trajectory)
        .order_by("index")
        .values_list("index", "screen_id", "action_type", "action")
    )
    found: dict[str, Found] = {}
    for index, screen_id, action_type, action in steps:
        for variable in shown.get(screen_id) or []:
            ref = variable.get("ref")
            if ref in wanted and ref not in found:
                found[ref] = Found(
                    key=ref,
                    value=str(variable.get("value", "")),
                    description=str(wanted[ref].get("description") or ""),
                    encode_step=index,
                    screen=place[screen_id],
                    bounds=list(variable.get("bounds") or []),
                )
        if action_type in (ActionType.TYPE, ActionType.ANSWER):
            text = str((action or {}).get("text", ""))
            for item in found.values():
                if index > item.encode_step and _uses(text, item.value):
                    item.retrieve_steps.append(index)
    return list(found.values())


def do_label_memory_from_environment(
    trajectory: Trajectory, actor=None, *, step_memory: bool = True
) -> list[Found]:
    """Label the memory the environment knows; what a person labelled stays. The new targets,
    or none when there was nothing to add. ``step_memory`` off: the memory targets only."""
    found = find_memory(trajectory)
    taken = set(MemoryTarget.objects.filter(trajectory=trajectory).values_list("key", flat=True))
    new = [f for f in found if f.key not in taken]
    if new:

        def add(locked: Trajectory) -> None:
            for f in new:
                evidence = {"bounds": f.bounds, "source": ENVIRONMENT, "screen": f.screen}
                row = {
                    "key": f.key,
                    "value": f.value,
                    "encode_step": f.encode_step,
                    "retrieve_steps": f.retrieve_steps,
                    "evidence": evidence,
                }
                memory_target_row(locked, row).save()

        edit(
            trajectory,
            actor,
            trajectory.version,
            events.MEMORY_FROM_ENVIRONMENT,
            "memory_targets",
            add,
            object_type="MemoryTarget",
        )
    by_step: dict[int, list[str]] = {}
    for f in found if step_memory else []:
        by_step.setdefault(f.encode_step, []).append(f.memory)
    for index, lines in sorted(by_step.items()):
        step = Step.objects.get(trajectory=trajectory, index=index)
        if step.memory.strip():
            continue  # a person's (or an earlier) memory stays

        def write(locked: Trajectory, index: int = index, text: str = "; ".join(lines)) -> None:
            Step.objects.filter(trajectory=locked, index=index).update(memory=text)

        edit(
            trajectory,
            actor,
            trajectory.version,
            events.MEMORY_FROM_ENVIRONMENT,
            f"step:{index}",
            write,
            object_type="Step",
        )
    return new


def memory_items(refs: list[str], variables: list[dict[str, Any]]) -> list[dict[str, str]]:
    """A virtual task's memory items: its variables with what the device says of them."""
    known = {v.get("ref"): v for v in variables}
    return [
        {
            "key": ref,
            "description": str(known.get(ref, {}).get("description", "")),
            "where": str(known.get(ref, {}).get("where", "")) or "virtual device",
        }
        for ref in refs
    ]
