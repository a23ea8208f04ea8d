"""``manage.py run_benchmark`` and ``manage.py suite``."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from agents.models import Episode, Suite
from devices.models import Device
from tests.conftest import wait_for_job

ORDER = "freshcart-order-number"


def command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def solver_on_new_devices(project, seeds: str, devices: int, timeout: int) -> str:
    """``run_benchmark`` of the solver on ORDER, on virtual devices it starts."""
    return command(
        "run_benchmark", "--project", project.pk, "--agent", "solver", "--tasks", ORDER,
        "--seeds", seeds, "--devices", str(devices), "--timeout", str(timeout),
    )  # fmt: skip


@pytest.mark.django_db
def test_a_suite_is_made_exported_and_imported_into_another_project(project, alice, tmp_path):
    from trajectories.services import do_create_project

    said = command(
        "suite",
        "make",
        "basics",
        "1",
        "--project",
        project.pk,
        "--tasks",
        f"{ORDER},ava-door-code",
        "--seeds",
        "1..3",
    )
    assert said == "Suite basics v1: 6 instances\n"
    exported = tmp_path / "basics.json"
    command("suite", "export", "basics", "--project", project.pk, "--output", exported)
    other = do_create_project("Other lab", alice)
    assert command("suite", "import", str(exported), "--project", other.pk) == (
        "Suite basics v1: imported, 6 instances\n"
    )
    assert Suite.objects.get(project=other).document == json.loads(exported.read_text())
    assert command("suite", "list", "--project", other.pk) == "basics@1\t6\n"
    with pytest.raises(CommandError) as caught:
        command("suite", "export", "nothing", "--project", project.pk)
    assert str(caught.value) == "suite: the project has no suite 'nothing'"


@pytest.mark.worker
@pytest.mark.usefixtures("agent_worker")
@pytest.mark.django_db(transaction=True)
def test_run_benchmark_starts_virtual_devices_runs_the_agent_and_prints_its_scores(
    adb_servers, project, alice
):
    said = solver_on_new_devices(project, seeds="5..6", devices=2, timeout=300)
    [episode_a, episode_b] = Episode.objects.filter(run__project=project).order_by("seed")
    assert (episode_a.success, episode_b.success) == (True, True)
    assert episode_a.run.devices != [] and len(episode_a.run.devices) == 2
    assert "success 100.0% (2 of 2), M-Acc 100.0%, pass@1 100.0%" in said
    assert said.startswith(f"Run {episode_a.run_id} on 127.0.0.1:")
    assert f"Run {episode_a.run_id} (solver, tasks {ORDER}): succeeded\n" in said
    assert not Device.objects.exists()  # the devices it started are gone again


@pytest.mark.worker
@pytest.mark.usefixtures("agent_worker")
@pytest.mark.django_db(transaction=True)
def test_run_benchmark_that_gives_up_waiting_leaves_no_episode_to_wait_for_a_gone_device(
    adb_servers, project, alice
):
    """Its devices stop with it: the episodes no worker took yet end as device errors at once
    (a worker would otherwise wait for those devices), and the run's job still ends."""
    with pytest.raises(CommandError, match=r"run \d+ is not finished after 1 s"):
        solver_on_new_devices(project, seeds="1..4", devices=1, timeout=1)
    episodes = Episode.objects.filter(run__project=project).select_related("run")
    not_played = [e for e in episodes if e.message.startswith("not played")]
    assert not_played, [(e.status, e.message) for e in episodes]
    for episode in not_played:
        assert (episode.status, episode.success, episode.failure_kind) == (
            "finished",
            False,
            "device_error",
        )
        assert episode.message == "not played: the devices run_benchmark started for it stopped"
        assert episode.trajectory is None
    job = wait_for_job(episodes[0].run.job_id, timeout=120)  # the one being played ends too
    assert job.status == "succeeded" and job.counts["episodes"] == 4


@pytest.mark.django_db
def test_run_benchmark_says_what_is_wrong(project):
    with pytest.raises(CommandError) as caught:
        command("run_benchmark", "--project", project.pk, "--agent", "solver")
    assert str(caught.value) == "suite: give a suite, or task templates (tasks) and seeds"
    with pytest.raises(CommandError) as caught:
        command(
            "run_benchmark",
            "--project",
            project.pk,
            "--agent",
            "solver",
            "--devices",
            "2",
            "--no-wait",
            "--tasks",
            ORDER,
        )
    assert str(caught.value) == "--no-wait: the devices this command starts stop when it returns"
