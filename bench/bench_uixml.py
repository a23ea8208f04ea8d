"""How fast UI dumps parse and hit-test: `python bench/bench_uixml.py` from the repo root."""

import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trajectories.uixml import parse_ui_xml  # noqa: E402

ZILLOW = Path(__file__).resolve().parents[1].parent / "shared" / "realdata" / "zillow-auto-mobile"


def main() -> None:
    for name in ("favoritesScreen", "mapScreen"):
        data = (ZILLOW / f"{name}.xml").read_bytes()
        tree = parse_ui_xml(data)
        runs = 200
        parse_ms = timeit.timeit(lambda d=data: parse_ui_xml(d), number=runs) / runs * 1000
        hit_us = timeit.timeit(lambda t=tree: t.element_at(540, 1340), number=runs) / runs * 1e6
        sig_ms = timeit.timeit(tree.structure_signature, number=runs) / runs * 1000
        print(
            f"{name}: {len(tree.elements)} nodes, {len(data)} bytes | parse {parse_ms:.2f} ms"
            f" | element_at {hit_us:.0f} us | structure_signature {sig_ms:.2f} ms"
        )


if __name__ == "__main__":
    main()
