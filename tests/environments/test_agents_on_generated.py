"""A generated app is an app like the built-in ones (issue 37): every agent regime plays it
through the runner (the runner puts its package on the device), an exploration walks it and
makes its app graph, and that graph locates the screens of a recording of it."""

from __future__ import annotations

import json

import pytest

from agents.base import Observation
from agents.models import Episode
from agents.services import do_start_run
from agents.spec_solver import spec_solver
from devices.services.packages import install_package, plan_of, prepare_device
from environments.procedural import generate
from environments.render import package_of
from explore.services import do_start_exploration
from formats.stamp_sft import mobile_use_arguments
from graphs.appkg_jobs import app_graph_locator
from tests.agents.scripted_model import XML_HEADER, texts
from tests.annotate.llm_server import llm  # noqa: F401 (the fixture)
from trajectories.blobs import read_blob
from trajectories.models import Screen
from trajectories.uixml import parse_ui_xml

pytestmark = pytest.mark.django_db(transaction=True)
PACKAGE = package_of(generate(seed=31, index=0))
TASK = PACKAGE.manifest["tasks"][0]


class GeneratedAppModel:
    """A "model" answering as GUI-Owl from the UI XML in its prompt, deciding as the generic
    solver does: one episode, its steps in order."""

    def __init__(self) -> None:
        self.solver = spec_solver(TASK["id"], plan_of(PACKAGE.manifest, TASK))
        self.solver.start("")

    def __call__(self, body: dict) -> tuple:
        xml = next(t[len(XML_HEADER) :] for t in texts(body) if t.startswith(XML_HEADER))
        tree = parse_ui_xml(xml)
        step = self.solver.act(Observation("", b"", xml, tree.width, tree.height, 0, tree.package))
        call = {
            "name": "mobile_use",
            "arguments": mobile_use_arguments(step.action, tree.width, tree.height),
        }
        return (200, f"<think>{step.raw_output}</think>\nAction: {step.raw_output}\n"
                f"Memory: {step.memory or 'none'}\n<tool_call>\n{json.dumps(call)}\n"
                "</tool_call>", 0)  # fmt: skip


def played(project, alice, pool, agent: str, **options) -> Episode:
    run = do_start_run(
        project, alice, agent=agent, tasks=[TASK["id"]], seeds="0", devices=[pool.serial],
        **options,
    )  # fmt: skip
    run.job.refresh_from_db()
    assert run.job.status == "succeeded", run.job.message
    return Episode.objects.select_related("trajectory").get(run=run)


def test_every_agent_regime_plays_a_generated_app_and_an_exploration_maps_it(
    pool,
    project,
    alice,
    llm,  # noqa: F811
):
    install_package(PACKAGE)
    solver = played(project, alice, pool, "solver")
    assert (solver.success, solver.trajectory.source) == (True, "solver")
    assert solver.trajectory.metadata["virtual_device"]["apps"][-1]["sha256"] == PACKAGE.sha256
    # The task needs memory: the window control loses a value, with its memory field it does not.
    window = played(project, alice, pool, "window")
    assert not window.success and "has left the last 5 screens" in window.trajectory.metadata[
        "agent"]["turns"][-1]["raw_output"]  # fmt: skip
    assert played(project, alice, pool, "window+memory").success
    assert played(project, alice, pool, "replay").success
    random = played(project, alice, pool, "random,seed=3", max_steps=3)
    assert (random.success, random.steps, random.failure_kind) == (False, 3, "step_cap")
    llm(GeneratedAppModel())
    chat = played(project, alice, pool, "openai:mobile_use,xml=1")
    assert chat.success, chat.message
    assert chat.memory_score == 1.0  # the memory it wrote holds every value of the task

    # An exploration walks it (the package on the device, as the runner puts it there) and
    # makes its app graph, which locates the screens the solver recorded.
    assert prepare_device(pool, pool.serial, TASK["id"]) == [PACKAGE.slug]
    x = do_start_exploration(
        project, alice, app=PACKAGE.package, serial=pool.serial, budget="10", seed=0
    )
    x.refresh_from_db()
    assert x.status == "finished" and x.states >= 3, x.message
    locator = app_graph_locator(x.graph)
    first = Screen.objects.filter(trajectory=solver.trajectory, package=PACKAGE.package).first()
    assert locator.locate(read_blob(first.screenshot), read_blob(first.ui_xml)).node is not None
