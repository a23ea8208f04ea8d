"""``manage.py run_benchmark`` and ``manage.py suite``."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from agents.models import Episode, Suite
from devices.models import Device

ORDER = "freshcart-order-number"


def command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


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
    said = command(
        "run_benchmark",
        "--project",
        project.pk,
        "--agent",
        "solver",
        "--tasks",
        ORDER,
        "--seeds",
        "5..6",
        "--devices",
        "2",
        "--timeout",
        "300",
    )
    [episode_a, episode_b] = Episode.objects.filter(run__project=project).order_by("seed")
    assert (episode_a.success, episode_b.success) == (True, True)
    assert episode_a.run.devices != [] and len(episode_a.run.devices) == 2
    assert "success 100.0% (2 of 2), M-Acc 100.0%, pass@1 100.0%" in said
    assert said.startswith(f"Run {episode_a.run_id} on 127.0.0.1:")
    assert not Device.objects.exists()  # the devices it started are gone again


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
