"""The heuristic proposer scored on generated trajectories (whose phases the generator knows):
boundary F1 within one step, and memory targets against the generator's."""

from __future__ import annotations

import time
from dataclasses import dataclass

from .base import Proposer
from .scoring import Score, boundary_f1, set_score


@dataclass
class GeneratedScore:
    boundaries: Score
    memory: Score
    steps: int
    seconds: float


def score_on_generated(proposer: Proposer, seeds: range, steps: int = 35) -> GeneratedScore:
    from fixtures.generate import generate_record

    from . import episode_of_record

    boundaries, memory = Score(0, 0, 0), Score(0, 0, 0)
    total, seconds = 0, 0.0
    for seed in seeds:
        record = generate_record(seed, steps=steps + seed % 20)
        episode = episode_of_record(record)
        began = time.perf_counter()
        payload = proposer.propose(episode).payload
        seconds += time.perf_counter() - began
        total += len(episode.actions)
        boundaries += boundary_f1(
            [g["start"] for g in payload["subgoals"]], [g["start"] for g in record.subgoals]
        )
        memory += set_score(
            [m["value"] for m in payload["memory_targets"]],
            [m["value"] for m in record.memory_targets],
        )
    return GeneratedScore(boundaries, memory, total, seconds)
