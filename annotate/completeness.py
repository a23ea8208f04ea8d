"""What a trajectory's labels still lack before they can be submitted for review.

Each problem names the step to jump to, so the workspace can link to it. Works on the plain
label dicts of :mod:`trajectories.labels.parts`, so the page, the API and ``do_submit`` share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    kind: str  # uncovered | subgoal_text | subgoal_success | link | memory_target
    message: str
    step: int | None = None


def uncovered_runs(step_count: int, ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The maximal runs ``(first, last)`` of steps that no subgoal covers."""
    covered = [False] * step_count
    for start, end in ranges:
        for i in range(max(0, start), min(end, step_count - 1) + 1):
            covered[i] = True
    runs, first = [], None
    for i, is_covered in enumerate([*covered, True]):
        if not is_covered and first is None:
            first = i
        elif is_covered and first is not None:
            runs.append((first, i - 1))
            first = None
    return runs


def problems_of(
    step_count: int,
    subgoals: list[Mapping[str, Any]],
    memory_targets: list[Mapping[str, Any]],
    anchors: list[Mapping[str, Any]],
    links: list[Mapping[str, Any]],
) -> list[Problem]:
    problems: list[Problem] = []
    for first, last in uncovered_runs(step_count, ((g["start"], g["end"]) for g in subgoals)):
        steps = f"step {first}" if first == last else f"steps {first}–{last}"
        problems.append(Problem("uncovered", f"{steps} not in any subgoal", first))
    for g in subgoals:
        name = f"subgoal {g['start']}–{g['end']}"
        if not g["text"].strip():
            problems.append(Problem("subgoal_text", f"{name} has no text", g["start"]))
        if not g["success"]:
            problems.append(Problem("subgoal_success", f"{name} has no success label", g["start"]))
    steps_of_anchor = {a["key"]: a["step"] for a in anchors}
    for link in links:
        ends = [steps_of_anchor.get(link["source"]), steps_of_anchor.get(link["target"])]
        if any(s is None or not 0 <= s < step_count for s in ends):
            problems.append(
                Problem(
                    "link",
                    f"link {link['source']} → {link['target']} leaves the trajectory",
                    next((s for s in ends if s is not None and s < step_count), None),
                )
            )
    for m in memory_targets:
        encode = m["encode_step"]
        late = [s for s in m["retrieve_steps"] if s <= encode or s >= step_count]
        if encode >= step_count or late:
            problems.append(
                Problem(
                    "memory_target",
                    f"memory target {m['key']}: retrieve steps {late} are not after "
                    f"its encode step {encode}"
                    if late
                    else f"memory target {m['key']}: encode step {encode} does not exist",
                    min(encode, step_count - 1),
                )
            )
    return problems
