"""Retrieval (paper §3.3): the node of a screen's page, its subgoals, and the memory block."""

from __future__ import annotations

import pytest

from fixtures.generate import DEFAULT_SIZE, notes_home, render, shop_product, shop_results
from graphs.index import load_graph
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
    assert block.startswith("Experience: subgoals tried before from screens like the current one.")
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


def subgoal(intent: str, success: str = "yes", effect: str = "", behaviour: str = "") -> dict:
    return {"intent": intent, "effect": effect, "behaviour": behaviour, "success": success}


def test_the_memory_block_tags_each_subgoal_with_its_outcome():
    hits = [
        {
            "node": 3,
            "similarity": 0.97,
            "size": 12,
            "screenshot": "ab",
            "subgoals": [
                subgoal("Search for the tent", "yes", "Results are shown", "type"),
                subgoal("Open the cart", "no"),
            ],
        }
    ]
    assert format_memory_block(hits) == (
        "Experience: subgoals tried before from screens like the current one.\n"
        "- [SUCCEEDED] Search for the tent | effect: Results are shown | behaviour: type "
        "(similarity 0.97)\n"
        "- [FAILED] Open the cart (similarity 0.97)\n"
        "Repeat what succeeded when it fits the task; avoid what failed."
    )
    assert format_memory_block([]) == (
        "Experience: no subgoals were tried before from a screen like this one."
    )


def test_the_memory_block_puts_what_fits_the_task_first_and_stays_short():
    hits = [
        {
            "node": 1,
            "similarity": 0.99,
            "size": 3,
            "screenshot": "",
            "subgoals": [subgoal(f"Open settings page {i}") for i in range(30)],
        },
        {
            "node": 2,
            "similarity": 0.60,
            "size": 3,
            "screenshot": "",
            "subgoals": [subgoal("Find the price of the Harbor Tent", "no")],
        },
    ]
    block = format_memory_block(hits, "Look up the price of the Harbor Tent in ShopMate")
    lines = block.splitlines()
    assert lines[0].endswith("most relevant to the task first.")
    assert lines[1] == "- [FAILED] Find the price of the Harbor Tent (similarity 0.60)"
    assert len(lines) == 1 + 8 + 2  # header, eight subgoals, what was left out, advice
    assert lines[-2] == "(23 more not shown)"
    long = [{**hits[0], "subgoals": [subgoal("x" * 400) for _ in range(8)]}]
    assert len(format_memory_block(long)) <= 1200 + 450  # stops before the line that passes
    assert not block.startswith("Memory:")


@pytest.mark.django_db
def test_a_screenshot_alone_finds_the_page_its_screen_with_xml_finds(
    project, alice, generated, django_capture_on_commit_callbacks
):
    """The XML is optional: without it a recorded screen is compared by its look alone
    (centred on the graph's typical look), so its own state scores near 1, not the ~0.4 a
    look-only vector got against whole vectors. Two plain lists that differ by a row and a
    title (the launcher's and Notes') look alike and can swap: the form says so."""
    from trajectories.blobs import read_blob
    from trajectories.models import Screen

    graph = build_now(project, alice, django_capture_on_commit_callbacks)
    data = load_graph(graph)
    screens = Screen.objects.filter(trajectory__project=project).select_related(
        "screenshot", "ui_xml"
    )[::3]
    agree = 0
    for screen in screens:
        png, xml = read_blob(screen.screenshot), read_blob(screen.ui_xml)
        with_xml = retrieve_for_screen(graph, png, xml, k=5)["nodes"][0]
        alone = retrieve_for_screen(graph, png, k=5)["nodes"]
        agree += majority_page(data, alone[0]["node"]) == majority_page(data, with_xml["node"])
        own = next(hit for hit in alone if hit["node"] == with_xml["node"])
        assert own["similarity"] >= 0.8, (screen.activity, own["similarity"])
    assert agree / len(screens) >= 0.8, f"{agree} of {len(screens)}"
