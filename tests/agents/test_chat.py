"""The OpenAI-compatible agent's regimes, turn by turn, against a local test server: what the
prompts hold, how answers become actions, what is an invalid output."""

from __future__ import annotations

import json

import pytest

from agents.base import Observation
from agents.chat import ChatAgent
from agents.registry import check_agent, parse_agent_spec
from tests.annotate.llm_server import Server
from tests.graphs.conftest import build_now, import_generated
from trajectories.blobs import read_blob
from trajectories.models import Screen
from trajectories.validation import InvalidData

W, H = 540, 1200
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def observation(step: int = 0, screenshot: bytes = PNG, xml: str | None = None) -> Observation:
    return Observation("Find the order number", screenshot, xml, W, H, step, "com.example")


def owl(arguments: dict, memory: str = "none") -> str:
    call = json.dumps({"name": "mobile_use", "arguments": arguments})
    return f"<think>t</think>\nAction: do it\nMemory: {memory}\n<tool_call>\n{call}\n</tool_call>"


@pytest.fixture
def server(settings):
    settings.WAYPOINT_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.1"]  # the test servers' host
    servers = []

    def start(replies):
        servers.append(Server(replies))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def agent(server, regime: str, answers: list[str], **options) -> tuple[ChatAgent, Server]:
    model = server([(200, a, 0) for a in answers])
    chat = ChatAgent(regime, base_url=model.url, model="m", **options)
    chat.start("Find the order number")
    return chat, model


def test_mobile_use_keeps_the_last_five_turns_in_full_and_older_ones_as_lines(server, settings):
    settings.LLM_BACKOFF_MS = 1
    answers = [owl({"action": "click", "coordinate": [500, 500]}, f"m{i}") for i in range(8)]
    chat, model = agent(server, "mobile_use", answers)
    for i in range(8):
        step = chat.act(observation(i, screenshot=PNG + bytes([i])))
        assert step.action == {"type": "click", "x": 270, "y": 600}  # 500/1000 of 539 and 1199
        assert step.memory == f"m{i}"
    messages = model.requests[-1]["body"]["messages"]
    # Turn 8 (index 7): turns 2..7 in full (five earlier ones and this one), 0..1 as lines.
    assert [m["role"] for m in messages] == ["system"] + ["user", "assistant"] * 5 + ["user"]
    first = messages[1]["content"][0]["text"]
    assert first.endswith("Previous actions:\nStep 1: do it\nMemory: m0\nStep 2: do it\nMemory: m1")
    images = [p for m in messages[1:] if m["role"] == "user" for p in m["content"]]
    assert sum(p["type"] == "image_url" for p in images) == 6
    assert messages[2]["content"] == answers[2]


@pytest.mark.parametrize(
    "arguments, action",
    [
        (
            {"action": "swipe", "coordinate": [500, 800], "coordinate2": [500, 200]},
            {"type": "swipe", "x": 270, "y": 959, "x2": 270, "y2": 240, "duration_ms": 400},
        ),
        ({"action": "type", "text": "Mia"}, {"type": "type", "text": "Mia"}),
        ({"action": "open", "text": "FreshCart"}, {"type": "open_app", "package": "FreshCart"}),
        ({"action": "system_button", "button": "Back"}, {"type": "back"}),
        ({"action": "wait", "time": 2}, {"type": "wait", "duration_ms": 2000}),
        ({"action": "answer", "text": " FC-1 "}, {"type": "answer", "text": "FC-1"}),
        ({"action": "terminate", "status": "failure"}, {"type": "terminate", "status": "failure"}),
        ({"action": "key", "text": "volume_up"}, {"type": "key", "keycode": "KEYCODE_VOLUME_UP"}),
    ],
)
def test_mobile_use_calls_become_canonical_actions_in_pixels(server, arguments, action):
    chat, _ = agent(server, "mobile_use", [owl(arguments)])
    assert chat.act(observation()).action == action


@pytest.mark.parametrize(
    "answer, reason",
    [
        ("Action: click\nMemory: none", "no <tool_call> block"),
        (
            owl({"action": "interact", "text": "which?"}),
            "interact: there is no user to ask during a benchmark",
        ),
        (
            owl({"action": "click", "coordinate": "middle"}),
            "coordinate must be [x, y] numbers",  # the evaluator's own reader
        ),
        (owl({"action": "answer", "text": ""}), "answer needs a text, got ''"),
    ],
)
def test_an_answer_that_is_no_action_is_an_invalid_output(server, answer, reason):
    chat, _ = agent(server, "mobile_use", [answer])
    step = chat.act(observation())
    assert (step.action, step.extra["invalid"], step.raw_output) == ({}, reason, answer)
    assert (step.tokens_in, step.tokens_out) == (100, 20) and step.latency_ms > 0
    assert chat.regime.turns == []  # not in the history


