"""The RL environment server on the session's virtual device, reached through its private adb
server: served in this process by uvicorn (a thread) for most tests, as ``manage.py env_server``
(a process of its own) where a test kills it."""

from __future__ import annotations

import base64

import pytest
from rest_framework.authtoken.models import Token

from agents.base import Observation
from agents.reference import solver_for
from rl.episode import Setup
from rl.protocol import WaypointAction
from rl.server import build_app
from rl.serving import ServedInThread
from tests.devices import conftest as devices_conftest
from tests.devices.conftest import free_port, grant

adb_server = devices_conftest.adb_server
adb_servers = devices_conftest.adb_servers
device = devices_conftest.device
virtual_device = devices_conftest.virtual_device

SESSION_SEED = 7  # the session's virtual device (tests/devices/conftest.py)
WEATHER = "weather-temp-now"  # open SkyCast, answer Lima's temperature: three steps
ORDER = "freshcart-order-number"  # open FreshCart, its Orders tab, answer: four steps
TASKS = (WEATHER, ORDER)


@pytest.fixture
def pool(adb_servers, device, project):
    """The session's virtual device, granted to alice's project; back at the session's seed
    afterwards."""
    grant(device.serial, project)
    yield device
    device.shell(["waypoint", "reset", "--seed", str(SESSION_SEED)])


@pytest.fixture
def token(alice) -> str:
    return Token.objects.create(user=alice).key


@pytest.fixture
def serve(pool, project):
    """Start an environment server of alice's project (its tasks and limits as given)."""
    served: list[ServedInThread] = []

    def start(tasks=TASKS, *, max_sessions=8, idle_s=60.0, wait_s=60.0, queue=None) -> str:
        setup = Setup(project=project, tasks=tuple(tasks))
        app = build_app(setup, max_sessions=max_sessions, idle_s=idle_s, wait_s=wait_s, queue=queue)
        served.append(ServedInThread(app, free_port()))
        return served[-1].url

    yield start
    for server in served:
        server.stop()


def seen_by_solver(observation) -> Observation:
    """What the scripted solver reads of an observation (it needs the XML: ``with_xml``)."""
    return Observation(
        goal=observation.instruction,
        screenshot=base64.b64decode(observation.screenshot),
        xml=observation.xml,
        width=observation.width,
        height=observation.height,
        step=observation.step,
        package=observation.package,
    )


def play_solver(env, template: str, seed: int = 1, answer: str | None = None, **reset):
    """Play the template's scripted solver through ``env`` (a WaypointEnv); ``answer``
    replaces its answer. Every StepResult, the reset's first."""
    solver = solver_for(template)
    results = [env.reset(seed=seed, task=template, with_xml=True, **reset)]
    solver.start(results[0].observation.instruction)
    while not results[-1].done:
        step = solver.act(seen_by_solver(results[-1].observation))
        action = step.action
        if answer is not None and action["type"] == "answer":
            action = {"type": "answer", "text": answer}
        results.append(env.step(WaypointAction(action=action, memory=step.memory)))
    return results
