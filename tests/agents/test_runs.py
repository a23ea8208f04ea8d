"""An agent run: one Celery task per episode, played by a real worker on the virtual device,
each episode a trajectory, scored live."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents.models import Episode, EpisodeStatus, Run
from agents.services import do_start_run
from devices.models import Lease
from devices.virtual import load_apps
from tests.conftest import wait_for_job
from trajectories.models import AuditEvent, MemoryTarget, Step, Trajectory

pytestmark = [pytest.mark.worker, pytest.mark.usefixtures("agent_worker")]
ORDER = "freshcart-order-number"


def episodes(run) -> list[Episode]:
    return list(Episode.objects.filter(run=run).select_related("trajectory").order_by("seed"))


@pytest.mark.django_db(transaction=True)
def test_the_solver_solves_its_task_at_every_seed_and_replaying_it_succeeds(pool, project, alice):
    run = do_start_run(project, alice, agent="solver", tasks=[ORDER], seeds="1..2")
    job = wait_for_job(run.job_id, timeout=240)
    assert job.status == "succeeded", job.message
    assert job.counts == {"episodes": 2, "succeeded": 2}

    for episode in episodes(run):
        assert (episode.status, episode.success, episode.failure_kind) == ("finished", True, "")
        gold = load_apps(episode.seed).task(ORDER).gold
        assert episode.answer == gold
        assert episode.memory_score == 1.0  # it wrote the order number down when it saw it
        trajectory = episode.trajectory
        assert (trajectory.source, trajectory.outcome) == ("solver", "success")
        assert trajectory.metadata["virtual_device"]["seed"] == episode.seed
        assert trajectory.metadata["virtual_task"] == ORDER
        kinds = list(
            Step.objects.filter(trajectory=trajectory).values_list("action_type", flat=True)
        )
        assert kinds == ["open_app", "click", "answer", "terminate"]
        assert episode.steps == 4
        # Every turn is kept: what the agent said and did, and the memory it wrote.
        turns = trajectory.metadata["agent"]["turns"]
        assert [t["step"] for t in turns] == [0, 1, 2]
        assert turns[2]["memory"] == f"number of the latest FreshCart order: {gold}"
        assert Step.objects.get(trajectory=trajectory, index=2).memory == turns[2]["memory"]
        recorded = AuditEvent.objects.filter(trajectory=trajectory, kind="step.recorded")
        answered = recorded.order_by("id")[2]
        assert answered.after["memory"] == turns[2]["memory"]
        assert answered.actor is None  # no person's work: an agent's
        # A verified demonstration: labelled from the environment.
        [target] = MemoryTarget.objects.filter(trajectory=trajectory)
        assert (target.key, target.value) == ("freshcart.order_number", gold)
    assert not Lease.objects.exists()  # every device given back

    replay = do_start_run(project, alice, agent=f"replay,run={run.pk}", tasks=[ORDER], seeds="1..2")
    job = wait_for_job(replay.job_id, timeout=240)
    assert job.counts == {"episodes": 2, "succeeded": 2}, [
        (e.failure_kind, e.message) for e in episodes(replay)
    ]
    for episode in episodes(replay):
        assert episode.trajectory.source == "agent"
        assert episode.trajectory.metadata["agent"]["spec"] == f"replay,run={run.pk}"


@pytest.mark.django_db(transaction=True)
def test_the_random_agent_started_through_the_api_scores_near_zero(pool, project, alice):
    api = APIClient()
    api.force_authenticate(alice)
    body = {"agent": "random,seed=3", "tasks": [ORDER], "seeds": "1..3", "max_steps": 6}
    started = api.post(f"/api/v1/projects/{project.pk}/runs/", body, format="json")
    assert started.status_code == 202, started.json()
    assert started.json()["status"] == "queued" and len(started.json()["episodes"]) == 3
    run = Run.objects.get(pk=started.json()["run"])
    job = wait_for_job(run.job_id, timeout=240)
    assert job.status == "succeeded", job.message
    played = episodes(run)
    assert [e.success for e in played] == [False, False, False]
    assert {e.failure_kind for e in played} <= {"step_cap", "wrong_answer"}
    assert all(e.steps <= 7 for e in played)  # the cap (an answer adds its terminate step)
    assert Trajectory.objects.filter(source="agent", outcome="failure").count() == 3
    detail = api.get(f"/api/v1/runs/{run.pk}/").json()
    assert (detail["status"], detail["success_rate"], detail["finished"]) == ("succeeded", 0, 3)
    assert [e["trajectory_id"] for e in detail["episodes"]] == [e.trajectory_id for e in played]


@pytest.mark.django_db(transaction=True)
def test_an_episode_delivered_twice_is_played_once(pool, project, alice):
    from agents.runner import run_episode

    run = do_start_run(project, alice, agent="solver", tasks=[ORDER], seeds="4")
    job = wait_for_job(run.job_id, timeout=240)
    [episode] = episodes(run)
    assert run_episode(episode.pk) is False  # finished: a second delivery does nothing
    assert Episode.objects.get(pk=episode.pk).starts == 1
    assert job.counts == {"episodes": 1, "succeeded": 1}
    assert EpisodeStatus.FINISHED == Episode.objects.get(pk=episode.pk).status


@pytest.mark.django_db(transaction=True)
def test_a_persons_recording_replayed_at_its_seed_succeeds(pool, project, alice, adb_servers):
    from devices.services import (
        connect,
        do_finish_recording,
        do_import_virtual_tasks,
        do_release_device,
        do_start_recording,
        do_take_device,
        record_step,
    )
    from tests.devices.conftest import node_center

    lease = do_take_device(pool.serial, adb_servers[0], alice)
    task = next(
        t
        for t in do_import_virtual_tasks(project, connect(pool.serial))
        if t.uid.startswith(f"virtual:{ORDER}:")
    )
    recording = do_start_recording(lease, task, alice, reset_seed=8)
    record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    x, y = node_center(pool.dump_hierarchy(), resource_id="com.waypoint.freshcart:id/tab_orders")
    record_step(recording, {"type": "click", "x": x, "y": y}, alice)
    do_finish_recording(recording, alice, answer=load_apps(8).task(ORDER).gold)
    do_release_device(pool.serial, alice)
    assert recording.outcome == "success" and recording.source == "recorded"

    run = do_start_run(project, alice, agent="replay", tasks=[ORDER], seeds="8")
    assert wait_for_job(run.job_id, timeout=240).status == "succeeded"
    [episode] = episodes(run)
    assert episode.success, episode.message
    assert episode.trajectory.recorder_name == f"replay:{recording.uid}"
    replayed = list(episode.trajectory.steps.values_list("action_type", flat=True))
    assert replayed == ["open_app", "click", "answer", "terminate"]
