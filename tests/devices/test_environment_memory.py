"""A virtual recording is labelled from the environment: the device knows its variables and
which screen showed them, so memory targets and step memory need no annotator."""

from __future__ import annotations

import json

import pytest

from devices.services import (
    connect,
    do_finish_recording,
    do_import_virtual_tasks,
    do_start_recording,
    do_take_device,
    record_step,
)
from devices.services.environment_memory import do_label_memory_from_environment
from devices.virtual import load_apps
from formats.catalogue import export_trajectories
from tests.devices.test_recording_seed import SESSION_SEED, open_kettle
from trajectories import events
from trajectories.labels import edits, protocol
from trajectories.models import AuditEvent, MemoryTarget, Step, Trajectory

pytestmark = pytest.mark.django_db
SEED = 5


@pytest.fixture
def lease(adb_servers, device, project_device, alice):
    lease = do_take_device(device.serial, adb_servers[0], alice)
    yield lease
    device.shell(["waypoint", "reset", "--seed", str(SESSION_SEED)])


@pytest.fixture
def kettle_task(device, project):
    tasks = do_import_virtual_tasks(project, connect(device.serial))
    return next(t for t in tasks if t.uid.startswith("virtual:cheaper-kettle-shop:"))


def test_a_recording_of_a_virtual_task_is_labelled_from_the_environment(
    lease, alice, kettle_task, tmp_path
):
    assert {
        "key": "freshcart.price_kettle",
        "description": "FreshCart's price of the Brew Pro kettle",
    }.items() <= kettle_task.memory_items[0].items()
    trajectory = do_start_recording(lease, kettle_task, alice, reset_seed=str(SEED))
    open_kettle(trajectory, alice)
    price = load_apps(SEED).variable("freshcart.price_kettle").value
    record_step(trajectory, {"type": "type", "text": f"kettle {price}"}, alice)  # carried on
    do_finish_recording(trajectory, alice, answer=load_apps(SEED).task("cheaper-kettle-shop").gold)
    assert trajectory.outcome == "success"

    [target] = MemoryTarget.objects.filter(trajectory=trajectory)
    assert (target.key, target.value, target.encode_step) == ("freshcart.price_kettle", price, 1)
    assert target.retrieve_steps == [2]  # the step that types it
    assert target.evidence["source"] == "environment" and len(target.evidence["bounds"]) == 4
    step = Step.objects.get(trajectory=trajectory, index=1)
    assert step.memory == f"FreshCart's price of the Brew Pro kettle: {price}"
    kinds = AuditEvent.objects.filter(trajectory=trajectory).values_list("kind", flat=True)
    assert list(kinds).count(events.MEMORY_FROM_ENVIRONMENT) == 2  # the targets, the step

    # With no annotator: a STAMP memory sample and a Memory-World memory item.
    everything = Trajectory.objects.filter(pk=trajectory.pk)
    export_trajectories(everything, tmp_path / "sft", "stamp-sft")
    samples = [json.loads(x) for x in (tmp_path / "sft" / "train.jsonl").read_text().splitlines()]
    assert any(
        f"Memory: FreshCart's price of the Brew Pro kettle: {price}" in s["messages"][-1]["content"]
        for s in samples
    )
    export_trajectories(everything, tmp_path / "mw", "memory-world")
    [task] = [json.loads(x) for x in (tmp_path / "mw" / "test.jsonl").read_text().splitlines()]
    assert [(i["key"], i["value"]) for i in task["memory_items"]] == [
        ("freshcart.price_kettle", price)
    ]
    # The instance can be rebuilt: its template (task seed), apps and data seed (platform
    # seed), and STAMP's task fields as the device poses them.
    assert task["task_seed"] == "cheaper-kettle-shop"
    assert task["platform_seed"]["seed"] == SEED
    assert {a["slug"] for a in task["platform_seed"]["apps"]} >= {"freshcart", "megamart"}
    assert task["must_visit"][0].startswith("freshcart: product page of the Brew Pro")
    assert task["final_action"]["output_format"] == "the name only (e.g. FreshCart)"
    assert task["guideline"].startswith("Read FreshCart's price of the Brew Pro kettle")

    # Ground truth scores 1 on everything the evaluator measures, with no human label.
    from evaluation.scoring import evaluate_files
    from tests.evaluation.test_scores_mean_what_they_say import predictions, tasks_of

    export_trajectories(everything, tmp_path / "bench", "androtmem")
    bench = tasks_of(tmp_path / "bench")
    (tmp_path / "pred.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions(bench)))
    scored = evaluate_files(tmp_path / "bench", tmp_path / "pred.jsonl")
    assert (scored["ams"], scored["tcr"], scored["answers"]["success_rate"]) == (1.0, 1.0, 1.0)
    assert scored["memory"]["m_acc"] == 1.0

    # Undoable like any edit: the step's memory, then the targets.
    trajectory.refresh_from_db()
    assert protocol.do_undo(trajectory, alice, trajectory.version)
    assert Step.objects.get(trajectory=trajectory, index=1).memory == ""
    assert protocol.do_undo(trajectory, alice, trajectory.version)
    assert not MemoryTarget.objects.filter(trajectory=trajectory).exists()


def test_a_persons_labels_are_never_replaced(lease, alice, kettle_task):
    trajectory = do_start_recording(lease, kettle_task, alice, reset_seed=str(SEED))
    open_kettle(trajectory, alice)
    do_finish_recording(trajectory, alice)
    MemoryTarget.objects.filter(trajectory=trajectory).delete()
    trajectory.refresh_from_db()
    edits.do_add_memory_target(
        trajectory,
        alice,
        trajectory.version,
        key="freshcart.price_kettle",
        value="mine",
        encode_step=1,
    )
    edits.do_update_step(trajectory, alice, trajectory.version, 1, {"memory": "my own words"})
    assert do_label_memory_from_environment(trajectory) == []
    assert MemoryTarget.objects.get(trajectory=trajectory).value == "mine"
    assert Step.objects.get(trajectory=trajectory, index=1).memory == "my own words"
