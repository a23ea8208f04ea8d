"""Two workers and two devices play one run together: every episode once, both devices used.
Scaling out is more workers and more devices, nothing else."""

from __future__ import annotations

import pytest

from agents.management.local_runs import VirtualPool
from agents.models import Episode
from agents.services import do_start_run
from tests.conftest import start_worker, stop_worker, wait_for_job

from .conftest import worker_env


@pytest.mark.worker
@pytest.mark.usefixtures("agent_worker")
@pytest.mark.django_db(transaction=True)
def test_two_workers_share_a_run_on_two_devices(
    adb_servers, adb_server, project, alice, worker_database_url, tmp_path
):
    second = start_worker(tmp_path / "second.log", worker_database_url, **worker_env(adb_server))
    try:
        with VirtualPool(2, "540x1200", project) as serials:
            run = do_start_run(
                project,
                alice,
                agent="solver",
                tasks=["freshcart-order-number"],
                seeds="1..6",
                devices=serials,
            )
            job = wait_for_job(run.job_id, timeout=300)
    finally:
        stop_worker(second)
    assert job.counts == {"episodes": 6, "succeeded": 6}
    played = Episode.objects.filter(run=run)
    assert all(e.starts == 1 for e in played)  # none played twice
    assert {e.device_serial for e in played} == set(serials)
    assert len({e.worker.rsplit(":", 1)[0] for e in played}) == 2  # both workers played
