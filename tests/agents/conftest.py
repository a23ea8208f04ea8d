"""Agent runs on real virtual devices, played by a real Celery worker that reaches them through
the session's private adb server."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.conf import settings

from tests.conftest import start_worker, stop_worker
from tests.devices import conftest as devices_conftest
from tests.devices.conftest import grant

# The device tests' fixtures: a private adb server, the virtual device, Waypoint pointed at them.
adb_server = devices_conftest.adb_server
adb_servers = devices_conftest.adb_servers
device = devices_conftest.device
project_device = devices_conftest.project_device
virtual_device = devices_conftest.virtual_device

SESSION_SEED = 7  # the session's virtual device (tests/devices/conftest.py)


def worker_env(adb_server) -> dict[str, str]:
    """The session's adb server, an LLM client quick to give up (a test server's slow
    answers time out in 3 s; one retry after 1 ms) allowed to ask the test model servers on
    loopback, and episodes that stop 50 s before their
    lease's maximum length."""
    return {
        "ADB_SERVERS": f"127.0.0.1:{adb_server.port}",
        "LLM_TIMEOUT_S": "3",
        "LLM_HTTP_RETRIES": "1",
        "LLM_BACKOFF_MS": "1",
        "WAYPOINT_EPISODE_LEASE_MARGIN_S": "50",  # an episode on a 1-min lease plays ~10 s
        "WAYPOINT_ENDPOINT_ALLOWED_HOSTS": "127.0.0.1",  # the test model servers' host
    }


@pytest.fixture(scope="session")
def agent_worker(worker_database_url, adb_server, tmp_path_factory):
    """A real Celery worker process on the test database and broker, whose device services
    use the session's adb server."""
    log = tmp_path_factory.mktemp("agent-worker") / "worker.log"
    process = start_worker(log, worker_database_url, **worker_env(adb_server))
    yield process
    stop_worker(process)
    broker_options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    if "data_folder_in" in broker_options:
        shutil.rmtree(Path(broker_options["data_folder_in"]).parent, ignore_errors=True)


@pytest.fixture
def pool(adb_servers, device, project):
    """The session's virtual device, granted to alice's project; back at the session's seed
    afterwards."""
    grant(device.serial, project)
    yield device
    device.shell(["waypoint", "reset", "--seed", str(SESSION_SEED)])
