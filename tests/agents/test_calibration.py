"""A suite's calibration (issue 35, point 4): its control agents' scores, on the Runs page and in
the API, and the runs that produce them."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from agents.calibration import calibration, control_specs
from agents.memory_check import mark_suite
from agents.memory_need import InstanceNeed, Use, ValueNeed
from agents.models import Episode, EpisodeStatus, Run, Suite
from agents.services import do_calibrate_suite, do_import_suite
from agents.suites import make_suite
from tests.devices.conftest import grant
from trajectories.models import Job, JobKind, JobStatus
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db
CHAIN = "chain-code-then-account"
ORDER = "freshcart-order-number"


def need(distance: int) -> InstanceNeed:
    use = Use(10, "answer", 10 - distance)
    use.needs_memory = distance >= 5
    return InstanceNeed(5, 11, [ValueNeed("mail.code", "1", uses=[use])])


@pytest.fixture
def suite(project, alice) -> Suite:
    """Two instances, checked: the chain needs memory beyond K = 5, the order number does not."""
    document = make_suite("mem", "1", [CHAIN, ORDER], [1])
    marked = mark_suite(document, {(CHAIN, 1, 3): need(9), (ORDER, 1, 3): need(0)}, 5)
    return do_import_suite(project, alice, marked)[0]


def played(project, alice, suite: Suite, spec: str, solved: dict[str, bool]) -> Run:
    """A finished run of ``spec`` over the suite, each template solved or not."""
    job = Job.objects.create(
        project=project, kind=JobKind.AGENT_RUN, status=JobStatus.SUCCEEDED, total=len(solved)
    )
    run = Run.objects.create(
        project=project, job=job, created_by=alice, agent_spec=spec, agent=spec.split(",")[0],
        suite=suite, suite_name=suite.name, suite_version=suite.version,
        instances=suite.instances,
    )  # fmt: skip
    for template, success in solved.items():
        Episode.objects.create(
            run=run, template=template, seed=1, status=EpisodeStatus.FINISHED, success=success
        )
    return run


def test_the_controls_scores_say_whether_the_suite_measures_memory(project, alice, suite):
    specs = control_specs(suite)
    assert specs == {
        "solver": "solver",
        "window+memory": "window+memory,k=5",
        "window": "window,k=5",
        "random": "random,seed=1",
    }
    played(project, alice, suite, "solver", {CHAIN: True, ORDER: True})
    played(project, alice, suite, "window,k=5", {CHAIN: True, ORDER: True})  # an older run
    window = played(project, alice, suite, "window,k=5", {CHAIN: False, ORDER: True})
    found = calibration(suite)
    assert (found["k"], found["instances"], found["need_memory"]) == (5, 2, 1)
    scores = {c["agent"]: c for c in found["controls"]}
    assert list(scores) == ["solver", "window+memory", "window", "random"]
    assert (scores["solver"]["solved"], scores["solver"]["memory_solved"]) == (2, 1)
    # The latest window run: it solves what stays in its window and fails what needs memory.
    assert scores["window"]["run"] == window.pk
    assert (scores["window"]["solved"], scores["window"]["memory_solved"]) == (1, 0)
    assert scores["window"]["expected"] == "none of those needing memory"
    assert (scores["random"]["run"], scores["random"]["status"]) == (None, "not run")


def test_an_unchecked_suite_counts_no_instance_as_needing_memory(project, alice):
    suite = do_import_suite(project, alice, make_suite("plain", "1", [ORDER], [1]))[0]
    played(project, alice, suite, "solver", {ORDER: True})
    found = calibration(suite)
    assert found["need_memory"] is None
    assert found["controls"][0]["solved"] == 1 and found["controls"][0]["memory_solved"] == 0


def test_the_api_lists_each_suite_with_its_memory_check_and_calibration(
    project, alice, bob, charlie, suite
):
    played(project, alice, suite, "solver", {CHAIN: True, ORDER: True})
    api = APIClient()
    api.force_authenticate(bob)  # a member
    [row] = api.get(f"/api/v1/projects/{project.pk}/suites/").json()
    assert (row["name"], row["version"], row["instances"], row["levels"]) == ("mem", "1", 2, [3])
    assert row["memory"]["need_memory"] == 1 and row["memory"]["k"] == 5
    assert row["calibration"]["controls"][0]["solved"] == 2
    api.force_authenticate(charlie)  # an outsider
    assert api.get(f"/api/v1/projects/{project.pk}/suites/").status_code == 404
    calibrate = f"/api/v1/projects/{project.pk}/suites/mem/1/calibrate/"
    assert api.post(calibrate).status_code == 404


def test_calibrating_without_a_device_starts_no_run(project, alice, suite):
    with pytest.raises(InvalidData):
        do_calibrate_suite(project, alice, suite)
    assert not Run.objects.exists()


def test_calibrating_queues_the_four_controls_over_the_suite(
    adb_servers, device, project, alice, suite
):
    grant(device.serial, project)  # no worker plays them here: queued, they are what is shown
    api = APIClient()
    api.force_authenticate(alice)
    answer = api.post(f"/api/v1/projects/{project.pk}/suites/mem/1/calibrate/")
    assert answer.status_code == 202, answer.content
    agents = [r["agent"] for r in answer.json()["runs"]]
    assert agents == ["solver", "window+memory,k=5", "window,k=5", "random,seed=1"]
    runs = Run.objects.filter(suite=suite)
    assert sorted(r.agent_spec for r in runs) == sorted(agents)
    assert all(Episode.objects.filter(run=r).count() == 2 for r in runs)
    # The Runs page shows the suite with its controls' runs, each linked.
    page = Client()
    page.force_login(alice)
    html = page.get(f"/projects/{project.pk}/runs/").content.decode()
    assert 'id="suites"' in html and "mem <span" in html
    for run in runs:
        assert f'href="/runs/{run.pk}/"' in html
