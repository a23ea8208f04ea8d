"""App knowledge graph build and graph drawing: `python bench/bench_graph_pages.py` from the
repo root. Prints figures; asserts nothing.

- build_app_graph on generated trajectories (screens decoded and parsed in the build, as the job
  does, with shared screenshots decoded once);
- the server-side force layout of a drawing of 100, 300 (the cap) and 1,000 nodes (1,000 is
  capped to 300, so its time is the cap's plus choosing the largest);
- the memory graph page (``GET /graphs/<id>/``, server time) for a synthetic graph of 100,000
  nodes (bench_graphs.py's), in a throwaway database: the file is loaded once (cached), then
  only the drawn nodes are read.
"""

import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_graphs  # noqa: E402 - sets up the throwaway database and storage
import django  # noqa: E402

django.setup()

from fixtures.generate import SHOP, generate_record  # noqa: E402
from graphs.appkg import (  # noqa: E402
    ScreenInput,
    StepInput,
    TrajectoryInput,
    build_app_graph,
)
from graphs.drawing import DrawEdge, DrawNode, draw  # noqa: E402
from trajectories.blobs import sha256_hex  # noqa: E402


def inputs(count: int, steps: int) -> list[TrajectoryInput]:
    out = []
    for seed in range(count):
        record = generate_record(seed, steps=steps)
        screens = [
            ScreenInput(
                sha256=sha256_hex(s.screenshot),
                package=s.package,
                activity=s.activity,
                ui_xml=s.ui_xml,
                screenshot=s.screenshot,
            )
            for s in record.screens
        ]
        steps_in = [
            StepInput(
                index=st.index,
                action_type=st.action.get("type", ""),
                action=st.action,
                target=st.target,
                summary=st.summary,
            )
            for st in record.steps
        ]
        out.append(TrajectoryInput(record.uid, screens, steps_in))
    return out


def main() -> None:
    for count, steps in ((20, 35), (100, 35)):
        trajectories = inputs(count, steps)
        began = time.perf_counter()
        graph = build_app_graph(SHOP, trajectories)
        took = time.perf_counter() - began
        print(
            f"app graph of {count * steps} steps: {took:.2f} s | {graph.stats['screens']} shop "
            f"screens -> {graph.stats['nodes']} states, {graph.stats['edges']} edges"
        )
    for n in (100, 300, 1000):
        nodes = [DrawNode(id=str(i), label=f"n{i}", size=1 + i % 9) for i in range(n)]
        edges = [
            DrawEdge(id=str(i), source=str(i % n), target=str((i * 7 + 3) % n), label="e")
            for i in range(2 * n)
        ]
        began = time.perf_counter()
        drawn = draw(nodes, edges)
        took = time.perf_counter() - began
        print(
            f"layout of {n} nodes, {2 * n} edges: {took * 1000:.0f} ms "
            f"({len(drawn.nodes)} drawn, {len(drawn.edges)} edges drawn)"
        )


def page_part(nodes: int = 100_000) -> None:
    from django.contrib.auth import get_user_model
    from django.core.files.base import ContentFile
    from django.core.management import call_command
    from django.test import Client

    from graphs.build import check_params
    from graphs.embedders import get_embedder
    from graphs.models import MemoryGraph
    from trajectories.services import do_create_project

    call_command("migrate", verbosity=0, interactive=False)
    owner = get_user_model().objects.create_user("bench", "bench@example.org", "bench-password")
    project = do_create_project("Graph pages bench", owner)
    embedder = get_embedder("structure")
    graph = MemoryGraph.objects.create(
        project=project, version=1, params=check_params({}), status="ready", node_count=nodes
    )
    graph.file.save("bench.npz", ContentFile(bench_graphs.big_graph(nodes, 1, embedder.dim, 8)))
    client = Client(HTTP_HOST="localhost")
    client.force_login(owner)
    times = []
    for _ in range(6):
        began = time.perf_counter()
        response = client.get(f"/graphs/{graph.pk}/")
        times.append(time.perf_counter() - began)
        assert response.status_code == 200, response.status_code
    print(
        f"memory graph page, {nodes:,} nodes: first {times[0] * 1000:.0f} ms (loads the file), "
        f"then median {statistics.median(times[1:]) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    try:
        main()
        page_part()
    finally:
        shutil.rmtree(bench_graphs.WORK, ignore_errors=True)
