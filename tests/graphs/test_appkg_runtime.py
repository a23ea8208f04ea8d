"""The app knowledge graph as UI-KOBE's runtime agent uses it: pages described by what their
screens share, instructions and effects on raw recordings, no self-loops for actions that touch
nothing, and a screen located on its node with the node's options."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from fixtures.generate import NOTES, SHOP, generate_dataset
from formats.catalogue import import_trajectories
from graphs.appkg import (
    AppGraphLocator,
    ScreenInput,
    StepInput,
    TrajectoryInput,
    build_app_graph,
    dump_app_graph,
    format_options,
    load_app_graph,
    node_options,
)
from graphs.appkg_inputs import app_trajectories, read_trajectory_inputs
from tests.conftest import REALDATA
from tests.graphs.test_appkg import DROIDBOT_APP
from trajectories.blobs import read_blob
from trajectories.models import Screen
from trajectories.uixml import parse_ui_xml
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db

RECORDINGS = Path(__file__).resolve().parents[1] / "annotate" / "reference_recordings"
FRESHCART = "com.waypoint.freshcart"
SAME_LOOK = np.ones(128, dtype=np.float32) / np.sqrt(128)  # reference recordings keep no images


def inputs(project, app):
    return list(read_trajectory_inputs(app_trajectories(project, app), app))


@pytest.fixture
def shop_project(project):
    generate_dataset(project, 4, steps=35, seed=5)
    return project


def reference_inputs() -> list[TrajectoryInput]:
    """The hand-made recordings of the virtual device, as recorded: no step has a summary."""
    found = []
    for path in sorted(RECORDINGS.glob("*.json")):
        record = json.loads(path.read_text())
        order = [s["screen"] for s in record["steps"]] + [record["final_screen"]]
        screens = []
        for i in order:
            s = record["screens"][i]
            xml = gzip.decompress((RECORDINGS / s["ui_xml"]).read_bytes()) if s["ui_xml"] else None
            screens.append(
                ScreenInput(f"{path.stem}-{i}", s["package"], s["activity"], xml, look=SAME_LOOK)
            )
        steps = [
            StepInput(n, s["action"]["type"], s["action"], s["target"], s["summary"])
            for n, s in enumerate(record["steps"])
        ]
        found.append(TrajectoryInput(path.stem, screens, steps))
    return found


# ---------------------------------------------------------------- descriptions


def test_a_page_is_described_by_what_its_screens_share_not_by_one_of_them(shop_project):
    graph = build_app_graph(SHOP, inputs(shop_project, SHOP))
    product = next(n for n in graph.nodes if n.activity.endswith("ProductActivity"))
    assert len({m.screen for m in product.members}) > 10  # many products, one page
    assert product.description.startswith("product page showing ")
    assert {"Price", "Reviews", "Seller"} <= set(product.labels)
    assert "title" in product.varies  # the product's name differs from visit to visit
    # No product's own name is in the description.
    shown = Screen.objects.filter(screenshot_id__in=[m.screen for m in product.members])
    titles = set()
    for screen in shown.select_related("ui_xml"):
        tree = parse_ui_xml(read_blob(screen.ui_xml))
        titles |= {el.text for el in tree.find(resource_id="title")}
    assert len(titles) > 10
    assert not [t for t in titles if t in product.description]
    search = [n for n in graph.nodes if n.activity.endswith("SearchActivity")]
    assert len({n.description for n in search}) == 2  # the search page, and its results


def test_raw_recordings_get_instructions_from_the_action_and_its_element():
    trajectories = reference_inputs()
    assert not any(s.summary for t in trajectories for s in t.steps)  # raw: nothing written
    graph = build_app_graph(FRESHCART, trajectories)
    assert graph.edges and all(e.instruction for e in graph.edges)
    said = {e.instruction for e in graph.edges}
    assert "Tap 'Kitchen'" in said  # a tab, by its label
    assert "Tap 'Orders'" in said
    notes = build_app_graph("com.waypoint.notes", trajectories)
    said = {e.instruction for e in notes.edges}
    assert "Type 'Kettle' into 'Title'" in said  # the focused field, by its hint
    assert "Tap 'Save'" in said and "Press Back" in said
    chatter = build_app_graph("com.waypoint.chatter", trajectories)
    assert "Swipe down on the thread scrollview" in {e.instruction for e in chatter.edges}
    # Every page of these apps has one activity: it names no page, the labels do.
    edit = next(n for n in notes.nodes if "Save" in n.labels)
    assert (
        edit.description == "page showing Navigate up, Save, Note; differs by note_body, note_title"
    )


def test_actions_that_touch_nothing_are_no_transition(shop_project):
    trajectories = inputs(shop_project, SHOP)
    off = sum(
        s.action_type in ("answer", "terminate", "wait")
        for t in trajectories
        for s in t.steps
        if t.screens[s.index].package == SHOP
    )
    assert off > 0
    graph = build_app_graph(SHOP, trajectories)
    assert not [e for e in graph.edges if e.action_type in ("answer", "terminate", "wait")]
    assert graph.stats["steps_off_screen"] == off
    assert graph.stats["steps"] == sum(len(e.occurrences) for e in graph.edges)


def test_a_version_1_export_still_loads_but_cannot_locate(shop_project):
    graph = build_app_graph(SHOP, inputs(shop_project, SHOP))
    old = json.loads(dump_app_graph(graph))
    old["version"] = 1
    for node in old["nodes"]:
        del node["labels"], node["varies"], node["exemplars"]
    for edge in old["edges"]:
        edge["target_observation"] = edge.pop("element")
    loaded = load_app_graph(old)
    assert loaded.edges[0].element == graph.edges[0].element
    with pytest.raises(InvalidData, match=r"a version-1 export\); build the graph again"):
        AppGraphLocator(loaded)
    with pytest.raises(InvalidData, match=r"version 3 is not supported \(expected 1 or 2\)"):
        load_app_graph({**old, "version": 3})


# ---------------------------------------------------------------- locate


def held_out(project, seeds):
    """Screens of trajectories generated after the graph was built (never its members)."""
    before = set(Screen.objects.values_list("pk", flat=True))
    generate_dataset(project, len(seeds) + 4, steps=35, seed=5)  # 4 already there
    return Screen.objects.exclude(pk__in=before).select_related("screenshot", "ui_xml")


def test_a_screen_is_located_on_its_page_with_its_options(shop_project):
    graph = load_app_graph(dump_app_graph(build_app_graph(SHOP, inputs(shop_project, SHOP))))
    locator = AppGraphLocator(graph)
    screens = [s for s in held_out(shop_project, [1, 2]) if s.package == SHOP]
    assert len(screens) > 20
    for screen in screens:
        where = locator.locate(read_blob(screen.screenshot), read_blob(screen.ui_xml))
        assert where.node is not None, where.reason
        # The node holds screens of the same page (activity) only.
        assert where.node.activity == screen.activity
    product = next(n for n in graph.nodes if n.activity.endswith("ProductActivity"))
    options = node_options(graph, product.id)
    back = next(o for o in options["transitions"] if o["action_type"] == "back")
    assert back["target"]["description"].startswith("search page showing Results")
    assert back["effect"] == f"opens the {back['target']['description']}"
    assert back["instruction"]
    results = next(n for n in graph.nodes if "Results" in n.labels)
    scroll = next(
        o for o in node_options(graph, results.id)["self_loops"] if o["action_type"] == "swipe"
    )
    assert scroll["fields"] and scroll["effect"].startswith("changes ")
    assert options["task_completion"]["actions"] == ["answer", "terminate"]
    assert "free_action" in options
    block = format_options(locator.locate(read_blob(screens[0].screenshot)), options)
    assert "Task completion" in block and "Free action" in block


def test_a_screen_of_another_app_or_page_is_not_placed(shop_project):
    graph = build_app_graph(SHOP, inputs(shop_project, SHOP))
    locator = AppGraphLocator(graph)
    notes = Screen.objects.filter(package=NOTES).select_related("screenshot", "ui_xml").first()
    where = locator.locate(read_blob(notes.screenshot), read_blob(notes.ui_xml))
    assert where.node is None and where.reason == f"the screen shows {NOTES}, not this app"
    # A page the graph has never seen (a login form, say).
    xml = (
        '<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="P" '
        'bounds="[0,0][540,1200]"><node class="android.widget.EditText" resource-id="P:id/user" '
        'package="P" bounds="[20,200][520,260]" /><node class="android.widget.Button" '
        'resource-id="P:id/login" text="Log in" package="P" bounds="[20,300][520,360]" />'
        "</node></hierarchy>"
    ).replace('"P', f'"{SHOP}')
    where = locator.locate(read_blob(notes.screenshot), xml)
    assert where.node is None
    assert where.reason.startswith("the screen is not in the graph: no node shares 60%")
    assert where.candidates and all(c["structure"] < 0.6 for c in where.candidates)
    assert format_options(where, node_options(graph, None)).startswith(
        "App graph guidance (UI-KOBE):\nCurrent page: not in the graph"
    )


def test_locate_names_what_is_wrong_with_its_input(shop_project):
    locator = AppGraphLocator(build_app_graph(SHOP, inputs(shop_project, SHOP)))
    with pytest.raises(InvalidData, match=r"^screenshot: "):
        locator.locate(b"not an image")
    png = read_blob(Screen.objects.select_related("screenshot").first().screenshot)
    with pytest.raises(InvalidData, match=r"^xml: not a UI dump \("):
        locator.locate(png, b"<hierarchy><node")


def test_the_droidbot_runs_pages_are_described_by_what_their_visits_share(project):
    import_trajectories(project, REALDATA / "droidbot", "droidbot")
    graph = build_app_graph(DROIDBOT_APP, inputs(project, DROIDBOT_APP))
    states = [n for n in graph.nodes if n.kind == "state"]
    main = max(states, key=lambda n: len(n.members))
    assert len(main.members) >= 5
    assert main.description == "page showing Select Image, Album"
    albums = [n for n in states if n.activity.endswith("AlbumActivity")]
    assert albums and all(n.description.startswith("album page showing ") for n in albums)
    # Counts ("0/9", "(181) All Image") change as photos are picked: content, not the page.
    assert not [n.description for n in states if any(c.isdigit() for c in n.description)]
    # Every edge has an instruction: the step's summary, else one from the action and element.
    assert all(e.instruction for e in graph.edges)


def test_a_screenshot_alone_is_placed_by_its_look(shop_project):
    graph = build_app_graph(SHOP, inputs(shop_project, SHOP))
    locator = AppGraphLocator(graph)
    for node in (n for n in graph.nodes if n.kind == "state"):
        screen = Screen.objects.filter(screenshot_id=node.reference).select_related("screenshot")
        where = locator.locate(read_blob(screen.first().screenshot))
        assert where.node is node and where.structure == 0.0 and where.look > 0.99
