"""A worker lost in the middle of an episode: the episode is played again by another worker,
and counted once."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from agents import runner
from agents.models import Episode
from agents.services import do_start_run
from tests.conftest import FAULTS_QUEUE, start_worker, stop_worker, wait_for_job
from tests.formats.test_job_faults import wait_until
from trajectories import events, jobs
from trajectories.models import AuditEvent, Job, JobStatus, Trajectory
from trajectories.tasks import run_job_task

FAULTS_WORKER = [sys.executable, str(Path(__file__).with_name("faults_worker.py"))]
# Beats every second, silent for 8 s is lost; a lost worker's lease lapses after 5 s.
FAST = {
    "WAYPOINT_JOB_HEARTBEAT_S": "1",
    "WAYPOINT_JOB_STALE_S": "8",
    "WAYPOINT_LEASE_SECONDS": "5",
    "WAYPOINT_JOB_REAP_S": "2",
}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_an_episode_whose_worker_is_killed_is_played_again_and_counted_once(
    pool, project, alice, settings, monkeypatch, worker_database_url, adb_server, tmp_path
):
    settings.WAYPOINT_JOB_STALE_S = int(FAST["WAYPOINT_JOB_STALE_S"])
    monkeypatch.setattr(
        "trajectories.jobs._send",
        lambda job_id: run_job_task.apply_async((job_id,), queue=FAULTS_QUEUE),
    )
    env = {**FAST, "ADB_SERVERS": f"127.0.0.1:{adb_server.port}", "FAULTS_QUEUE": FAULTS_QUEUE}
    doomed_log = tmp_path / "doomed.log"
    doomed = start_worker(
        doomed_log,
        worker_database_url,
        "-Q",
        FAULTS_QUEUE,
        program=FAULTS_WORKER,
        STALL_AFTER_STEPS="2",
        **env,
    )
    try:
        run = do_start_run(
            project, alice, agent="solver", tasks=["freshcart-order-number"], seeds="3"
        )
        wait_until(
            lambda: b"2 steps recorded, stalling" in doomed_log.read_bytes(),
            timeout=120,
            what="the episode to stall",
        )
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(timeout=20)
    finally:
        if doomed.poll() is None:
            doomed.kill()
    [episode] = Episode.objects.filter(run=run)
    assert (episode.status, episode.starts) == ("running", 1)
    lost = episode.trajectory
    assert (lost.status, lost.step_count) == ("recording", 2)

    rescuer = start_worker(
        tmp_path / "rescuer.log",
        worker_database_url,
        "-Q",
        FAULTS_QUEUE,
        program=FAULTS_WORKER,
        **env,
    )
    try:
        job = wait_for_job(run.job_id, timeout=240)
    finally:
        stop_worker(rescuer)
    assert job.status == "succeeded", job.message
    assert job.counts == {"episodes": 1, "succeeded": 1}
    [episode] = Episode.objects.filter(run=run)  # still one row: counted once
    assert (episode.status, episode.success, episode.starts) == ("finished", True, 2)
    assert episode.trajectory_id != lost.pk
    lost.refresh_from_db()
    assert lost.status == "interrupted"  # the lost play is kept as it was left
    assert Trajectory.objects.filter(project=project, source="solver").count() == 2
    assert AuditEvent.objects.filter(kind=events.EPISODE_RERUN).count() == 1


@pytest.mark.django_db
def test_a_job_run_while_its_episode_is_played_waits_for_it(project, alice, monkeypatch):
    """A redelivered episode message can start the episode before its run's job runs: the job
    then has nothing to send but must not end with the episode uncounted; the episode's end
    ends it."""
    monkeypatch.setattr(
        "agents.services.check_pool",
        lambda project, devices: [{"serial": "emulator-5554", "adb_server": "127.0.0.1:5037"}],
    )
    monkeypatch.setattr("trajectories.jobs._send", lambda job_id: None)
    run = do_start_run(project, alice, agent="solver", tasks=["freshcart-order-number"], seeds="3")
    [episode] = Episode.objects.filter(run=run)
    playing = runner.claim_episode(episode.pk)  # another worker's, heartbeat fresh

    job = jobs.claim(run.job_id)
    sent: list[int] = []
    monkeypatch.setattr(runner, "send_episode", sent.append)
    assert runner.run_agent_run(job, None) == jobs.DETACHED
    assert sent == []
    assert Job.objects.get(pk=job.pk).status == JobStatus.RUNNING

    runner.finish_episode(playing, runner.Played(success=True, steps=4), 1.0)
    job.refresh_from_db()
    assert (job.status, job.counts) == (JobStatus.SUCCEEDED, {"episodes": 1, "succeeded": 1})
