"""STAMP's difficulty levels on the virtual device: a memory template posed at L1 (its simplified
configuration, with the task-required knowledge) and at L2 (the task with the knowledge) is
solved by the same solver, and a run at a level records it in every place a level belongs."""

from __future__ import annotations

import pytest

from agents.models import Episode
from agents.reference import solver_for
from agents.services import do_start_run
from devices.virtual import load_apps
from evaluation.metrics import memory_match
from tests.agents.episodes import play
from tests.conftest import wait_for_job

CHAIN = "chain-code-then-account"
SEED = 1


def written(episode) -> str:
    return "\n".join(step.memory for step in episode.steps)


@pytest.mark.parametrize("level", [1, 2])
def test_the_solver_solves_a_memory_template_at_l1_and_l2(device, level):
    episode = play(device, solver_for(CHAIN), CHAIN, SEED, level=level)
    assert episode.verdict == "success", episode.story()
    posed = load_apps(SEED, level=level)
    task = posed.task(CHAIN)
    assert episode.goal == task.instruction and "\n\nWhere to find it: " in episode.goal
    # It carried every value of its level's configuration (L1 has fewer than L3).
    missing = [
        ref
        for ref in task.variables
        if memory_match(written(episode), posed.variable(ref).value) != "complete"
    ]
    assert missing == [], episode.story()
    if level == 1:
        assert len(task.variables) < len(load_apps(SEED).task(CHAIN).variables)


@pytest.mark.worker
@pytest.mark.usefixtures("agent_worker")
@pytest.mark.django_db(transaction=True)
def test_a_run_at_l1_resets_the_device_to_l1_and_says_so(pool, project, alice):
    run = do_start_run(project, alice, agent="solver", tasks=[CHAIN], seeds="1", levels="1")
    job = wait_for_job(run.job_id, timeout=300)
    assert job.status == "succeeded", job.message
    [episode] = Episode.objects.filter(run=run).select_related("trajectory__task")
    assert (episode.level, episode.success, episode.instance) == (1, True, f"{CHAIN}@1/L1")
    trajectory = episode.trajectory
    assert trajectory.metadata["virtual_device"]["level"] == 1
    assert trajectory.task.difficulty == "L1"
    assert trajectory.task.goal == load_apps(SEED, level=1).task(CHAIN).instruction
    # The instance's own step budget (posed by the worker): the run named no cap.
    run.refresh_from_db()
    assert run.max_steps is None and run.instances[0]["max_steps"] > 30
