"""Retrieval (paper §3.3): the node of a screen's page, its subgoals, and the memory block."""

from __future__ import annotations

import numpy as np
import pytest

from fixtures.generate import DEFAULT_SIZE, notes_home, render, shop_product, shop_results
from graphs.index import NodeIndex, load_graph
from graphs.retrieve import format_memory_block
from graphs.services import retrieve_for_screen
from tests.graphs.conftest import build_now, page_of
from trajectories.validation import InvalidData, InvalidRequest


def majority_page(graph_data, node: int) -> tuple[str, str]:
    pages = [page_of(member) for member in graph_data.members[node]]
    return max(set(pages), key=pages.count)


@pytest.mark.django_db
def test_a_screen_of_a_known_page_retrieves_that_pages_node(
    project, alice, generated, django_capture_on_commit_callbacks
):
    graph = build_now(project, alice, django_capture_on_commit_callbacks, {"k": 2})
    data = load_graph(graph)
    # Screens never recorded: a product and a search of names no trajectory used.
    for spec in (
        shop_product("Harbor Coffee Grinder", DEFAULT_SIZE),
        shop_results("Lamp", DEFAULT_SIZE, offset=2),
        notes_home((("Packing", "Fri"),), DEFAULT_SIZE),
    ):
        screen = render(spec)
        answer = retrieve_for_screen(graph, screen.png, screen.xml)
        assert answer["k"] == 2 and len(answer["nodes"]) == 2
        best = answer["nodes"][0]
        assert majority_page(data, best["node"]) == (spec.package, spec.activity)
        assert best["similarity"] >= 0.9 > answer["nodes"][1]["similarity"]
    product = render(shop_product("Harbor Coffee Grinder", DEFAULT_SIZE))
    answer = retrieve_for_screen(graph, product.png, product.xml, k=1)
    intents = [s["intent"] for s in answer["nodes"][0]["subgoals"]]
    assert intents, "the product page has outgoing subgoals"
    block = answer["memory_block"]
    assert block.startswith("Memory: subgoals tried before from screens like the current one.")
    for intent in intents:
        assert intent in block
    assert "[SUCCEEDED]" in block or "[OUTCOME UNCERTAIN]" in block


@pytest.mark.django_db
def test_screenshots_that_are_not_images_and_bad_k_get_clear_errors(
    project, alice, generated, django_capture_on_commit_callbacks
):
    graph = build_now(project, alice, django_capture_on_commit_callbacks)
    with pytest.raises(InvalidData, match="screenshot: not an image"):
        retrieve_for_screen(graph, b"<html>not a png</html>")
    with pytest.raises(InvalidData, match="screenshot: no image was sent"):
        retrieve_for_screen(graph, b"")
    png = render(shop_product("Acme Tent", DEFAULT_SIZE)).png
    with pytest.raises(InvalidData, match="screenshot: the image is truncated"):
        retrieve_for_screen(graph, png[: len(png) // 2])
    with pytest.raises(InvalidData, match="xml: not a UI dump"):
        retrieve_for_screen(graph, png, "<hierarchy><node")
    with pytest.raises(InvalidRequest, match="k: must be an integer between 1 and 100, got 0"):
        retrieve_for_screen(graph, png, k=0)
    # A screenshot alone (no XML) still finds the page, by its look.
    answer = retrieve_for_screen(graph, png, k=3)
    data = load_graph(graph)
    assert majority_page(data, answer["nodes"][0]["node"])[1].endswith("ProductActivity")


def test_the_memory_block_tags_each_subgoal_with_its_outcome():
    hits = [
        {
            "node": 3,
            "similarity": 0.97,
            "size": 12,
            "screenshot": "ab",
            "subgoals": [
                {
                    "intent": "Search for the tent",
                    "effect": "Results are shown",
                    "behaviour": "type",
                    "success": "yes",
                },
                {"intent": "Open the cart", "effect": "", "behaviour": "", "success": "no"},
            ],
        }
    ]
    assert format_memory_block(hits) == (
        "Memory: subgoals tried before from screens like the current one.\n"
        "State 1 (similarity 0.97):\n"
        "- [SUCCEEDED] Search for the tent | effect: Results are shown | behaviour: type\n"
        "- [FAILED] Open the cart\n"
        "Repeat what succeeded when it fits the task; avoid what failed."
    )
    assert format_memory_block([]) == (
        "Memory: no subgoals were tried before from a screen like this one."
    )


def test_the_index_returns_the_k_nearest_nodes_best_first():
    from graphs.build import MemoryGraphData

    rng = np.random.default_rng(0)
    sums = rng.normal(size=(1000, 16)).astype(np.float32)
    graph = MemoryGraphData(
        params={},
        embedder={},
        dim=16,
        text_dim=4,
        sums=sums,
        counts=np.ones(1000, np.int64),
        members=[[] for _ in range(1000)],
        edges=[],
        edge_vectors=np.zeros((0, 4), np.float32),
    )
    index = NodeIndex.of(graph)
    query = sums[417] / np.linalg.norm(sums[417])
    found = index.nearest(query, 5)
    means = sums / np.linalg.norm(sums, axis=1, keepdims=True)
    expected = np.argsort(-(means @ query))[:5].tolist()
    assert [node for node, _ in found] == expected and found[0][0] == 417
    assert len(index.nearest(query, 5000)) == 1000
