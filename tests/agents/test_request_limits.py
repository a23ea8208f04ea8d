"""What one request may ask of the benchmark: a run of at most WAYPOINT_MAX_RUN_EPISODES
episodes and a suite of at most WAYPOINT_MAX_SUITE_INSTANCES instances, refused by counting
(seeds ranges arithmetically, a document's instances by its list) before any instance is posed;
and a run's instances are posed by its job, in the worker, never in the request.

No worker and no device: a run's pool is stood in for, and its job's first step is called here.
``bench/bench_request_limits.py`` times the refusals.
"""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from agents import runner, services
from agents.models import Episode, Run, Suite
from agents.services import do_start_run, run_instances
from agents.suites import count_seeds, make_suite, seed_ranges
from devices.virtual import apps as virtual_apps
from trajectories.models import Job

pytestmark = pytest.mark.django_db
ORDER = "freshcart-order-number"
CODE = "ava-door-code"
POOL = [{"serial": "emulator-5554", "adb_server": "127.0.0.1:5037"}]
RUN_MOST = 6000  # the defaults (core/limits.py)
SUITE_MOST = 3000


@pytest.fixture
def posing(monkeypatch):
    """Every time the apps' data of a seed is generated to pose instances, counted; with
    ``posing.refuse`` set, any posing fails the test."""

    class Posing:
        calls = 0
        refuse = False

    real = virtual_apps.build_world

    def build_world(*args, **kwargs):
        Posing.calls += 1
        assert not Posing.refuse, "an instance was posed"
        return real(*args, **kwargs)

    monkeypatch.setattr(virtual_apps, "build_world", build_world)
    return Posing


@pytest.fixture
def api(alice):
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(alice)
    return client


def runs_url(project) -> str:
    return f"/api/v1/projects/{project.pk}/runs/"


def suites_url(project) -> str:
    return f"/api/v1/projects/{project.pk}/suites/"


# ------------------------------------------------------------------------ counting seeds


def test_seeds_are_counted_without_listing_them():
    assert seed_ranges("1..3,7") == [(1, 3), (7, 7)]
    assert count_seeds(seed_ranges("0..99999999999")) == 100_000_000_000
    assert count_seeds(seed_ranges("5..9,1..6,7,20")) == 10  # overlaps counted once
    assert count_seeds(seed_ranges(list(range(100_000)))) == 100_000


# ------------------------------------------------------------------------ runs


@pytest.mark.parametrize(
    ("tasks", "seeds", "attempts", "counted"),
    [
        ([ORDER], f"0..{RUN_MOST}", 1, f"1 template x {RUN_MOST + 1} seeds x 1 attempt are 6001"),
        ([ORDER], "0..99999999999", 1, "1 template x 100000000000 seeds x 1 attempt are "
         "100000000000"),
        ([ORDER], list(range(100_000)), 1, "1 template x 100000 seeds x 1 attempt are 100000"),
        ([ORDER, CODE], "1..1000,1001", 3, "2 templates x 1001 seeds x 3 attempts are 6006"),
    ],
    ids=["maximum+1", "0..99999999999", "100000-seeds-listed", "attempts"],
)  # fmt: skip
def test_a_run_over_the_maximum_is_refused_before_anything_is_posed(
    api, project, posing, tasks, seeds, attempts, counted
):
    posing.refuse = True
    body = {"agent": "solver", "tasks": tasks, "seeds": seeds, "attempts": attempts}
    answer = api.post(runs_url(project), body, format="json")
    assert (answer.status_code, answer.json()) == (
        400,
        {"detail": f"a run plays at most {RUN_MOST} episodes (WAYPOINT_MAX_RUN_EPISODES); "
         f"{counted}"},
    )  # fmt: skip
    assert not Run.objects.exists() and not Job.objects.exists()


def test_a_run_of_the_maximum_is_not_posed_by_its_request(api, project, posing):
    """At the maximum, the request goes on to its next check (no device here), posing nothing."""
    posing.refuse = True
    body = {"agent": "solver", "tasks": [ORDER], "seeds": f"1..{RUN_MOST}"}
    answer = api.post(runs_url(project), body, format="json")
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith("devices: the project has no connected device")


def test_the_maximum_is_a_setting(api, project, posing, settings):
    settings.WAYPOINT_MAX_RUN_EPISODES = 10
    posing.refuse = True
    body = {"agent": "solver", "tasks": [ORDER, CODE], "seeds": "1..3", "attempts": 2}
    answer = api.post(runs_url(project), body, format="json")
    assert (answer.status_code, answer.json()["detail"]) == (
        400,
        "a run plays at most 10 episodes (WAYPOINT_MAX_RUN_EPISODES); 2 templates x 3 seeds x "
        "2 attempts are 12",
    )


