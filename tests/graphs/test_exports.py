"""A retrieval memory block per step in the stamp-sft and androtmem exports, leak-free."""

from __future__ import annotations

import json

import pytest

from fixtures.generate import generate_record
from formats.catalogue import check_export_request, export_trajectories
from tests.graphs.conftest import build_now, import_generated
from trajectories.models import Subgoal, Trajectory
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db


@pytest.fixture
def with_secret_task(project):
    """Four generated trajectories, and two of one task whose subgoals say SECRET."""
    others = import_generated(project, range(4))
    secret = [
        do_import_trajectory(project, generate_record(seed, steps=20, task_uid="secret"))[0]
        for seed in (10, 11)
    ]
    for subgoal in Subgoal.objects.filter(trajectory__in=secret):
        subgoal.text = f"SECRET {subgoal.text}"
        subgoal.save()
    return others, secret


def test_stamp_sft_samples_carry_the_memory_block_without_their_own_tasks_subgoals(
    project, alice, with_secret_task, tmp_path, django_capture_on_commit_callbacks
):
    others, secret = with_secret_task
    build_now(project, alice, django_capture_on_commit_callbacks, {"k": 2, "theta": 1.0})
    out = tmp_path / "sft"
    export_trajectories(
        Trajectory.objects.filter(project=project), out, "stamp-sft", options={"memory_graph": 1}
    )
    samples = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    goals = {t.task.goal: t for t in Trajectory.objects.filter(project=project)}
    seen_secret = 0
    for sample in samples:
        first_user = sample["messages"][1]["content"]
        goal = next(g for g in goals if f"Instruction: {g}\n" in first_user)
        current = sample["messages"][-2]["content"]  # the current step's user turn
        assert current.endswith("<image>")
        # The retrieved block has its own label: "Memory:" is STAMP's field in the same prompt.
        assert "Experience: " in current
        if goals[goal].task.uid == "secret":
            assert "SECRET" not in current
        seen_secret += "SECRET" in current
    assert seen_secret > 0, "other tasks' samples do get the secret task's subgoals"
    card = (out / "README.md").read_text()
    assert "the retrieval memory block of the project's memory graph v1" in card


def test_androtmem_steps_carry_a_memory_block_and_a_missing_graph_is_named(
    project, alice, with_secret_task, tmp_path, django_capture_on_commit_callbacks
):
    others, secret = with_secret_task
    build_now(project, alice, django_capture_on_commit_callbacks)
    out = tmp_path / "bench"
    everything = Trajectory.objects.filter(project=project)
    export_trajectories(
        everything, out, "androtmem", split={"ratios": {"test": 1.0}}, options={"memory_graph": 1}
    )
    records = [json.loads(line) for line in (out / "test.jsonl").read_text().splitlines()]
    for record in records:
        blocks = [step["memory_block"] for step in record["steps"]]
        assert len(blocks) == len(record["steps"])
        assert all(b.startswith("Experience:") for b in blocks)
        if record["task_uid"] == "secret":
            assert not any("SECRET" in b for b in blocks)
    with pytest.raises(InvalidData, match="options.memory_graph: the project has no graph v7"):
        export_trajectories(everything, tmp_path / "x", "androtmem", options={"memory_graph": 7})
    with pytest.raises(InvalidData, match=r"options.memory_graph: must be a graph version"):
        check_export_request("stamp-sft", {"memory_graph": "latest"}, None)
    assert check_export_request("androtmem", {"memory_graph": 1}, None)[0] == {"memory_graph": 1}
    # Without the option, nothing changes in the records.
    export_trajectories(everything, tmp_path / "plain", "androtmem")
    plain = json.loads((tmp_path / "plain" / "test.jsonl").read_text().splitlines()[0])
    assert "memory_block" not in plain["steps"][0]
