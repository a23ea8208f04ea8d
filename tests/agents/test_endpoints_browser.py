"""In Chromium: the runs page lists the model endpoints a spec may name, and a spec that names
a URL is refused on the form, saying how endpoints are registered."""

from __future__ import annotations

import pytest

from agents.models import Run
from tests.agents.builders import register_endpoint
from tests.agents.test_runs_browser import log_in
from tests.conftest import shot

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_person_sees_the_endpoints_and_cannot_name_a_url(live_server, browser, project):
    register_endpoint("http://93.184.216.34/v1", name="lab", model="owl-7b")
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, live_server)
    page.goto(f"{live_server.url}/projects/{project.pk}/runs/")
    assert page.inner_text("#endpoints") == "Model endpoints: endpoint=lab (owl-7b, site)."
    page.fill("#id_agent", "openai:mobile_use,url=http://127.0.0.1:9/v1")
    page.fill("#id_tasks", "ava-door-code")
    page.fill("#id_seeds", "1")
    page.click("text=Start run")
    page.wait_for_load_state()
    assert "a spec names no URL: a site admin registers the model endpoint" in page.inner_text(
        "#start-run"
    )
    shot(page, "runs-endpoints")
    assert not Run.objects.exists()
