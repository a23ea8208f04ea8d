"""Results: runs side by side, the task x run matrix (each cell opens its episode's
trajectory), two runs compared; the same on the page and in the API, to members only."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from agents.results import compare, matrix, summaries

from .builders import finished_run

pytestmark = pytest.mark.django_db
A, B = "freshcart-order-number", "ava-door-code"


@pytest.fixture
def runs(project, alice):
    before = finished_run(
        project,
        alice,
        {(A, 1): "ok", (A, 2): "step_cap", (A, 3): "ok", (B, 1): "wrong_answer"},
        agent="random",
    )
    after = finished_run(
        project,
        alice,
        {(A, 1): "ok", (A, 2): "ok", (A, 3): "invalid_output", (B, 1): "ok"},
        agent="solver",
    )
    return before, after


def test_a_runs_summary_has_success_m_acc_pass_at_k_and_failure_kinds(runs):
    before, _ = runs
    [summary] = summaries([before])
    assert summary["episodes"] == summary["finished"] == 4
    assert (summary["succeeded"], summary["success_rate"], summary["m_acc"]) == (2, 0.5, 0.5)
    # A: 2 of 3 seeds solved, B: 0 of 1. pass@1 = (2/3 + 0) / 2; pass@3 over A alone.
    assert summary["pass_at_k"]["by_k"] == [
        {"k": 1, "pass": 0.333333, "templates": 2},
        {"k": 3, "pass": 1.0, "templates": 1},
    ]
    assert summary["failures"] == {"wrong_answer": 1, "step_cap": 1}
    assert (summary["mean_steps"], summary["tokens_in"], summary["mean_seconds"]) == (7, 400, 2.5)
    assert summary["status"] == "succeeded" and summary["agent"] == "random"


def test_the_matrix_has_a_row_per_instance_and_a_cell_per_run(runs):
    before, after = runs
    table = matrix([before, after])
    assert [(r["template"], r["seed"]) for r in table["rows"]] == [(B, 1), (A, 1), (A, 2), (A, 3)]
    cells = table["rows"][2]["cells"]
    assert [(c["success"], c["failure_kind"]) for c in cells] == [(False, "step_cap"), (True, "")]
    assert all(c["trajectory_id"] for r in table["rows"] for c in r["cells"])


def test_comparing_two_runs_names_the_episodes_that_flipped(runs):
    before, after = runs
    compared = compare(before, after)
    assert [(f["template"], f["seed"]) for f in compared["fixed"]] == [(B, 1), (A, 2)]
    assert [(f["template"], f["seed"]) for f in compared["broken"]] == [(A, 3)]
    assert (compared["compared"], compared["both_succeeded"], compared["both_failed"]) == (4, 1, 0)


def test_the_runs_page_shows_runs_side_by_side_and_the_matrix_links_each_trajectory(
    runs, alice, charlie
):
    before, after = runs
    page = Client()
    page.force_login(alice)
    html = page.get(f"/projects/{before.project_id}/runs/").content.decode()
    assert f'href="/runs/{before.pk}/"' in html and f'href="/runs/{after.pk}/"' in html
    assert 'id="matrix"' not in html
    html = page.get(
        f"/projects/{before.project_id}/runs/?runs={before.pk}&runs={after.pk}"
    ).content.decode()
    assert 'id="matrix"' in html
    for episode in after.episodes.all():
        assert f'href="/trajectories/{episode.trajectory_id}/"' in html
    assert "step cap" in html and "wrong answer" in html
    assert f'href="/projects/{before.project_id}/runs/"' in html  # the project's navigation

    outsider = Client()
    outsider.force_login(charlie)
    assert outsider.get(f"/projects/{before.project_id}/runs/").status_code == 404
    assert outsider.get(f"/runs/{before.pk}/").status_code == 404


def test_the_compare_page_lists_what_flipped(runs, bob):
    before, after = runs
    page = Client()
    page.force_login(bob)
    url = f"/projects/{before.project_id}/runs/compare/?runs={before.pk}&runs={after.pk}"
    html = page.get(url).content.decode()
    assert "2 now solved" in html and "1 now failed" in html
    one = page.get(f"/projects/{before.project_id}/runs/compare/?runs={before.pk}")
    assert one.status_code == 422
    assert "runs: pick two runs to compare" in one.content.decode()


def test_the_run_page_lists_its_episodes(runs, bob):
    before, _ = runs
    page = Client()
    page.force_login(bob)
    html = page.get(f"/runs/{before.pk}/").content.decode()
    assert html.count('<td class="template">freshcart-order-number</td>') == 3
    assert "hx-get" not in html  # finished: the page does not poll


def test_the_api_gives_the_same_to_members_only(runs, alice, bob, charlie):
    before, after = runs
    project_id = before.project_id
    api = APIClient()
    api.force_authenticate(bob)
    listed = api.get(f"/api/v1/projects/{project_id}/runs/").json()
    assert [r["run"] for r in listed] == [after.pk, before.pk]
    assert listed[1] == summaries([before])[0]
    detail = api.get(f"/api/v1/runs/{before.pk}/").json()
    assert len(detail["episodes"]) == 4 and detail["success_rate"] == 0.5
    assert all(e["trajectory_id"] for e in detail["episodes"])
    table = api.get(f"/api/v1/projects/{project_id}/runs/matrix?runs={before.pk}&runs={after.pk}")
    assert table.json() == matrix([before, after])
    compared = api.get(
        f"/api/v1/projects/{project_id}/runs/compare?runs={before.pk}&runs={after.pk}"
    )
    assert [f["seed"] for f in compared.json()["fixed"]] == [1, 2]
    bad = api.get(f"/api/v1/projects/{project_id}/runs/matrix?runs=x")
    assert (bad.status_code, bad.json()) == (400, {"detail": "runs: 'x' is not a run id"})
    missing = api.get(f"/api/v1/projects/{project_id}/runs/matrix?runs=999999")
    assert (missing.status_code, missing.json()) == (
        422,
        {"detail": "runs: the project has no run 999999"},
    )

    api.force_authenticate(charlie)
    for url in (
        f"/api/v1/projects/{project_id}/runs/",
        f"/api/v1/runs/{before.pk}/",
        f"/api/v1/projects/{project_id}/runs/matrix?runs={before.pk}",
        f"/api/v1/projects/{project_id}/runs/compare?runs={before.pk}&runs={after.pk}",
    ):
        assert api.get(url).status_code == 404, url
    assert api.post(f"/api/v1/projects/{project_id}/runs/", {"agent": "solver"}).status_code == 404


def test_starting_a_run_through_the_api_says_what_is_wrong(project, alice):
    api = APIClient()
    api.force_authenticate(alice)
    url = f"/api/v1/projects/{project.pk}/runs/"
    answer = api.post(url, {"agent": "robot", "tasks": [A]}, format="json")
    assert (answer.status_code, answer.json()) == (
        422,
        {
            "detail": "agent: unknown agent 'robot' (known: openai, replay, random, solver, "
            "window, window+memory)"
        },
    )
    answer = api.post(url, {"agent": "solver", "attempts": 0}, format="json")
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("attempts:")
    answer = api.post(url, {"agent": "solver", "tasks": [A], "seeds": "1..2"}, format="json")
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith("devices: the project has no connected device")


def test_suites_are_exported_and_imported_through_the_api(project, alice, bob, charlie):
    from agents.suites import make_suite

    api = APIClient()
    api.force_authenticate(bob)
    document = make_suite("basics", "1", [A, B], [1, 2])
    url = f"/api/v1/projects/{project.pk}/suites/"
    made = api.post(url, document, format="json")
    assert (made.status_code, made.json()["instances"]) == (201, 4)
    assert api.post(url, document, format="json").status_code == 200  # the same again
    exported = api.get(f"{url}basics/1/")
    assert exported.json() == document
    assert [s["name"] for s in api.get(url).json()] == ["basics"]
    broken = api.post(url, {**document, "instances": [{"template": "x", "seed": 1}]}, format="json")
    assert (broken.status_code, broken.json()["detail"]) == (
        422,
        "instances[0].template: unknown template 'x'",
    )
    api.force_authenticate(charlie)
    assert api.get(f"{url}basics/1/").status_code == 404
    assert api.get(url).status_code == 404
    assert api.post(url, document, format="json").status_code == 404


def test_a_runs_job_page_links_the_run(runs, bob):
    before, _ = runs
    page = Client()
    page.force_login(bob)
    html = page.get(f"/jobs/{before.job_id}/").content.decode()
    assert f'href="/runs/{before.pk}/"' in html
