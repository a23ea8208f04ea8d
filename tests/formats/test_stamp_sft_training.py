"""stamp-sft with what STAMP trains with (issue 37, §3.3-3.4): each sample's memory-required
flag b_t and balancing weight w_bal, reasoning in every <think> and where it came from, and the
steps a critic rejected masked without dropping their trajectory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.catalogue import export_trajectories
from tests.trajectories.builders import make_record
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def export(project, tmp_path: Path, name: str = "sft", **options) -> Path:
    out = tmp_path / name
    trajectories = Trajectory.objects.filter(project=project)
    export_trajectories(trajectories, out, "stamp-sft", options=options)
    return out


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def think(sample: dict) -> str:
    return sample["messages"][-1]["content"].split("<think>")[1].split("</think>")[0]


def test_a_step_without_reasoning_gets_waypoints_own_and_says_so(project, tmp_path):
    record = make_record(steps=3, seed=1)
    for step in record.steps:
        step.thought = ""
    do_import_trajectory(project, record)
    samples = lines(export(project, tmp_path) / "train.jsonl")
    assert [s["reasoning"] for s in samples] == ["template"] * 3
    assert think(samples[0]) == (
        "This screen shows what the task needs later (price is 12.50 €); it will be gone from "
        "the screen before I use it, so I keep it in memory. The next thing the task needs is "
        '"Buy 0": I tap it.'
    )
    assert think(samples[1]) == 'The next thing the task needs is "Buy 1": I tap it.'
    for sample in samples:
        assert "<think></think>" not in json.dumps(sample, ensure_ascii=False)


def test_reasoning_a_model_wrote_is_named_by_the_model(project, tmp_path):
    record = make_record(steps=2, seed=2)
    record.metadata = {"reasoning": {"model": "qwen3-vl", "prompt_version": 1,
                                     "steps": {"1": "model"}}}  # fmt: skip
    do_import_trajectory(project, record)
    samples = lines(export(project, tmp_path) / "train.jsonl")
    assert [s["reasoning"] for s in samples] == ["recorded", "model:qwen3-vl"]
    manifest = json.loads((tmp_path / "sft" / "manifest.json").read_text())
    assert manifest["counts"]["reasoning"] == {"model": 1, "recorded": 1}


def test_memory_steps_carry_b_t_and_the_balancing_weight(project, tmp_path):
    do_import_trajectory(project, make_record(steps=4, seed=3))  # 1 memory step, 3 others
    balanced = lines(export(project, tmp_path, "a") / "train.jsonl")
    assert [(s["memory_required"], s["weight"]) for s in balanced] == [
        (True, 3.0), (False, 1.0), (False, 1.0), (False, 1.0)
    ]  # fmt: skip
    chosen = lines(export(project, tmp_path, "b", memory_weight=5) / "train.jsonl")
    assert chosen[0]["weight"] == 5.0
    repeated = lines(export(project, tmp_path, "c", memory_ratio=1) / "train.jsonl")
    assert len(repeated) == 6 and {s["weight"] for s in repeated} == {1.0}
    card = (tmp_path / "a" / "README.md").read_text()
    assert "`weight` (w_bal: 3 for a memory step, 1 otherwise)" in card


def test_a_step_the_critic_rejected_is_masked_not_its_trajectory(project, tmp_path):
    record = make_record(steps=3, seed=4)
    record.steps[1].trainable = False
    record.metadata = {"critic": {"model": "judge", "steps": {
        "0": {"verdict": "accepted"}, "1": {"verdict": "rejected", "reason": "wrong button"},
        "2": {"verdict": "accepted"}}}}  # fmt: skip
    do_import_trajectory(project, record)
    out = export(project, tmp_path, k=0)
    samples = lines(out / "train.jsonl")
    assert len(samples) == 2  # steps 0 and 2; step 1 stays in the history
    assert "Step 2: Tap Buy 1" in samples[1]["messages"][1]["content"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["critic_masked_steps"] == 1
    assert (
        "steps masked by the step critic (not trainable, no sample): 1"
        in (out / "README.md").read_text()
    )


def test_the_samples_load_with_hugging_face_datasets_and_count_their_images(project, tmp_path):
    datasets = pytest.importorskip("datasets")
    record = make_record(steps=7, seed=5)
    record.steps[3].thought = ""
    do_import_trajectory(project, record)
    out = export(project, tmp_path)
    loaded = datasets.load_dataset(
        "json", data_files={"train": str(out / "train.jsonl")}, cache_dir=str(tmp_path / "hf")
    )["train"]
    assert len(loaded) == 7
    assert loaded[3]["reasoning"] == "template" and loaded[0]["memory_required"] is True
    for sample in loaded:
        text = "".join(m["content"] for m in sample["messages"])
        assert text.count("<image>") == len(sample["images"])
    info = json.loads((out / "dataset_info.json").read_text())
    assert info["waypoint_stamp_sft_train"]["columns"] == {"messages": "messages",
                                                           "images": "images"}  # fmt: skip
