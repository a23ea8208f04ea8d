"""``--strategy llm`` against a local OpenAI-compatible test server: the model picks the action
and writes the words; garbage, 429s and wrong shapes fall back to the XML's choice and words."""

from __future__ import annotations

import pytest

from core.llm import LLMClient
from explore.llm import ModelWriter
from explore.models import Exploration
from explore.walk import explore
from tests.annotate.llm_server import Server, llm  # noqa: F401 - the fixture
from trajectories.models import Step
from trajectories.validation import InvalidData

MAIL = "com.waypoint.mailbox"
TODO = [{"key": "a", "label": "Tap “⌕”"}, {"key": "b", "label": "Tap mail_0"}]
NODE = {"description": "Inbox", "id": "n1"}


def prompt_of(body: dict) -> str:
    content = body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return " ".join(part.get("text", "") for part in content)


def mail_model(body: dict) -> tuple:
    prompt = prompt_of(body)
    if "Actions not tried yet" in prompt:
        return (200, {"choice": 1}, 0)  # the first mail row rather than the search button
    if "Describe this app page" in prompt:
        return (200, {"description": "A mailbox page"}, 0)
    return (200, {"instruction": "Open it", "effect": "Something opens"}, 0)


@pytest.mark.django_db
def test_the_model_picks_the_next_action_and_writes_states_and_transitions(
    llm,  # noqa: F811
    pool,
    project,
    alice,
):
    server = llm(mail_model)
    x = Exploration.objects.create(
        project=project,
        app=MAIL,
        serial=pool.serial,
        strategy="llm",
        seed=3,
        budget_steps=4,
        created_by=alice,
    )
    result = explore(x)
    x.refresh_from_db()
    assert result["steps"] == 4 and x.status == "finished"
    assert x.message == "spent its budget of 4 steps (0 model answers fell back to the XML)"
    steps = Step.objects.filter(trajectory__task__uid=f"exploration-{x.pk}").order_by("index")
    assert [s.summary for s in steps][:2] == ["Open com.waypoint.mailbox", "Tap mail_0"]
    assert {n["description"] for n in x.frontier["nodes"]} == {"A mailbox page"}
    assert x.frontier["edges"][0]["instruction"] == "Open it"
    assert x.frontier["edges"][0]["effect"] == "Something opens"
    assert all(r["body"]["model"] == "test-vl" for r in server.requests)
    screenshots = [
        r for r in server.requests if not isinstance(r["body"]["messages"][0]["content"], str)
    ]
    assert screenshots  # a state is described from its screenshot


@pytest.mark.parametrize(
    "reply",
    [
        (200, "I would tap the search button", 0),  # not JSON
        (200, {"choice": 7}, 0),  # no such action
        (200, {"choice": "1"}, 0),  # not a number
        (200, ["b"], 0),  # not an object
        (429, "", 0),  # busy, again and again
        (500, "", 0),
    ],
)
def test_an_unusable_answer_falls_back_to_the_walks_choice(settings, reply):
    settings.LLM_HTTP_RETRIES = 1
    settings.LLM_BACKOFF_MS = 1
    server = Server(lambda body: reply)
    try:
        writer = ModelWriter(LLMClient(server.url, "m", timeout_s=2))
        assert writer.choose(NODE, TODO, None) == TODO[0]
        assert writer.describe_state(b"\x89PNG", None, "Inbox: a list") == "Inbox: a list"
        assert writer.describe_edge("Tap x", "Opens y", NODE, NODE) == ("Tap x", "Opens y")
        assert writer.fallbacks == 3
    finally:
        server.close()


def test_the_llm_strategy_needs_a_model(settings):
    settings.LLM_BASE_URL = ""
    with pytest.raises(InvalidData) as caught:
        ModelWriter()
    assert str(caught.value) == (
        "strategy: llm needs a model: set LLM_BASE_URL (and LLM_MODEL, LLM_API_KEY)"
    )
