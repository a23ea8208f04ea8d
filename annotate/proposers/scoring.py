"""How close proposed labels are to the kept ones: boundary F1 and memory precision/recall."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Score:
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        total = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / total if total else 1.0

    def __add__(self, other: Score) -> Score:
        return Score(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)


def boundary_f1(proposed: Iterable[int], kept: Iterable[int], tolerance: int = 1) -> Score:
    """Match subgoal starts one to one within ``tolerance`` steps; the start at step 0 is
    not a boundary (every segmentation has it)."""
    left = sorted(s for s in set(kept) if s > 0)
    tp = 0
    unmatched = []
    for start in sorted(s for s in set(proposed) if s > 0):
        near = [k for k in left if abs(k - start) <= tolerance]
        if near:
            left.remove(min(near, key=lambda k: abs(k - start)))
            tp += 1
        else:
            unmatched.append(start)
    return Score(tp, len(unmatched), len(left))


def set_score(proposed: Iterable, kept: Iterable) -> Score:
    """Precision and recall of two sets of hashable items (e.g. (value, encode step))."""
    p, k = set(proposed), set(kept)
    return Score(len(p & k), len(p - k), len(k - p))
