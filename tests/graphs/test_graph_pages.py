"""The graph pages: who sees them, the build forms, extending, retrieval errors, the cap."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from fixtures.generate import SHOP, generate_record
from graphs import drawing
from graphs.appkg_jobs import (
    app_graph_document,
    do_import_app_graph,
    do_start_app_graph,
)
from graphs.drawing import DrawEdge, DrawNode, draw
from graphs.index import load_graph
from graphs.models import AppGraph, MemoryGraph
from tests.graphs.conftest import build_now, import_generated
from trajectories.jobs import run_job
from trajectories.models import Trajectory
from trajectories.services import do_create_project, do_import_trajectory

pytestmark = pytest.mark.django_db


def as_user(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def graphs(project, bob, django_capture_on_commit_callbacks):
    """A memory graph and an app graph of four generated trajectories."""
    import_generated(project, range(4))
    memory = build_now(project, bob, django_capture_on_commit_callbacks)
    app = do_start_app_graph(project, SHOP, bob)
    run_job(app.job_id)
    app.refresh_from_db()
    return memory, app


def test_members_see_the_pages_and_outsiders_do_not(graphs, alice, bob, charlie, project):
    memory, app = graphs
    urls = [
        f"/projects/{project.pk}/graphs/",
        f"/graphs/{memory.pk}/",
        f"/graphs/{memory.pk}/nodes/0/",
        f"/graphs/{memory.pk}/edges/0/",
        f"/graphs/{memory.pk}/retrieve/",
        f"/app-graphs/{app.pk}/",
        f"/app-graphs/{app.pk}/nodes/n1/",
        f"/app-graphs/{app.pk}/edges/e1/",
    ]
    for user in (alice, bob):
        for url in urls:
            assert as_user(user).get(url).status_code == 200, (user, url)
    for url in urls:
        assert as_user(charlie).get(url).status_code == 404, url


def test_the_project_page_links_to_graphs(project, bob):
    page = as_user(bob).get(f"/projects/{project.pk}/trajectories/").content.decode()
    assert f'href="/projects/{project.pk}/graphs/"' in page


def test_the_graph_page_lists_versions_with_their_links(graphs, bob, project):
    memory, app = graphs
    page = as_user(bob).get(f"/projects/{project.pk}/graphs/").content.decode()
    assert f'href="/graphs/{memory.pk}/"' in page
    assert f'href="/graphs/{memory.pk}/retrieve/"' in page
    assert f'href="/app-graphs/{app.pk}/"' in page
    assert "τ 0.9 · θ 0.9 · k 1 · structure · graph · subgoal" in page


def test_the_build_form_queues_a_memory_graph_with_its_options(
    project, bob, django_capture_on_commit_callbacks
):
    import_generated(project, range(2))
    form = {
        "kind": "memory",
        "memory-tau": "0.8",
        "memory-theta": "0.95",
        "memory-k": "3",
        "memory-embedder": "structure",
        "memory-structure": "flat",
        "memory-granularity": "action",
        "memory-approved_only": "",
    }
    with django_capture_on_commit_callbacks(execute=False):
        response = as_user(bob).post(f"/projects/{project.pk}/graphs/", form)
    assert response.status_code == 302
    graph = MemoryGraph.objects.get()
    assert graph.params == {
        "tau": 0.8,
        "theta": 0.95,
        "k": 3,
        "embedder": "structure",
        "structure": "flat",
        "granularity": "action",
    }
    assert graph.job.kind == "memory_graph" and graph.job.status == "queued"


def test_the_build_form_says_what_is_wrong(project, bob):
    page = (
        as_user(bob)
        .post(
            f"/projects/{project.pk}/graphs/",
            {
                "kind": "memory",
                "memory-tau": "2",
                "memory-theta": "0.9",
                "memory-k": "1",
                "memory-embedder": "structure",
                "memory-structure": "graph",
                "memory-granularity": "subgoal",
            },
        )
        .content.decode()
    )
    assert "Ensure this value is less than or equal to 1" in page
    page = (
        as_user(bob)
        .post(
            f"/projects/{project.pk}/graphs/",
            {
                "kind": "memory",
                "memory-tau": "0.9",
                "memory-theta": "0.9",
                "memory-k": "1",
                "memory-embedder": "structure",
                "memory-structure": "graph",
                "memory-granularity": "subgoal",
                "memory-approved_only": "on",
            },
        )
        .content.decode()
    )
    assert (
        "the project has no labelled trajectories (with subgoals) matching status=approved" in page
    )
    assert not MemoryGraph.objects.exists()


def test_extend_adds_the_new_trajectories_as_a_new_version(
    graphs, project, bob, django_capture_on_commit_callbacks
):
    memory, _ = graphs
    do_import_trajectory(project, generate_record(50, steps=20))
    with django_capture_on_commit_callbacks(execute=False):
        response = as_user(bob).post(
            f"/projects/{project.pk}/graphs/", {"kind": "extend", "graph": memory.pk}
        )
    assert response.status_code == 302
    extension = MemoryGraph.objects.get(version=2)
    assert extension.parent == memory and len(extension.inputs["added"]) == 1
    # Extended again with nothing new, the page says so.
    run_job(extension.job_id)
    page = as_user(bob).post(
        f"/projects/{project.pk}/graphs/", {"kind": "extend", "graph": extension.pk}
    )
    assert "extend: graph v2 already holds every trajectory" in page.content.decode()
    assert MemoryGraph.objects.count() == 2


def test_the_app_graph_form_builds_one_app(project, bob, settings):
    import_generated(project, range(1))
    response = as_user(bob).post(
        f"/projects/{project.pk}/graphs/",
        {
            "kind": "app",
            "app-app": SHOP,
            "app-structure_threshold": "0.8",
            "app-look_threshold": "0.7",
            "app-use_activity": "on",
        },
    )
    assert response.status_code == 302
    graph = AppGraph.objects.get()
    assert graph.app == SHOP and graph.params["use_activity"] is True


def test_retrieval_of_something_that_is_not_an_image_is_refused(graphs, bob):
    memory, _ = graphs
    from django.core.files.uploadedfile import SimpleUploadedFile

    page = (
        as_user(bob)
        .post(
            f"/graphs/{memory.pk}/retrieve/",
            {"screenshot": SimpleUploadedFile("shot.png", b"not an image"), "k": "1"},
        )
        .content.decode()
    )
    assert 'role="alert"' in page and "screenshot:" in page
    assert 'id="memory-block"' not in page


def test_unknown_nodes_and_edges_are_not_found(graphs, bob):
    memory, app = graphs
    client = as_user(bob)
    assert client.get(f"/graphs/{memory.pk}/nodes/999/").status_code == 404
    assert client.get(f"/graphs/{memory.pk}/edges/x/").status_code == 404
    assert client.get(f"/app-graphs/{app.pk}/nodes/n999/").status_code == 404


def test_a_huge_graph_says_what_is_drawn(graphs, bob, monkeypatch):
    memory, _ = graphs
    monkeypatch.setattr(drawing, "MAX_DRAWN", 2)
    page = as_user(bob).get(f"/graphs/{memory.pk}/").content.decode()
    assert f"This graph has {memory.node_count} nodes: only the 2 largest are drawn" in page
    assert page.count('class="node ') == 2


def test_the_layout_keeps_the_largest_nodes_inside_the_canvas():
    nodes = [DrawNode(id=str(i), label=f"n{i}", size=1 + i % 7) for i in range(400)]
    edges = [
        DrawEdge(id=str(i), source=str(i), target=str((i * 7 + 1) % 400), label="e")
        for i in range(400)
    ]
    drawn = draw(nodes, edges)
    assert len(drawn.nodes) == drawing.MAX_DRAWN and drawn.capped
    kept = {n.id for n in drawn.nodes}
    assert min(n.size for n in drawn.nodes) >= max(n.size for n in nodes if n.id not in kept)
    assert all(e.source in kept and e.target in kept for e in drawn.edges)
    for n in drawn.nodes:
        assert 0 <= n.x <= drawn.width and 0 <= n.y <= drawn.height
    # Nodes do not pile up: few pairs closer than a node's width.
    close = sum(
        1
        for i, a in enumerate(drawn.nodes)
        for b in drawn.nodes[i + 1 :]
        if abs(a.x - b.x) < 20 and abs(a.y - b.y) < 20
    )
    assert close < len(drawn.nodes) // 20


def test_every_member_screen_links_to_a_page_that_exists(graphs, bob):
    memory, app = graphs
    client = as_user(bob)
    data = load_graph(memory)
    final = next(
        (node, m)
        for node, members in enumerate(data.members)
        for m in members
        if m["step"] == Trajectory.objects.get(uid=m["trajectory"]).step_count
    )
    panel = client.get(f"/graphs/{memory.pk}/nodes/{final[0]}/").content.decode()
    links = re.findall(r'<a href="(/trajectories/[^"]+)" title', panel)
    assert links
    for link in links:
        assert client.get(link).status_code == 200, link


def test_the_versions_list_refreshes_while_a_build_runs(project, bob):
    import_generated(project, range(1))
    graph = do_start_app_graph(project, SHOP, bob)  # queued: no worker runs it here
    client = as_user(bob)
    headers = {"HX-Request": "true", "HX-Target": "graph-versions"}
    fragment = client.get(f"/projects/{project.pk}/graphs/", headers=headers).content.decode()
    assert "<html" not in fragment and 'hx-trigger="every 2s' in fragment
    assert "Queued" in fragment
    run_job(graph.job_id)
    fragment = client.get(f"/projects/{project.pk}/graphs/", headers=headers).content.decode()
    assert "hx-trigger" not in fragment and "Ready" in fragment


def test_a_finished_build_job_links_to_the_graphs(graphs, bob, project):
    _, app = graphs
    page = as_user(bob).get(f"/jobs/{app.job_id}/").content.decode()
    assert f'<a href="/projects/{project.pk}/graphs/">See the graph</a>' in page


def test_an_imported_graph_of_other_screens_draws_without_broken_pictures(graphs, bob):
    _, app = graphs
    other = do_create_project("Elsewhere", bob)
    copy = do_import_app_graph(other, app_graph_document(app), bob)
    client = as_user(bob)
    page = client.get(f"/app-graphs/{copy.pk}/").content.decode()
    assert page.count('class="node ') == copy.node_count
    assert "/devices/thumbs/" not in page
    panel = client.get(f"/app-graphs/{copy.pk}/nodes/n1/").content.decode()
    assert "/devices/thumbs/" not in panel and "not a screen of this project" in panel
    assert (
        "(not in this project)" in client.get(f"/app-graphs/{copy.pk}/edges/e1/").content.decode()
    )
