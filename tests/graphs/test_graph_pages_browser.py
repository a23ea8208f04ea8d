"""The graph pages in Chromium: build an app graph, click a node and an edge, at 1440×900 and
1920×1080, with nothing overflowing."""

from __future__ import annotations

import pytest

from fixtures.generate import SHOP, generate_dataset, generate_record
from graphs.appkg_jobs import do_start_app_graph
from graphs.services import do_build_memory_graph
from tests.annotate.test_workspace_browser import page_as
from tests.conftest import shot
from trajectories.blobs import read_blob
from trajectories.jobs import run_job
from trajectories.models import Screen
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db(transaction=True)

SIZES = [(1440, 900), (1920, 1080)]


def no_overflow(page) -> None:
    """Nothing sticks out of the window sideways."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"page is {width}px wide"


@pytest.fixture
def app_graph(project, bob):
    generate_dataset(project, 3, steps=30, seed=4)
    graph = do_start_app_graph(project, SHOP, bob)
    run_job(graph.job_id)
    graph.refresh_from_db()
    assert graph.status == "ready"
    return graph


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_app_graph_click_a_node_then_an_edge(browser, live_server, bob, app_graph, size):
    page = page_as(browser, live_server, bob, size)
    page.goto(f"{live_server.url}/projects/{app_graph.project_id}/graphs/")
    page.click(".graph-versions a:text-is('View')")
    page.wait_for_selector("#graph-svg .node")
    assert page.locator("#graph-svg .node").count() == app_graph.node_count
    page.wait_for_load_state("networkidle")  # the thumbnails
    shot(page, f"app-graph-{size[0]}")
    no_overflow(page)
    # The search page, drawn with its member count, opens its panel.
    search = page.locator('#graph-svg .node[aria-label^="search page"]').first
    search.click()
    page.wait_for_selector("#graph-panel [data-panel-node] .member-grid img")
    assert "Outgoing transitions" in page.inner_text("#graph-panel")
    assert page.locator("#graph-svg .node.selected").count() == 1
    shot(page, f"app-graph-node-{size[0]}")
    no_overflow(page)
    # A self-loop listed in the panel opens the edge with its schema delta and origins.
    scrolls = page.locator("#graph-panel .edge-list li", has_text="Scroll the list down")
    scrolls.filter(has_text="changed").first.locator("[data-open-edge]").click()
    page.wait_for_selector("#graph-panel [data-panel-edge] table.delta")
    assert "Schema delta" in page.inner_text("#graph-panel")
    # The rows that scrolled into view: each row's name text changed.
    changed = page.locator(f'table.delta td[title^="{SHOP}:id/name"]')
    assert changed.count() >= 1
    assert changed.first.inner_text() == "name"
    assert page.locator("#graph-panel .origin-list a").count() >= 1
    shot(page, f"app-graph-edge-{size[0]}")
    # Clicking an arrow in the drawing opens its edge too.
    page.locator("#graph-svg .kind-transition .edge-hit").first.click(force=True)
    page.wait_for_selector("#graph-panel [data-panel-edge]")
    assert page.locator("#graph-svg .edge-group.selected").count() == 1
    # Self-loops can be hidden.
    page.uncheck("input[name=kind][value=self]")
    assert page.locator("#graph-svg .edge-group.kind-self:not(.filtered)").count() == 0
    no_overflow(page)
    assert page.errors == []


def test_graphs_page_builds_an_app_graph(browser, live_server, bob, project, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the job runs when the request commits
    generate_dataset(project, 2, steps=20, seed=8)
    page = page_as(browser, live_server, bob, SIZES[0])
    page.goto(f"{live_server.url}/projects/{project.pk}/trajectories/")
    page.click("nav >> text=Graphs")
    page.select_option("#id_app-app", SHOP)
    page.click("text=Build app graph")
    page.wait_for_selector(".graph-versions td:has-text('v1')")
    assert "Ready" in page.inner_text(".graph-versions tbody")
    page.click(".graph-versions a:text-is('View')")
    page.wait_for_selector("#graph-svg .node")
    shot(page, "graphs-page-1440")
    no_overflow(page)
    assert page.errors == []


@pytest.fixture
def memory_graph(project, bob):
    for seed in range(4):
        do_import_trajectory(project, generate_record(seed, steps=20))
    graph = do_build_memory_graph(project, bob, {"k": 2}, queue=False)
    run_job(graph.job_id)
    graph.refresh_from_db()
    assert graph.status == "ready"
    return graph


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_memory_graph_click_a_node_an_edge_and_retrieve(
    browser, live_server, bob, memory_graph, size, tmp_path
):
    page = page_as(browser, live_server, bob, size)
    page.goto(f"{live_server.url}/projects/{memory_graph.project_id}/graphs/")
    page.wait_for_load_state("networkidle")
    shot(page, f"graphs-page-{size[0]}")
    no_overflow(page)
    page.click(".graph-versions a:text-is('View')")
    page.wait_for_selector("#graph-svg .node")
    assert page.locator("#graph-svg .node").count() == memory_graph.node_count
    page.wait_for_load_state("networkidle")
    shot(page, f"memory-graph-{size[0]}")
    no_overflow(page)
    # The largest state: its member screens and the subgoals tried from it.
    page.locator("#graph-svg .node").first.click()
    page.wait_for_selector("#graph-panel [data-panel-node] .member-grid img")
    assert "Outgoing subgoals" in page.inner_text("#graph-panel")
    shot(page, f"memory-graph-node-{size[0]}")
    # A subgoal edge drawn in green (succeeded) opens with the trajectories it came from.
    page.locator("#graph-svg .edge-group.success-yes .edge-hit").first.click(force=True)
    page.wait_for_selector("#graph-panel [data-panel-edge]")
    assert page.locator("#graph-panel .origin-list a[href*='/trajectories/']").count() >= 1
    assert "yes" in page.inner_text("#graph-panel .pill")
    shot(page, f"memory-graph-edge-{size[0]}")
    no_overflow(page)
    # Hiding successful subgoals hides the green edges.
    page.uncheck("input[name=success][value=yes]")
    assert page.locator("#graph-svg .edge-group.success-yes:not(.filtered)").count() == 0
    # Retrieval: upload a member screen of a known state; it comes back first.
    member = Screen.objects.filter(trajectory__project=memory_graph.project).first()
    png = tmp_path / "screen.png"
    png.write_bytes(read_blob(member.screenshot))
    xml = tmp_path / "screen.xml"
    xml.write_bytes(read_blob(member.ui_xml))
    page.click("text=Retrieve")
    page.set_input_files("#id_screenshot", str(png))
    page.set_input_files("#id_xml", str(xml))
    page.click("#retrieve-form button[type=submit]")
    page.wait_for_selector("#memory-block")
    assert page.inner_text("#memory-block").startswith("Experience:")
    assert page.locator(".retrieved .hit").count() == 2
    first = page.inner_text(".retrieved .hit h3")
    assert "similarity 1.000" in first or "similarity 0.9" in first
    page.wait_for_load_state("networkidle")
    shot(page, f"retrieve-{size[0]}")
    no_overflow(page)
    page.click("#copy-memory")
    page.wait_for_selector("#copy-memory:text-is('Copied')")
    # A retrieved state opens in the drawing with its panel.
    page.click(".retrieved .hit h3 a")
    page.wait_for_selector("#graph-panel [data-panel-node]")
    assert page.locator("#graph-svg .node.selected").count() == 1
    assert page.errors == []