def test_a_run_over_a_suite_counts_its_instances_at_the_seeds_asked(project, alice, settings):
    suite, _ = services.do_import_suite(project, alice, make_suite("basics", "1", [ORDER], [1, 2]))
    settings.WAYPOINT_MAX_RUN_EPISODES = 3
    assert len(run_instances(suite, None, "2", attempts=3)) == 1
    with pytest.raises(services.InvalidData) as caught:
        run_instances(suite, None, None, attempts=2)
    assert str(caught.value) == (
        "a run plays at most 3 episodes (WAYPOINT_MAX_RUN_EPISODES); 2 instances x 2 attempts are 4"
    )
    with pytest.raises(services.InvalidData) as caught:
        run_instances(suite, None, "100..99999999999")
    assert str(caught.value) == "seeds: suite basics v1 has no instance at seeds given " + (
        "(99999999900 seeds)"
    )


def test_a_runs_instances_are_posed_by_its_job_not_its_request(project, alice, posing, monkeypatch):
    posed = make_suite("tasks", "0", [ORDER, CODE], [1, 2])["instances"]
    posing.calls = 0
    monkeypatch.setattr(services, "check_pool", lambda project, devices: POOL)
    sent: list[int] = []
    monkeypatch.setattr(runner, "send_episode", sent.append)
    run = do_start_run(project, alice, agent="solver", tasks=[ORDER, CODE], seeds="1..2")
    assert posing.calls == 0
    unposed = [{"template": t, "seed": s, "level": 3} for t in (ORDER, CODE) for s in (1, 2)]
    assert Run.objects.get(pk=run.pk).instances == unposed
    detail = APIClient()
    detail.force_authenticate(alice)
    assert detail.get(f"/api/v1/runs/{run.pk}/").json()["instances"] == unposed

    job = Job.objects.get(pk=run.job_id)
    assert runner.run_agent_run(job, None) == runner.DETACHED
    assert posing.calls == 2  # once per seed, in the worker
    assert Run.objects.get(pk=run.pk).instances == posed
    assert detail.get(f"/api/v1/runs/{run.pk}/").json()["instances"] == posed
    assert sorted(sent) == sorted(Episode.objects.filter(run=run).values_list("pk", flat=True))

    # A job run again (its worker lost) finds them posed.
    runner.run_agent_run(Job.objects.get(pk=run.job_id), None)
    assert posing.calls == 2


# ------------------------------------------------------------------------ suites


def fake_suite(count: int) -> dict:
    """A suite document of ``count`` instances that no check past the count would accept."""
    document = make_suite("big", "1", [ORDER], [1])
    document["instances"] = [
        {"template": ORDER, "seed": seed, "instruction": "?", "rule": "exact", "gold_sha256": "0"}
        for seed in range(count)
    ]
    return document


def test_a_suite_over_the_maximum_is_refused_before_anything_is_posed(api, project, posing):
    document = fake_suite(SUITE_MOST + 1)
    posing.refuse = True
    answer = api.post(suites_url(project), document, format="json")
    assert (answer.status_code, answer.json()) == (
        400,
        {
            "detail": f"instances: a suite holds at most {SUITE_MOST} instances "
            f"(WAYPOINT_MAX_SUITE_INSTANCES); this one has {SUITE_MOST + 1}"
        },
    )
    assert not Suite.objects.exists()


def test_a_suite_of_the_maximum_is_checked_and_kept(api, project, settings):
    settings.WAYPOINT_MAX_SUITE_INSTANCES = 4
    document = make_suite("basics", "1", [ORDER, CODE], [1, 2])
    assert api.post(suites_url(project), document, format="json").status_code == 201
    settings.WAYPOINT_MAX_SUITE_INSTANCES = 3
    again = api.post(suites_url(project), {**document, "version": "2"}, format="json")
    assert (again.status_code, again.json()["detail"]) == (
        400,
        "instances: a suite holds at most 3 instances (WAYPOINT_MAX_SUITE_INSTANCES); this one "
        "has 4",
    )


def test_the_commands_refuse_a_suite_over_the_maximum_before_posing(project, posing, tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(fake_suite(SUITE_MOST + 1)))
    posing.refuse = True
    with pytest.raises(CommandError) as caught:
        call_command("suite", "import", str(path), "--project", str(project.pk))
    assert str(caught.value) == (
        f"instances: a suite holds at most {SUITE_MOST} instances "
        f"(WAYPOINT_MAX_SUITE_INSTANCES); this one has {SUITE_MOST + 1}"
    )
    made = f"seeds: a suite holds at most {SUITE_MOST} instances (WAYPOINT_MAX_SUITE_INSTANCES); "
    with pytest.raises(CommandError) as caught:
        call_command("make_suite", "big", "--templates", "all", "--seeds", "1..51")
    templates = len(virtual_apps.all_templates())  # every template the device poses
    assert str(caught.value) == made + f"{templates} templates x 51 seeds are {templates * 51}"
    with pytest.raises(CommandError) as caught:
        call_command(
            "suite", "make", "big", "1", "--project", str(project.pk),
            "--tasks", ORDER, "--seeds", f"0..{SUITE_MOST}",
        )  # fmt: skip
    assert str(caught.value) == made + f"1 template x {SUITE_MOST + 1} seeds are 3001"
    assert not Suite.objects.exists()
