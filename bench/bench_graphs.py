"""The subgoal memory graph: `python bench/bench_graphs.py`.

Prints, with the default (structure) embedder:

1. build time from 35,000 generated steps (1,000 trajectories of 35 steps) through the build job
   (reading the trajectories, the cached boundary-screen embeddings, merging, storing the file),
   the boundary screens' embeddings already cached by a first build (whose time is printed too);
2. retrieval on a graph of 100,000 nodes: median and p95 server time of the search and the
   subgoal gathering, excluding the query's own embedding (timed separately), and the time to
   load that graph's file;
3. purity and completeness of the node clustering against the true page (app + activity) of
   each member screen of the 35,000-step graph.

Targets (issue 13): build <= 60 s, retrieval median <= 20 ms, purity and completeness >= 0.95.
Uses a throwaway SQLite database and blob folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
WORK = Path(tempfile.mkdtemp(prefix="waypoint-bench-graphs-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ["DATABASE_URL"] = f"sqlite:///{WORK / 'bench.sqlite3'}"
os.environ["MEDIA_ROOT"] = str(WORK / "blobs")
os.environ["WAYPOINT_VAR_DIR"] = str(WORK / "var")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"


def build(project, **params):
    from graphs.services import do_build_memory_graph
    from trajectories.jobs import run_job

    began = time.perf_counter()
    graph = do_build_memory_graph(project, None, params, queue=False)
    run_job(graph.job_id)
    graph.refresh_from_db()
    if graph.status != "ready":
        raise SystemExit(f"build failed: {graph.message}")
    return graph, time.perf_counter() - began


def purity_and_completeness(graph) -> tuple[float, float, int]:
    from graphs.index import load_graph
    from trajectories.models import Step, Trajectory

    data = load_graph(graph)
    trajectories = {str(t.uid): t for t in Trajectory.objects.select_related("final_screen")}
    pages_of_steps = {
        (str(uid), index): (package, activity)
        for uid, index, package, activity in Step.objects.values_list(
            "trajectory__uid", "index", "screen__package", "screen__activity"
        )
    }
    nodes: dict[int, Counter] = defaultdict(Counter)
    pages: dict[tuple[str, str], Counter] = defaultdict(Counter)
    total = 0
    for node, members in enumerate(data.members):
        for member in members:
            key = (member["trajectory"], member["step"])
            page = pages_of_steps.get(key)
            if page is None:
                final = trajectories[member["trajectory"]].final_screen
                page = (final.package, final.activity)
            nodes[node][page] += 1
            pages[page][node] += 1
            total += 1
    purity = sum(c.most_common(1)[0][1] for c in nodes.values()) / total
    completeness = sum(c.most_common(1)[0][1] for c in pages.values()) / total
    return purity, completeness, total


def big_graph(nodes: int, edges_per_node: int, dim: int, text_dim: int):
    """A synthetic graph of ``nodes`` nodes and its stored file's bytes."""
    import numpy as np

    from graphs.build import MemoryGraphData, check_params
    from graphs.storage import to_npz_bytes

    rng = np.random.default_rng(0)
    sums = rng.normal(size=(nodes, dim)).astype(np.float32)
    edges = []
    for node in range(nodes):
        for j in range(edges_per_node):
            edges.append(
                {
                    "source": node,
                    "target": int(rng.integers(nodes)),
                    "intent": f"subgoal {j} of state {node}",
                    "effect": "",
                    "behaviour": "click",
                    "success": "yes",
                    "task": "t",
                    "trajectory": "00000000-0000-0000-0000-000000000000",
                    "start": 0,
                    "end": 1,
                    "duplicates": [],
                }
            )
    data = MemoryGraphData(
        params=check_params({}),
        embedder={"name": "structure"},
        dim=dim,
        text_dim=text_dim,
        sums=sums,
        counts=np.ones(nodes, dtype=np.int64),
        members=[
            [{"trajectory": "00000000-0000-0000-0000-000000000000", "step": i, "screenshot": "x"}]
            for i in range(nodes)
        ],
        edges=edges,
        edge_vectors=rng.normal(size=(len(edges), text_dim)).astype(np.float32),
    )
    return to_npz_bytes(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=35)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--retrieval-only", action="store_true", help="skip the build (parts 1 and 3)"
    )
    args = parser.parse_args()

    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from trajectories.services import do_create_project

    call_command("migrate", verbosity=0, interactive=False)
    owner = get_user_model().objects.create_user("bench", "bench@example.org", "bench-password")
    project = do_create_project("Graphs bench", owner)
    if not args.retrieval_only:
        build_part(project, args)
    retrieval_part(project, args)


