"""The app-graph guided regime (UI-KOBE's runtime agent) turn by turn against a local test
server: the prompt carries the located page and its options, never a recording's data, the adb
shell or a gold answer; the spec names it and checks that there is a graph to use."""

from __future__ import annotations

import json
import re

import pytest

from agents.base import Observation
from agents.chat import ChatAgent
from agents.registry import app_graph_finder, build_agent, check_agent, parse_agent_spec
from fixtures.generate import NOTES, SHOP, generate_dataset
from graphs.appkg_jobs import do_start_app_graph
from tests.agents.builders import register_endpoint
from tests.annotate.llm_server import Server
from trajectories.blobs import read_blob
from trajectories.jobs import run_job
from trajectories.models import Screen, Step
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db
GOAL = "Find the cheapest running shoes"


def owl(option: int, arguments: dict, action: str = "do it", memory: str = "none") -> str:
    call = json.dumps({"name": "mobile_use", "arguments": arguments})
    return (
        f"<think>t</think>\nOption: {option}\nAction: {action}\nMemory: {memory}\n"
        f"<tool_call>\n{call}\n</tool_call>"
    )


@pytest.fixture
def server(settings):
    """A local model server, registered as a site endpoint (``server.endpoint``)."""
    settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]
    servers = []

    def start(replies):
        servers.append(Server([(200, r, 0) for r in replies]))
        servers[-1].endpoint = register_endpoint(servers[-1].url, name=f"lab-{len(servers)}")
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.fixture
def shop_graph(project, alice):
    generate_dataset(project, 3, steps=30, seed=9)
    graph = do_start_app_graph(project, SHOP, alice)
    run_job(graph.job_id)
    graph.refresh_from_db()
    return graph


def observe(activity: str, package: str = SHOP, step: int = 0) -> Observation:
    screen = (
        Screen.objects.filter(package=package, activity__endswith=activity)
        .select_related("screenshot", "ui_xml")
        .last()
    )
    xml = read_blob(screen.ui_xml).decode()
    return Observation(
        GOAL, read_blob(screen.screenshot), xml, screen.width, screen.height, step, package
    )


def prompt_texts(request: dict) -> list[str]:
    return [
        part["text"] if isinstance(part, dict) else part
        for message in request["body"]["messages"]
        for part in (message["content"] if isinstance(message["content"], list) else [message])
        if isinstance(part, str) or part.get("type") == "text"
    ]


def test_each_step_prompt_carries_the_located_page_and_its_options(server, project, shop_graph):
    answers = [
        owl(2, {"action": "system_button", "button": "Back"}, "Go back to the results"),
        owl(9, {"action": "answer", "text": "Acme Running Shoes"}, "Answer", "cheapest: Acme"),
    ]
    model = server(answers)
    agent = ChatAgent(
        "app-graph",
        base_url=model.url,
        model="small",
        app_graphs=app_graph_finder(project, None),
    )
    agent.start(GOAL)
    step = agent.act(observe("ProductActivity"))
    assert step.action == {"type": "back"} and step.extra["option"] == 2
    system, user = model.requests[0]["body"]["messages"]
    assert system["role"] == "system" and "Option: <number>" in system["content"]
    parts = user["content"]
    assert [p["type"] for p in parts] == ["text", "text", "image_url"]  # no XML: not asked
    assert parts[0]["text"] == f"Task: {GOAL}\nDone so far:\nnothing yet"
    block = parts[1]["text"]
    lines = block.splitlines()
    assert lines[0] == "App graph guidance (UI-KOBE):"
    assert lines[1].startswith("Current page: product page showing ")
    assert "Actions that lead to another page:" in lines
    back = next(line for line in lines if "Go back" in line)
    assert back.endswith(
        "-> opens the "
        + next(n for n in agent.app_graphs(SHOP).graph.nodes if "Results" in n.labels).description
    )
    assert re.search(r"^  \d+\. Task completion: ", block, re.M)
    assert re.search(r"^  \d+\. Free action: ", block, re.M)
    # The next step remembers what was done and noted.
    agent.act(observe("SearchActivity", step=1))
    text = model.requests[1]["body"]["messages"][1]["content"][0]["text"]
    assert text == f"Task: {GOAL}\nDone so far:\nStep 1: Go back to the results"


