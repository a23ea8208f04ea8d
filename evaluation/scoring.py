"""Scoring an agent's predictions against a benchmark export, with the papers' metrics.

- AMS and TCR with AndroTMem's rules (its released scorer gives the same figures on the same
  files; see :mod:`.metrics`);
- M-Acc (STAMP): the predicted memory against the memory targets of each encode step;
- task success: the predicted answer against the gold answer with its grading rule;
all broken down by intent, by length bucket of 10 steps and by app.

Predictions are read in AndroTMem's layout or as GUI-Owl raw output (:mod:`.predictions`);
malformed lines are counted and reported, never fatal.
"""

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from .benchmark import load_benchmark
from .metrics import evaluate
from .predictions import read_predictions


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cycle collector paused: records read from JSON hold no reference cycles, and its
    passes over the growing heap of them took a quarter of the evaluator's time. Memory is
    freed by reference counting all the same."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def evaluate_files(benchmark, predictions, split: str | None = None, judge=None) -> dict:
    """Score a predictions file against a benchmark (export folder, .zip or .jsonl)."""
    with no_cycle_collection():
        tasks = load_benchmark(benchmark, split)
        preds, malformed = read_predictions(predictions, tasks)
        return evaluate(tasks, preds, malformed, judge)


__all__ = ["evaluate", "evaluate_files", "load_benchmark", "read_predictions"]
