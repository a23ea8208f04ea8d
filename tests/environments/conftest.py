"""Generated environments on the session's virtual device, played in this process (Celery
eager): the device tests' private adb server and virtual device, a folder of installed
packages of each test's own."""

from __future__ import annotations

import pytest

from tests.devices import conftest as devices_conftest
from tests.devices.conftest import grant

adb_server = devices_conftest.adb_server
adb_servers = devices_conftest.adb_servers
device = devices_conftest.device
virtual_device = devices_conftest.virtual_device

SESSION_SEED = 7  # the session's virtual device (tests/devices/conftest.py)


@pytest.fixture
def packages(settings, tmp_path):
    """Installed app packages go to a folder of the test's own."""
    settings.WAYPOINT_PACKAGES_DIR = tmp_path / "packages"
    return settings.WAYPOINT_PACKAGES_DIR


@pytest.fixture
def eager(settings):
    """Jobs and their tasks run in this process, when their transaction commits."""
    settings.CELERY_TASK_ALWAYS_EAGER = True


@pytest.fixture
def pool(adb_servers, device, project, packages, eager):
    """The session's virtual device, granted to alice's project; back at the session's seed,
    with no package installed, afterwards."""
    grant(device.serial, project)
    yield device
    for line in device.shell(["pm", "list", "packages", "-3"]).splitlines():
        name = line.removeprefix("package:").strip()
        if name.startswith("com.waypoint.gen.") or name.startswith("com.waypoint.llm."):
            device.shell(["pm", "uninstall", name])
    device.shell(["waypoint", "reset", "--seed", str(SESSION_SEED)])
