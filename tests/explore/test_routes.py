"""The virtual apps' true pages, for scoring explorations: the device names the page it shows
(``waypoint route``), every app with routes declares them, and the explorer never asks."""

from __future__ import annotations

import json
import re

from devices.virtual.apps import APPS_DIR
from tests.devices.conftest import settled_screen, tap_node
from tests.packages import ROOT

MAIL = "com.waypoint.mailbox"


def route(device) -> dict:
    return json.loads(device.shell(["waypoint", "route"]))


def test_the_device_names_the_page_an_app_shows(device):
    device.shell(["monkey", "-p", MAIL, "-c", "android.intent.category.LAUNCHER", "1"])
    settled_screen(device)
    assert route(device) == {"package": MAIL, "route": "inbox"}
    tap_node(device, **{"resource-id": f"{MAIL}:id/mail_0"})
    settled_screen(device)
    assert route(device) == {"package": MAIL, "route": "message"}
    device.keyevent("BACK")
    device.keyevent("BACK")
    settled_screen(device)
    assert route(device) == {"package": "com.android.launcher3", "route": ""}


def test_every_declared_link_joins_two_declared_pages():
    declared = sorted(APPS_DIR.glob("*/routes.json"))
    assert len(declared) == 12  # every app but the harness's Answers
    for path in declared:
        routes = json.loads(path.read_text())
        assert len(routes["pages"]) >= 2, path.parent.name
        assert {p for link in routes["links"] for p in link} == set(routes["pages"]), path
        page = (path.parent / "index.html").read_text()
        assert "window.wpRoute = " in page, path.parent.name


def test_the_explorer_never_runs_the_devices_own_commands():
    """The walk sees screens and XML; the routes are for the benchmark that scores it."""
    source = "".join(p.read_text() for p in (ROOT / "explore").rglob("*.py"))
    assert not re.search(r"""["']waypoint["']""", source)
    assert "route" not in re.sub(r"routes?\.json|wpRoute", "", source).lower()