def build_part(project, args) -> None:
    from fixtures.generate import generate_dataset
    from graphs.models import ScreenEmbedding
    from trajectories.models import Step, Subgoal

    began = time.perf_counter()
    generate_dataset(project, args.trajectories, steps=args.steps, seed=0)
    steps, subgoals = Step.objects.count(), Subgoal.objects.count()
    print(
        f"dataset: {args.trajectories} trajectories, {steps:,} steps, {subgoals:,} subgoals "
        f"(generated and imported in {time.perf_counter() - began:.0f} s)"
    )

    graph, cold = build(project)
    print(
        f"first build, embedding {ScreenEmbedding.objects.count():,} boundary screens: {cold:.1f} s"
    )
    graph, warm = build(project)
    print(
        f"build from {steps:,} steps / {subgoals:,} subgoals, embeddings cached: {warm:.1f} s "
        f"-> {graph.node_count} nodes, {graph.edge_count} edges (target <= 60 s)"
    )
    purity, completeness, members = purity_and_completeness(graph)
    print(
        f"clustering of {members:,} boundary screens against their page: purity {purity:.4f}, "
        f"completeness {completeness:.4f} (target >= 0.95)"
    )
    for name, params in (("flat", {"structure": "flat"}), ("task", {"granularity": "task"})):
        ablation, seconds = build(project, **params)
        print(
            f"  {name}: {seconds:.1f} s -> {ablation.node_count} nodes, {ablation.edge_count} edges"
        )


def retrieval_part(project, args) -> None:
    from django.core.files.base import ContentFile

    from fixtures.generate import DEFAULT_SIZE, notes_edit, render, shop_product, shop_results
    from graphs.build import check_params
    from graphs.embedders import get_embedder
    from graphs.index import index_of
    from graphs.models import MemoryGraph
    from graphs.retrieve import format_memory_block, retrieve

    embedder = get_embedder("structure")
    file = big_graph(args.nodes, 1, embedder.dim, embedder.text_dim)  # a subgoal a node
    big = MemoryGraph.objects.create(
        project=project, version=99, params=check_params({}), status="ready", node_count=args.nodes
    )
    big.file.save("bench-100k.npz", ContentFile(file))
    began = time.perf_counter()
    index = index_of(big)
    print(
        f"graph of {args.nodes:,} nodes: file {len(file) / 1e6:.0f} MB, "
        f"loaded in {time.perf_counter() - began:.2f} s"
    )
    screens = [
        render(spec)
        for spec in (
            shop_product("Acme Tent", DEFAULT_SIZE),
            shop_results("Lamp", DEFAULT_SIZE),
            notes_edit("Tent $12.00", (), DEFAULT_SIZE),
        )
    ]
    embed_ms, search_ms = [], []
    for i in range(args.queries):
        screen = screens[i % len(screens)]
        t0 = time.perf_counter()
        query = embedder.embed_screens([(screen.png, screen.xml)])[0]
        t1 = time.perf_counter()
        hits = retrieve(index, query, 3)
        format_memory_block(hits)
        t2 = time.perf_counter()
        embed_ms.append(1000 * (t1 - t0))
        search_ms.append(1000 * (t2 - t1))
    search_ms.sort()
    print(
        f"retrieval on {args.nodes:,} nodes, k=3, {args.queries} queries: median "
        f"{statistics.median(search_ms):.2f} ms, p95 {search_ms[int(0.95 * len(search_ms))]:.2f} "
        f"ms (target median <= 20 ms); the query's embedding: median "
        f"{statistics.median(embed_ms):.1f} ms"
    )


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
