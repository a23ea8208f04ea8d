"""The heuristic proposer on generated trajectories: `python bench/bench_proposer.py`.

Prints steps/s (proposing only; generating the trajectories is not counted), boundary
precision / recall / F1 within one step against the generator's phases, and the precision and
recall of the mined memory values against the generator's memory targets.

Targets (issue 11): >= 200 steps/s; boundary F1 >= 0.8. (Precision and recall of the memory
targets on the virtual apps, >= 0.9 each, are printed by
`pytest tests/devices/test_proposer_memory.py -s`: they need the virtual device.)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=200)
    parser.add_argument("--steps", type=int, default=35, help="shortest length (up to +19)")
    args = parser.parse_args()

    import django

    django.setup()
    from annotate.proposers import HeuristicProposer
    from annotate.proposers.evaluation import score_on_generated

    score = score_on_generated(HeuristicProposer(), range(args.trajectories), args.steps)
    b, m = score.boundaries, score.memory
    print(
        f"heuristic proposer: {args.trajectories} generated trajectories, {score.steps} steps "
        f"in {score.seconds:.2f} s = {score.steps / score.seconds:,.0f} steps/s (target >= 200)"
    )
    print(
        f"boundaries (within one step): P {b.precision:.3f} R {b.recall:.3f} F1 {b.f1:.3f} "
        f"(target F1 >= 0.8)"
    )
    print(f"memory values vs the generator's: P {m.precision:.3f} R {m.recall:.3f}")


if __name__ == "__main__":
    main()
