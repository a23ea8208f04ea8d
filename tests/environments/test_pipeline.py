"""The pipeline of one generated environment (issue 37): generated, inspected, solved on the
virtual device by the generic solver through adb, checked for memory, installed; a failing one
kept with its stage and reason, never installed."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from devices.services.packages import installed_versions
from environments import services
from environments.models import EnvironmentStatus, Generation, Stage
from environments.services import do_start_generation
from trajectories.models import MemoryTarget, Source, Step

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_procedural_environment_is_verified_by_the_generic_solver_and_installed(
    pool, project, alice
):
    out = io.StringIO()
    call_command(
        "generate_environments", "--count", "1", "--seed", "11", "--project", str(project.pk),
        stdout=out,
    )  # fmt: skip
    generation = Generation.objects.select_related("job").get(project=project)
    printed = out.getvalue()
    assert "verified 1 of 1 asked (1 generated, 0 failed)" in printed
    assert "distinct layouts: 1" in printed and "verified environments per hour" in printed
    [env] = generation.environments.all()
    assert (env.status, env.stage, env.reason) == (EnvironmentStatus.VERIFIED, Stage.DONE, "")
    assert generation.job.status == "succeeded"
    assert generation.job.counts == {
        "asked": 1, "verified": 1, "failed": 0, "failed_by_stage": {}
    }  # fmt: skip
    assert installed_versions()[env.slug] == {
        "label": env.label, "version": "1.0.0", "sha256": env.sha256
    }  # fmt: skip
    # The verified run is a demonstration: source solver, graded right by the device, its
    # memory labels from the environment (every value the task needs, where it showed).
    trajectory = env.trajectory
    assert (trajectory.source, trajectory.outcome) == (Source.SOLVER, "success")
    assert trajectory.metadata["grade"] == {"correct": True, "by": "virtual device"}
    memory = env.report["memory"]
    targets = set(MemoryTarget.objects.filter(trajectory=trajectory).values_list("key", flat=True))
    assert targets == set(memory["distances"])
    written = Step.objects.filter(trajectory=trajectory).exclude(memory="").count()
    assert written == len(targets)
    # It needs memory: a value has left the last 5 screens when it is used.
    assert memory["needs_memory"] and max(memory["distances"].values()) >= 5
    assert env.report["layout_hash"] and len(env.report["page_hashes"]) >= 3
    assert env.report["inspection"] == []
    # The device it was verified on keeps no package.
    assert "com.waypoint.gen." not in pool.shell(["pm", "list", "packages", "-3"])


def test_an_environment_that_needs_no_memory_is_kept_with_the_reason_and_not_installed(
    pool, project, alice, settings, monkeypatch
):
    """With a window of 40 screens no value of the task ever leaves it: the memory check
    fails the environment after the solver solved it."""
    settings.WAYPOINT_MEMORY_WINDOW = 40
    monkeypatch.setattr(services, "attempts_for", lambda count: count)
    generation = do_start_generation(project, alice, count=1, seed=11, devices=[pool.serial])
    generation = Generation.objects.select_related("job").get(pk=generation.pk)
    [env] = generation.environments.all()
    assert (env.status, env.stage) == (EnvironmentStatus.FAILED, Stage.MEMORY)
    assert env.reason.startswith("no value leaves the last 40 screens before it is used")
    assert env.trajectory.outcome == "success" and env.archive_id  # the package is kept
    assert env.slug not in installed_versions()
    assert generation.job.status == "succeeded"
    assert generation.job.counts == {
        "asked": 1, "verified": 0, "failed": 1, "failed_by_stage": {"memory": 1}
    }  # fmt: skip
