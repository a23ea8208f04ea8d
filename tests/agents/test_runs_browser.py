"""In Chromium: a person starts a run from the runs page, watches it play on the run's page,
puts two runs side by side in the matrix and opens an episode's trajectory from a cell."""

from __future__ import annotations

import pytest

from agents.models import Run
from tests.conftest import shot

pytestmark = [pytest.mark.worker, pytest.mark.usefixtures("agent_worker")]
ORDER = "freshcart-order-number"


def log_in(page, live_server) -> None:
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", "alice-password")
    page.click("button[type=submit]")


def start_run(page, live_server, project, agent: str, seeds: str, steps: int = 30) -> Run:
    page.goto(f"{live_server.url}/projects/{project.pk}/runs/")
    page.fill("#id_agent", agent)
    page.fill("#id_tasks", ORDER)
    page.fill("#id_seeds", seeds)
    page.fill("#id_max_steps", str(steps))
    page.click("text=Start run")
    page.wait_for_url("**/runs/*/")
    run = Run.objects.latest("pk")
    # The page polls while the run plays, and stops once it is done.
    page.wait_for_selector("#run-live .pill.job-succeeded", timeout=240_000)
    return run


def test_a_person_runs_agents_and_compares_them_in_the_matrix(
    live_server, browser, pool, project, alice
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, live_server)
    solver = start_run(page, live_server, project, "solver", "1..2")
    assert page.locator("#run-live .episodes a.outcome.solved").count() == 2
    shot(page, "runner-run-detail")
    rand = start_run(page, live_server, project, "random,seed=5", "1..2", steps=4)

    page.goto(f"{live_server.url}/projects/{project.pk}/runs/")
    page.check(f"input[name=runs][value='{rand.pk}']")
    page.check(f"input[name=runs][value='{solver.pk}']")
    page.click("text=Show the task × run matrix")
    matrix = page.locator("#matrix")
    assert matrix.locator("a.outcome.solved").count() == 2
    assert matrix.locator("a.outcome.failed").count() == 2
    shot(page, "runs-runs-matrix", full_page=True)

    page.click("text=Compare two runs")
    page.wait_for_url("**/runs/compare/**")
    assert "2 now solved" in page.inner_text("body")
    shot(page, "runs-compare", full_page=True)

    page.go_back()
    episode = solver.episodes.order_by("seed").first()
    matrix.locator(f"a[href='/trajectories/{episode.trajectory_id}/']").click()
    page.wait_for_url(f"**/trajectories/{episode.trajectory_id}/")
    shot(page, "runs-episode-trajectory")
    assert episode.answer in page.inner_text("body")
