"""A solver's run, recorded by the recorder, is a verified demonstration: its answer graded
right by the device, and its memory labelled from the environment (the variables its task
needs, at the step whose screen showed each)."""

from __future__ import annotations

import pytest

from agents.reference import solver_for
from devices.services import connect, do_import_virtual_tasks, do_take_device
from devices.virtual import load_apps
from tests.agents.episodes import record
from trajectories.models import MemoryTarget, Step

pytestmark = pytest.mark.django_db
SEED = 4


@pytest.fixture
def lease(adb_servers, device, project_device, alice):
    return do_take_device(device.serial, adb_servers[0], alice)


@pytest.mark.parametrize(
    "template_id", ["bank-pay-invoice", "flights-cheapest", "chain-code-then-account"]
)
def test_a_recorded_solver_run_is_a_labelled_demonstration(
    lease, device, project, alice, template_id
):
    device.shell(["waypoint", "reset", "--seed", str(SEED)])
    tasks = do_import_virtual_tasks(project, connect(device.serial))
    task = next(t for t in tasks if t.uid.startswith(f"virtual:{template_id}:"))
    trajectory = record(lease, task, alice, solver_for(template_id), SEED, source="solver")

    posed = load_apps(SEED).task(template_id)
    assert (trajectory.source, trajectory.outcome) == ("solver", "success")
    assert trajectory.metadata["grade"] == {"correct": True, "by": "virtual device"}
    assert trajectory.metadata["answer"] == posed.gold
    targets = {t.key: t for t in MemoryTarget.objects.filter(trajectory=trajectory)}
    assert set(targets) == set(posed.variables)
    for ref, target in targets.items():
        assert target.value == load_apps(SEED).variable(ref).value
        assert target.evidence["source"] == "environment"
        step = Step.objects.get(trajectory=trajectory, index=target.encode_step)
        assert target.value in step.memory  # the encode step's memory says it
