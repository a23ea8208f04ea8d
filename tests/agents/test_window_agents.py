"""The benchmark's controls on the virtual device, on instances whose answer is known: the
``window`` agent (the solver seeing only its last K observations, no memory field) fails an
instance whose values leave its window before they are used, and solves one whose values stay
in it; ``window+memory`` (the same agent writing what it reads) solves both."""

from __future__ import annotations

import pytest

from agents.memory_need import SolverStep, measure
from agents.registry import build_agent, check_agent, parse_agent_spec
from devices.virtual import load_apps
from tests.agents.episodes import play
from trajectories.validation import InvalidData

NOTE = "cheaper-aerosound-note-to-mia"  # two prices read in two apps, then a note written
ORDER = "freshcart-order-number"  # the order number is on the screen it is answered on
CHAIN = "chain-code-then-account"  # a memory template at L3: codes read apps before they are sent
SEED = 1


def windowed(spec: str, template: str):
    return build_agent(parse_agent_spec(spec), None, template, SEED)


def need(episode, template: str, k: int = 5):
    world = load_apps(SEED)
    values = {ref: world.variable(ref).value for ref in world.task(template).variables}
    steps = [SolverStep(xml, s.action) for xml, s in zip(episode.dumps, episode.steps, strict=True)]
    return measure(steps, values, k)


@pytest.mark.parametrize("template", [NOTE, CHAIN])
def test_the_window_agent_fails_where_memory_is_needed_and_window_memory_does_not(device, template):
    lost = play(device, windowed("window", template), template, SEED)
    assert lost.verdict.startswith("gave up: "), lost.story()
    assert "has left the last 5 screens (no memory field)" in lost.verdict
    assert all(step.memory == "" for step in lost.steps)
    kept = play(device, windowed("window+memory", template), template, SEED)
    assert kept.verdict == "success", kept.story()
    assert need(kept, template).needs_memory  # the path says so too: the control agrees


def test_the_window_agent_solves_what_stays_in_its_window(device):
    episode = play(device, windowed("window", ORDER), ORDER, SEED)
    assert episode.verdict == "success", episode.story()
    assert not need(episode, ORDER).needs_memory


def test_a_wider_window_holds_what_a_narrow_one_loses(device):
    episode = play(device, windowed("window,k=20", NOTE), NOTE, SEED)
    assert episode.verdict == "success", episode.story()


@pytest.mark.django_db
def test_the_controls_need_a_solver_and_a_window_of_one_or_more(project):
    instances = [{"template": "not-a-template", "seed": 1}]
    with pytest.raises(InvalidData, match="agent: no scripted solver for not-a-template"):
        check_agent(parse_agent_spec("window+memory"), project, instances)
    with pytest.raises(InvalidData, match=r"agent: k must be 1 or more"):
        check_agent(parse_agent_spec("window,k=0"), project, [])
    assert parse_agent_spec("window+memory,k=3").options == {"k": 3}
