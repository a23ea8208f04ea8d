"""``locate`` places recorded screens of the virtual apps on their true page: scenarios of the
reference recordings recorded again on the virtual device (screenshots and all), each app's
graph built from half of them, the screens of the other half located on it, both ways round
(``tests/graphs/virtual_pages.py`` holds the answer key; ``bench/bench_appgraph_locate.py``
measures all twelve scenarios, one left out at a time)."""

from __future__ import annotations

import pytest

from tests.devices import conftest as devices_conftest
from tests.graphs.virtual_pages import inputs_of, locate_accuracy, overall, record_scenarios

adb_server = devices_conftest.adb_server
adb_servers = devices_conftest.adb_servers
device = devices_conftest.device
project_device = devices_conftest.project_device
virtual_device = devices_conftest.virtual_device

pytestmark = pytest.mark.django_db

# In pairs that open the same apps: the even ones build graphs the odd ones are located on,
# then the other way round.
SCENARIOS = [
    "notes-wifi-password",
    "notes-parking-spot",
    "chatter-noah-meeting-time",
    "chatter-ava-door-code",
    "freshcart-order-number",
    "kettle-price-note",
    "megamart-coupon",
    "cheaper-aerosound-price",
]


def test_recorded_screens_of_the_virtual_apps_are_located_on_their_true_page(
    adb_servers, project_device, project, alice
):
    recorded = record_scenarios(SCENARIOS, project_device.serial, adb_servers[0], project, alice)
    trajectories = inputs_of(recorded)
    first, second = trajectories[::2], trajectories[1::2]
    scored = set()
    for built_from, located in ((first, second), (second, first)):
        scores = locate_accuracy(built_from, located)
        right, screens = overall(scores)
        wrong = {app: s.wrong for app, s in scores.items() if s.wrong}
        print(f"located right: {right}/{screens} = {right / screens:.1%}", wrong)
        assert screens >= 30
        assert right / screens >= 0.95, wrong
        scored |= {app for app, s in scores.items() if s.screens}
    # The apps the scenarios open have their screens scored.
    apps = {"answers", "notes", "chatter", "freshcart", "megamart"}
    assert {f"com.waypoint.{app}" for app in apps} <= scored
