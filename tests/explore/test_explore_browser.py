"""In Chromium: a person starts an exploration from its page and watches it map the app."""

from __future__ import annotations

import pytest

from tests.conftest import shot

pytestmark = [pytest.mark.worker, pytest.mark.usefixtures("agent_worker")]


def test_a_person_explores_an_app_and_watches_its_states_appear(
    live_server, browser, pool, project, alice
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit]")

    page.goto(f"{live_server.url}/projects/{project.pk}/explorations/")
    page.fill("#id_app", "com.waypoint.nothing")
    page.select_option("#id_device", pool.serial)
    page.fill("#id_budget", "40")
    page.click("text=Start exploring")
    assert f"app: 'com.waypoint.nothing' is not installed on device {pool.serial}" in (
        page.inner_text("[role=alert]")
    )
    shot(page, "explore-refused")

    page.fill("#id_app", "com.waypoint.mailbox")
    page.click("text=Start exploring")
    page.wait_for_url("**/explorations/*/")
    # The page polls while the walk goes on, and stops once it is done.
    page.wait_for_selector("#exploration-live .pill.job-finished", timeout=240_000)
    assert page.inner_text("[data-testid=states]") == "2"
    assert page.inner_text("[data-testid=frontier]") == "0"
    states = page.locator("table[aria-label=States] tbody tr")
    assert states.count() == 2
    assert "a list of 12 mail rows" in states.first.inner_text()
    assert "Tap “🗑”" in page.inner_text("table[aria-label=States]")  # refused: deny-list
    assert "App graph v1" in page.inner_text("#exploration-live")
    shot(page, "explore-exploration")
