"""The app knowledge graph (UI-KOBE) built from recorded trajectories: states, transitions,
self-loops with schema deltas, export and import."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import numpy as np
import pytest

from fixtures.generate import NOTES, SHOP, generate_dataset
from formats.catalogue import import_trajectories
from graphs.appkg import (
    AppGraphParams,
    ScreenInput,
    StepInput,
    TrajectoryInput,
    build_app_graph,
    dump_app_graph,
    load_app_graph,
)
from graphs.appkg_inputs import app_trajectories, read_trajectory_inputs
from tests.conftest import REALDATA
from trajectories.models import Screen
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db

DROIDBOT_APP = "com.yanzhenjie.album.sample"


def build(project, app, **params):
    inputs = read_trajectory_inputs(app_trajectories(project, app), app)
    return build_app_graph(app, inputs, AppGraphParams(**params))


def page_of(project) -> dict[str, str]:
    """The true page of each generated screen: its activity (a screen's sha256 names it)."""
    return {s.screenshot_id: s.activity for s in Screen.objects.filter(trajectory__project=project)}


@pytest.fixture
def shop_project(project):
    generate_dataset(project, 4, steps=35, seed=5)
    return project


def test_screens_of_one_page_merge_into_one_state(shop_project):
    graph = build(shop_project, SHOP)
    pages = page_of(shop_project)
    states = [n for n in graph.nodes if n.kind == "state"]
    # Purity: every state holds screens of one page only, though their contents differ
    # (different products, queries, scroll positions).
    for node in states:
        assert len({pages[m.screen] for m in node.members}) == 1, node.description
    product = next(n for n in states if n.activity.endswith("ProductActivity"))
    assert len({m.screen for m in product.members}) > 1  # different products, one state
    # Completeness: a page is one state, except the search page before and after a search
    # (UI-KOBE's "search page" and "search result page").
    nodes_of_page = defaultdict(set)
    for node in states:
        for m in node.members:
            nodes_of_page[pages[m.screen]].add(node.id)
    assert {page.rsplit(".", 1)[1]: len(ids) for page, ids in nodes_of_page.items()} == {
        "HomeActivity": 1,
        "SearchActivity": 2,
        "ProductActivity": 1,
    }
    assert graph.stats["nodes"] == 4


def test_transitions_carry_action_element_instruction_and_effect(shop_project):
    graph = build(shop_project, SHOP)
    home = next(n for n in graph.nodes if n.activity.endswith("HomeActivity"))
    tap = next(e for e in graph.edges if e.source == home.id and e.action_type == "click")
    assert tap.instruction == "Tap the 'Search products' field"
    assert tap.element["resource_id"] == f"{SHOP}:id/input"
    assert tap.element["class"] == "android.widget.EditText"
    assert len(tap.element["bounds"]) == 4
    # The target observation is what the tap did: it opened the search page.
    search = graph.node(tap.target)
    assert tap.target_observation["node"] == search.id
    assert tap.target_observation["effect"] == f"opens the {search.description}"
    assert "Filter" in tap.target_observation["appeared"]
    assert not tap.self_loop and tap.schema_delta is None
    assert len(tap.occurrences) == 4  # one per trajectory, merged into one edge
    # Leaving the app for the notes app ends at an external node named after it.
    leave = next(e for e in graph.edges if e.action_type == "open_app")
    assert graph.node(leave.target).kind == "external"
    assert graph.node(leave.target).package == NOTES


def test_self_loops_record_which_fields_changed(shop_project):
    graph = build(shop_project, SHOP)
    loops = [e for e in graph.edges if e.self_loop]
    assert loops and all(e.source == e.target and e.schema_delta is not None for e in loops)
    scroll = next(e for e in loops if e.action_type == "swipe")
    changed = {(c["resource_id"], c["field"]) for c in scroll.schema_delta["changes"]}
    assert (f"{SHOP}:id/name", "text") in changed  # other rows scrolled into view
    typed = next(e for e in loops if e.action_type == "type")
    field = [c for c in typed.schema_delta["changes"] if c["resource_id"] == f"{SHOP}:id/input"]
    assert field[0]["field"] == "text"
    assert field[0]["after"] == typed.action["text"]
    assert "input.text" in typed.schema_delta["fields"]
    assert typed.target_observation["effect"].startswith(
        f"changes input text {field[0]['before']!r} → {typed.action['text']!r}"
    )


def test_each_app_has_its_own_graph(shop_project):
    notes = build(shop_project, NOTES)
    assert {n.package for n in notes.nodes if n.kind == "state"} == {NOTES}
    assert Counter(n.activity.rsplit(".", 1)[1] for n in notes.nodes) == {
        "ListActivity": 1,
        "EditActivity": 1,
    }


def test_export_import_export_gives_the_same_bytes(shop_project):
    document = dump_app_graph(build(shop_project, SHOP))
    again = dump_app_graph(load_app_graph(document))
    assert again == document
    data = json.loads(document)
    assert data["format"] == "waypoint-app-graph" and data["app"] == SHOP
    member = data["nodes"][0]["members"][0]
    assert set(member) == {"screen", "trajectory", "step"}
    assert len(member["screen"]) == 64
    assert "id" not in json.dumps(data["params"])


def test_real_droidbot_run(project):
    import_trajectories(project, REALDATA / "droidbot", "droidbot")
    graph = build(project, DROIDBOT_APP)
    states = [n for n in graph.nodes if n.kind == "state"]
    # 27 screens of the album app, visited again and again: far fewer states than screens.
    assert graph.stats["screens"] > 2 * len(states)
    assert all(n.members for n in states)
    # Several visits of the main page merge into one state.
    assert max(len(n.members) for n in states) >= 5
    assert graph.stats["steps"] == sum(len(e.occurrences) for e in graph.edges)
    for edge in graph.edges:
        if edge.self_loop:
            assert edge.schema_delta is not None and edge.schema_delta["compared"]
    # Ticking a photo's checkbox keeps the page and changes the box: a self-loop saying so.
    tick = next(e for e in graph.edges if e.element["resource_id"].endswith("check"))
    assert tick.self_loop
    assert any(c["field"] == "checked" for c in tick.schema_delta["changes"])
    assert "cb_album_check.checked" in tick.schema_delta["fields"]
    assert "cb_album_check checked False → True" in tick.target_observation["effect"]
    assert load_app_graph(dump_app_graph(graph)).to_dict() == graph.to_dict()


# ---------------------------------------------------------------- bad input


def test_it_refuses_parameters_out_of_range():
    with pytest.raises(InvalidData, match=r"params.look_threshold: must be between 0 and 1, got 2"):
        AppGraphParams.from_mapping({"look_threshold": 2})
    with pytest.raises(InvalidData, match=r"params: unknown parameter 'tau'"):
        AppGraphParams.from_mapping({"tau": 0.9})
    with pytest.raises(InvalidData, match=r"params.use_activity: must be true or false"):
        AppGraphParams.from_mapping({"use_activity": "yes"})


def test_it_says_when_no_screen_shows_the_app(shop_project):
    with pytest.raises(InvalidData, match=r"app com.example.none: no screen of this app"):
        build(shop_project, "com.example.none")


def test_a_screenshot_that_is_not_an_image_is_named():
    screens = [ScreenInput(sha256="ab" * 32, package="p", screenshot=b"not a png")]
    trajectory = TrajectoryInput(key="t1", screens=screens, steps=[])
    with pytest.raises(InvalidData, match=r"trajectory t1 screen 0 screenshot abababababab.*"):
        build_app_graph("p", [trajectory])


def test_it_names_the_bad_place_of_an_import(shop_project):
    data = json.loads(dump_app_graph(build(shop_project, SHOP)))
    with pytest.raises(InvalidData, match=r"app graph: not JSON"):
        load_app_graph(b"{nodes")
    with pytest.raises(InvalidData, match=r"format must be 'waypoint-app-graph'"):
        load_app_graph({**data, "format": "memory-graph"})
    data["edges"][0]["target"] = "n999"
    with pytest.raises(InvalidData, match=r"edges\[0\].target: no node 'n999' in the graph"):
        load_app_graph(data)
    data["edges"][0]["target"] = data["edges"][0]["source"]
    with pytest.raises(InvalidData, match=r"edges\[0\].self_loop: must be true"):
        load_app_graph(data)
    del data["nodes"][1]["members"]
    with pytest.raises(InvalidData, match=r"nodes\[1\]: missing field 'members'"):
        load_app_graph(data)


def test_steps_without_a_next_screen_are_counted_not_guessed():
    look = np.ones(288, dtype=np.float32) / np.sqrt(288)
    screens = [ScreenInput(sha256="a" * 64, package="p", look=look)]
    steps = [StepInput(index=0, action_type="back", action={})]
    graph = build_app_graph("p", [TrajectoryInput("t", screens, steps)])
    assert graph.edges == [] and graph.stats["steps_without_next_screen"] == 1
