"""The app-graph guided regime in the online benchmark runner: a real worker builds the
FreshCart graph from a recording, then plays freshcart-order-number on the virtual device
against a local test server; every step's prompt carries the page the screen was located on
and its options, and never the gold answer outside the screen's own XML."""

from __future__ import annotations

import pytest

from agents.models import Episode
from agents.services import do_start_run
from devices.virtual import load_apps
from graphs.appkg_jobs import do_start_app_graph
from graphs.models import AppGraph
from tests.agents.builders import register_endpoint
from tests.annotate.llm_server import Server
from tests.conftest import wait_for_job
from tests.graphs.virtual_pages import record_scenarios

from .scripted_model import XML_HEADER, gui_owl, replies

pytestmark = [pytest.mark.worker, pytest.mark.usefixtures("agent_worker")]
ORDER = "freshcart-order-number"
FRESHCART = "com.waypoint.freshcart"
SEED = 6  # the recording's seed: the graph is built from this very data


@pytest.fixture
def server(settings):
    """A local model server, registered as a site endpoint (``server.endpoint``)."""
    settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]
    servers = []

    def start(reply):
        servers.append(Server(reply))
        servers[-1].endpoint = register_endpoint(servers[-1].url, name=f"lab-{len(servers)}")
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.mark.django_db(transaction=True)
def test_a_graph_guided_model_solves_the_task_with_its_page_and_options_in_each_prompt(
    pool, adb_servers, project, alice, server
):
    record_scenarios([ORDER], pool.serial, adb_servers[0], project, alice)
    graph = do_start_app_graph(project, FRESHCART, alice)
    assert wait_for_job(graph.job_id, timeout=120).status == "succeeded"
    assert AppGraph.objects.get(pk=graph.pk).status == "ready"

    model = server(replies(gui_owl))
    run = do_start_run(
        project,
        alice,
        agent=f"openai:app-graph,endpoint={model.endpoint.name},model=small,xml=1",
        tasks=[ORDER],
        seeds=str(SEED),
    )
    job = wait_for_job(run.job_id, timeout=240)
    assert job.status == "succeeded", job.message
    episode = Episode.objects.select_related("trajectory").get(run=run)
    gold = load_apps(SEED).task(ORDER).gold
    assert (episode.success, episode.answer) == (True, gold), episode.message

    pages = []
    for request in model.requests:
        system, user = request["body"]["messages"]
        texts = [p["text"] for p in user["content"] if p["type"] == "text"]
        task, guidance, xml = texts
        assert task.startswith(f"Task: {episode.trajectory.task.goal}\nDone so far:\n")
        assert guidance.startswith("App graph guidance (UI-KOBE):\nCurrent page: ")
        assert xml.startswith(XML_HEADER)
        pages.append(guidance.splitlines()[1])
        # The answer is on the screen (its XML, its screenshot), nowhere else in the prompt.
        for text in (system["content"], task, guidance):
            assert gold not in text
            assert "adb shell" not in text and pool.serial not in text
    # The launcher has no graph; FreshCart's home is a page of the graph, with its options.
    assert pages[0] == "Current page: not in the graph (no app graph of com.android.launcher3)."
    assert pages[1].startswith("Current page: page showing FreshCart")
    parts = model.requests[1]["body"]["messages"][1]["content"]
    guidance = [p["text"] for p in parts if p["type"] == "text"][1]
    assert "Tap 'Orders' -> opens the page showing Your orders" in guidance