def test_the_block_says_nothing_the_recordings_typed_or_read(server, project, shop_graph):
    """What was typed (a search, or elsewhere a task's answer) and values with digits (prices,
    codes) stay out of the prompt: the graph gives the app's behaviour, not its data."""
    typed = {s.action["text"] for s in Step.objects.filter(action_type="type")}
    prices = {
        m
        for s in Screen.objects.filter(package=SHOP)[:30]
        for m in re.findall(r"\$\d+\.\d\d", read_blob(s.ui_xml).decode())
    }
    assert typed and prices
    model = server([owl(1, {"action": "wait", "time": 1})] * 3)
    agent = ChatAgent(
        "app-graph", base_url=model.url, model="m", app_graphs=app_graph_finder(project, None)
    )
    agent.start(GOAL)
    for i, activity in enumerate(["HomeActivity", "SearchActivity", "ProductActivity"]):
        agent.act(observe(activity, step=i))
    said = "\n".join(t for r in model.requests for t in prompt_texts(r))
    assert "Type a text into the input field" in said
    # (A product named like a search may be on a page the graph shows: not as typed text.)
    assert not [t for t in typed if f"'{t}'" in said]
    assert not [p for p in prices if p in said]
    assert "adb" not in said.lower() and "shell" not in said.lower()


def test_a_screen_of_an_app_without_a_graph_gets_only_completion_and_a_free_action(
    server, project, shop_graph
):
    model = server([owl(1, {"action": "system_button", "button": "Home"})])
    agent = ChatAgent(
        "app-graph", base_url=model.url, model="m", app_graphs=app_graph_finder(project, None)
    )
    agent.start(GOAL)
    agent.act(observe("ListActivity", package=NOTES))
    block = model.requests[0]["body"]["messages"][1]["content"][1]["text"]
    assert block.splitlines() == [
        "App graph guidance (UI-KOBE):",
        f"Current page: not in the graph (no app graph of {NOTES}).",
        "  1. Task completion: The task is done: answer the user if the task asks a question, "
        "then stop.",
        "  2. Free action: Any other single action this screen allows, when no option above "
        "fits (or the screen is not in the graph).",
    ]


def test_any_regime_takes_the_block_with_appgraph(server, project, shop_graph, settings):
    model = server([json.dumps({"action": {"action": "back"}})])
    spec = parse_agent_spec(f"openai:androtmem-v1,endpoint={model.endpoint.name},appgraph=1")
    check_agent(spec, project, [])
    agent = build_agent(spec, project, "any", 1)
    agent.start(GOAL)
    agent.act(observe("ProductActivity"))
    parts = model.requests[0]["body"]["messages"][1]["content"]
    assert parts[1]["text"].startswith("App graph guidance (UI-KOBE):\nCurrent page: product")


def test_the_regime_needs_a_ready_app_graph(project, settings):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    for spec, message in [
        (
            "openai:app-graph",
            "agent: the project has no ready app graph (build one from recordings of the "
            "apps on the graphs page)",
        ),
        (
            "openai:mobile_use,appgraph=4",
            "agent: the project has no ready app graph v4 (build one from recordings of the "
            "apps on the graphs page)",
        ),
    ]:
        with pytest.raises(InvalidData) as caught:
            check_agent(parse_agent_spec(spec), project, [])
        assert str(caught.value) == message
    with pytest.raises(InvalidData, match=r"agent: appgraph must be a whole number, got 'x'"):
        parse_agent_spec("openai:app-graph,appgraph=x")