def test_androtmem_maps_its_grid_as_its_code_does_and_keeps_the_last_three_actions(server):
    taps = [
        json.dumps({"action": {"action": "tap", "x": 1000, "y": 0}}),
        json.dumps({"action": {"action": "swipe", "direction": "up", "distance": "short"}}),
        json.dumps({"action": {"action": "text", "value": "hello"}}),
        json.dumps({"action": {"action": "back"}}),
        "```json\n" + json.dumps({"action": {"action": "FINISH", "value": "FC-1"}}) + "\n```",
    ]
    chat, model = agent(server, "androtmem-v1", taps)
    actions = [chat.act(observation(i)).action for i in range(5)]
    assert actions == [
        {"type": "click", "x": 539, "y": 0},  # round(v / 1000 * (W - 1))
        {"type": "swipe", "x": 270, "y": 600, "x2": 270, "y2": 480, "duration_ms": 400},
        {"type": "type", "text": "hello"},
        {"type": "back"},
        {"type": "answer", "text": "FC-1"},
    ]
    text = model.requests[-1]["body"]["messages"][1]["content"][0]["text"]
    history = json.loads(text.split("Action History (last 3 steps): ")[1])
    assert [a["action"] for a in history] == ["swipe", "text", "back"]


def test_androtmem_v2_passes_on_the_last_summary(server):
    answers = [
        json.dumps({"action": {"action": "back"}, "summary_en": "Went back to the list."}),
        json.dumps({"action": {"action": "home"}, "summary_en": "Home."}),
    ]
    chat, model = agent(server, "androtmem-v2", answers)
    assert chat.act(observation()).memory == "Went back to the list."
    chat.act(observation(1))
    text = model.requests[1]["body"]["messages"][1]["content"][0]["text"]
    assert text == "Task: Find the order number\nLast Step Summary: Went back to the list."


@pytest.mark.django_db
def test_any_regime_puts_the_memory_graphs_block_before_the_screenshot(
    server, project, alice, django_capture_on_commit_callbacks
):
    import_generated(project, range(3), steps=8)
    graph = build_now(project, alice, django_capture_on_commit_callbacks)
    shown = Screen.objects.filter(trajectory__project=project).select_related("screenshot")[3]
    chat, model = agent(
        server, "androtmem-v3", [json.dumps({"action": {"action": "back"}})], graph=graph
    )
    chat.act(observation(screenshot=read_blob(shown.screenshot)))
    parts = model.requests[0]["body"]["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "text", "image_url"]
    assert parts[1]["text"].startswith("Experience:")


@pytest.mark.parametrize(
    "spec, message",
    [
        ("", "agent: give an agent, e.g. solver, random, replay or openai:mobile_use"),
        (
            "human",
            "agent: unknown agent 'human' (known: openai, replay, random, solver, window, "
            "window+memory)",
        ),
        (
            "openai",
            "agent: openai needs a regime, one of mobile_use, androtmem-v1, androtmem-v2, "
            "androtmem-v3, app-graph (e.g. openai:mobile_use), got ''",
        ),
        ("random:fast", "agent: random has no regime (got random:fast)"),
        ("random,temperature=1", "agent: random has no option 'temperature' (its options: seed)"),
        ("openai:mobile_use,graph=two", "agent: graph must be a whole number, got 'two'"),
        ("openai:mobile_use,xml", "agent: 'xml' is not an option (write key=value)"),
        (
            "openai:mobile_use,url=http://127.0.0.1:9/v1",
            "agent: a spec names no URL: a site admin registers the model endpoint, and the spec "
            "names it with endpoint=NAME (without it, LLM_BASE_URL)",
        ),
    ],
)
def test_a_bad_agent_spec_is_refused_with_a_clear_message(spec, message):
    with pytest.raises(InvalidData) as caught:
        parse_agent_spec(spec)
    assert str(caught.value) == message


@pytest.mark.django_db
def test_what_an_agent_needs_is_checked_before_a_run(project, settings):
    settings.LLM_BASE_URL = ""
    instances = [{"template": "ava-door-code", "seed": 1}]
    with pytest.raises(InvalidData) as caught:  # every template of the device has a solver
        check_agent(
            parse_agent_spec("solver"), project, [{"template": "not-a-template", "seed": 1}]
        )
    assert str(caught.value) == "agent: no scripted solver for not-a-template"
    for spec, message in [
        ("replay", "agent: no successful recording of ava-door-code at seed 1 to replay"),
        (
            "openai:mobile_use",
            "agent: no OpenAI-compatible endpoint: set LLM_BASE_URL or name a registered one "
            "with endpoint=NAME",
        ),
        (
            "openai:mobile_use,endpoint=lab",
            "agent: no model endpoint named 'lab' (the project's: none registered)",
        ),
    ]:
        with pytest.raises(InvalidData) as caught:
            check_agent(parse_agent_spec(spec), project, instances)
        assert str(caught.value) == message
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    with pytest.raises(InvalidData) as caught:
        check_agent(parse_agent_spec("openai:mobile_use,graph=3"), project, instances)
    assert str(caught.value) == "agent: the project has no memory graph v3"
