"""The OpenAI-compatible agent, played by a real worker on the virtual device against a local
test server answering as GUI-Owl (STAMP's mobile_use) and as AndroTMem's agents, with malformed
output, timeouts and 429s."""

from __future__ import annotations

import json

import pytest

from agents.models import Episode
from agents.services import do_start_run
from devices.models import Device, Lease
from devices.virtual import load_apps
from formats.stamp_sft import SYSTEM_PROMPT, mobile_use_arguments
from tests.agents.builders import register_endpoint
from tests.annotate.llm_server import Server
from tests.conftest import wait_for_job
from trajectories.models import Step

from .scripted_model import androtmem, gui_owl, replies

pytestmark = [pytest.mark.worker, pytest.mark.usefixtures("agent_worker")]
ORDER = "freshcart-order-number"
SLOW = 5  # seconds: past the worker's LLM_TIMEOUT_S (3)


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


def play(project, alice, agent: str, seed: int = 2, **options) -> Episode:
    run = do_start_run(project, alice, agent=agent, tasks=[ORDER], seeds=str(seed), **options)
    job = wait_for_job(run.job_id, timeout=240)
    assert job.status == "succeeded", job.message
    return Episode.objects.select_related("trajectory").get(run=run)


@pytest.mark.django_db(transaction=True)
def test_a_gui_owl_model_solves_the_task_through_429s_a_timeout_and_a_malformed_answer(
    pool, project, alice, server
):
    faults = [
        (429, None, 0),  # retried by the client
        (200, "I think I should open the app.", 0),  # no tool call: an invalid output
        (200, "late", SLOW),  # times out, retried
    ]
    model = server(replies(gui_owl, faults))
    episode = play(
        project, alice, f"openai:mobile_use,endpoint={model.endpoint.name},model=owl-test,xml=1"
    )
    assert (episode.success, episode.failure_kind) == (True, ""), episode.message
    assert episode.answer == load_apps(2).task(ORDER).gold
    assert episode.invalid_outputs == 1
    assert episode.memory_score == 1.0
    assert (episode.tokens_in, episode.tokens_out) == (100 * 4, 20 * 4)  # 4 answers read
    trajectory = episode.trajectory
    assert trajectory.source == "agent"
    turns = trajectory.metadata["agent"]["turns"]
    assert [t["step"] for t in turns] == [None, 0, 1, 2]
    assert turns[0]["invalid"] == "no <tool_call> block"
    assert turns[1]["raw_output"].startswith("<think>Open FreshCart.</think>")
    assert all(t["prompt_chars"] > len(SYSTEM_PROMPT) for t in turns)
    step = Step.objects.get(trajectory=trajectory, index=2)
    assert (step.action_type, step.memory, step.summary) == (
        "answer",
        f"latest FreshCart order number: {episode.answer}",
        "The newest order is first on the Orders tab: answer its number.",
    )
    # STAMP's prompt: Table 15's system prompt, the goal, the previous turns in full.
    last = model.requests[-1]["body"]["messages"]
    assert last[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert f"Instruction: {trajectory.task.goal}" in last[1]["content"][0]["text"]
    assert last[2]["content"] == turns[1]["raw_output"]
    assert model.requests[-1]["body"]["model"] == "owl-test"


@pytest.mark.django_db(transaction=True)
def test_androtmem_asm_carries_its_milestone_anchors_from_step_to_step(
    pool, project, alice, server
):
    model = server(replies(androtmem))
    episode = play(project, alice, f"openai:androtmem-v3,endpoint={model.endpoint.name},xml=1")
    assert episode.success, episode.message
    assert episode.memory_score == 1.0  # the anchor it kept says the order number
    first, *_, last = [r["body"]["messages"] for r in model.requests]
    assert first[1]["content"][0]["text"].endswith("Milestone Anchors:\nStart")
    assert last[1]["content"][0]["text"].endswith(
        "Milestone Anchors:\n- [subgoal] Open FreshCart.\n- [subgoal] Open the Orders tab."
    )
    assert first[0]["content"].startswith("Mobile GUI agent.")  # AndroTMem's, not STAMP's
    assert '"milestones": [...]' in first[0]["content"]


@pytest.mark.django_db(transaction=True)
def test_androtmem_v1_shows_the_last_actions_and_ends_after_three_malformed_answers(
    pool, project, alice, server
):
    model = server(replies(androtmem, [(200, "{not json}", 0)] * 3))
    episode = play(project, alice, f"openai:androtmem-v1,endpoint={model.endpoint.name},xml=1")
    assert (episode.success, episode.failure_kind) == (False, "invalid_output")
    assert episode.invalid_outputs == 3 and episode.steps == 0
    assert episode.message.startswith("3 invalid outputs in a row: the answer is not JSON")
    assert episode.trajectory.outcome == "failure"
    assert (
        "Action History (last 0 steps): []"
        in model.requests[0]["body"]["messages"][1]["content"][0]["text"]
    )


@pytest.mark.django_db(transaction=True)
def test_an_endpoint_that_keeps_failing_is_a_model_error(pool, project, alice, server):
    model = server(replies(androtmem, [(500, None, 0), (429, None, 0)]))
    episode = play(project, alice, f"openai:androtmem-v2,endpoint={model.endpoint.name},xml=1")
    assert (episode.success, episode.failure_kind) == (False, "model_error")
    assert episode.message.startswith("gave up after 2 requests: HTTP 429")
    assert len(model.requests) == 2


@pytest.mark.django_db(transaction=True)
def test_any_regime_with_a_memory_graph_gets_its_block_at_every_step(
    pool, project, alice, server, django_capture_on_commit_callbacks
):
    from tests.graphs.conftest import build_now, import_generated

    import_generated(project, range(3), steps=8)
    graph = build_now(project, alice, django_capture_on_commit_callbacks)
    model = server(replies(gui_owl))
    episode = play(
        project,
        alice,
        f"openai:mobile_use,endpoint={model.endpoint.name},xml=1,graph={graph.version}",
    )
    assert episode.success, episode.message
    for request in model.requests:
        current = request["body"]["messages"][-1]["content"]
        assert current[-2]["text"].startswith("UI XML of the screen:")
        assert any(p.get("text", "").startswith("Experience:") for p in current)


def always_back(body: dict) -> str:
    """A model that never finishes: it goes back, step after step."""
    call = {"name": "mobile_use", "arguments": mobile_use_arguments({"type": "back"}, 1080, 2400)}
    call_text = json.dumps(call)
    return f"<think>Go back.</think>\nAction: Go back.\n<tool_call>\n{call_text}\n</tool_call>"


@pytest.mark.django_db(transaction=True)
def test_an_episode_ends_before_its_devices_lease_reaches_its_maximum_length(
    pool, project, alice, server
):
    """The worker starts no step with less than 50 s (WAYPOINT_EPISODE_LEASE_MARGIN_S in its
    environment) left of the lease, and this device's leases last at most a minute: the
    episode stops as "time cap" after about 10 s instead of driving a device it no longer
    holds."""
    Device.objects.filter(serial=pool.serial).update(max_lease_seconds=60)
    model = server(replies(always_back))
    episode = play(
        project, alice, f"openai:mobile_use,endpoint={model.endpoint.name},xml=1", max_steps=200
    )
    assert (episode.success, episode.failure_kind) == (False, "time_cap")
    assert episode.message.startswith(
        f"the lease on device {pool.serial} reaches its maximum length of 1 min at "
    )
    assert episode.message.endswith(": stopped before the next step")
    assert 0 < episode.steps < 200  # it played, and stopped far from the step cap
    assert episode.trajectory.outcome == "failure"
    assert not Lease.objects.exists()  # the device is given back
