"""The androtmem export: AndroTMem-Bench task records its released scorer reads; splits."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from formats.catalogue import export_trajectories
from tests.trajectories.builders import make_record, png
from trajectories.models import Trajectory
from trajectories.records import StepRecord
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def image(shade: int) -> str:
    return f"images/{hashlib.sha256(png(shade)).hexdigest()}.png"


def export(project, tmp_path, name="bench", fmt="androtmem", **kwargs) -> Path:
    out = tmp_path / name
    export_trajectories(Trajectory.objects.filter(project=project), out, fmt, **kwargs)
    return out


def test_it_writes_the_exact_task_record(project, tmp_path):
    record = make_record(steps=3, seed=1)
    record.steps[1] = StepRecord(index=1, screen=1, action={"type": "type", "text": "Héllo "})
    record.steps[2] = StepRecord(
        index=2, screen=2, action={"type": "swipe", "x": 60, "y": 200, "x2": 50, "y2": 40}
    )
    do_import_trajectory(project, record)
    out = export(project, tmp_path)
    [task] = lines(out / "test.jsonl")
    uid = record.uid
    assert task == {
        "task_id": uid,
        "task_uid": "task-1",
        "task_template": "task-1",
        "seed": None,
        "instruction_en": "Buy the cheapest headphones",
        "instruction": "Buy the cheapest headphones",
        "primary_intent": "Purchase / Order",
        "apps": ["com.example.shop"],
        "gold_answer": "12.50",
        "grading_rule": "exact",
        "memory_targets": [{"key": "price", "value": "12.50", "encode_step": 0}],
        "steps": [
            {
                "step_index": 0,
                "step_id": f"{uid}/0",
                "image_name": image(31),
                "width": 120,
                "height": 240,
                "summary": "Tap Buy 0",
                "actionForm": {
                    "action": "tap",
                    "bbox": [10, 100, 110, 140],
                    "point": [60, 120],
                    "value": "",
                    "direction": "",
                },
                "extra_info": {
                    "status": [
                        {
                            "id": "a1",
                            "type": "context_info",
                            "content": "price 12.50",
                            "content_en": "price 12.50",
                            "description": "needed at checkout",
                            "description_en": "needed at checkout",
                            "evidence": {},
                        }
                    ],
                    "links": [],
                },
            },
            {
                "step_index": 1,
                "step_id": f"{uid}/1",
                "image_name": image(32),
                "width": 120,
                "height": 240,
                "summary": "",
                "actionForm": {
                    "action": "text",
                    "bbox": None,
                    "point": None,
                    "value": "Héllo ",
                    "direction": "",
                },
                "extra_info": {"status": [], "links": []},
            },
            {
                "step_index": 2,
                "step_id": f"{uid}/2",
                "image_name": image(33),
                "width": 120,
                "height": 240,
                "summary": "",
                "actionForm": {
                    "action": "swipe",
                    "bbox": None,
                    "point": None,
                    "value": "",
                    "direction": "up",
                },
                "extra_info": {
                    "status": [
                        {
                            "id": "a2",
                            "type": "finish",
                            "content": "finish: bought",
                            "content_en": "finish: bought",
                            "description": "",
                            "description_en": "",
                            "evidence": {},
                        }
                    ],
                    "links": [
                        {"source": "a1", "target": "a2", "type": "enables", "is_critical": True}
                    ],
                },
            },
        ],
    }
    for i, step in enumerate(task["steps"]):
        assert (out / step["image_name"]).read_bytes() == png(31 + i)


def test_actions_outside_androtmem_are_kept_and_listed_in_the_card(project, tmp_path):
    record = make_record(steps=4, seed=2)
    actions = [
        {"type": "enter"},
        {"type": "key", "keycode": "KEYCODE_TAB"},
        {"type": "open_app", "package": "com.example.shop"},
        {"type": "answer", "text": "12.50"},
    ]
    record.steps = [StepRecord(index=i, screen=i, action=a) for i, a in enumerate(actions)]
    record.memory_targets = []
    do_import_trajectory(project, record)
    out = export(project, tmp_path)
    [task] = lines(out / "test.jsonl")
    forms = [(s["actionForm"]["action"], s["actionForm"]["value"]) for s in task["steps"]]
    assert forms == [
        ("enter", ""),
        ("key", "KEYCODE_TAB"),
        ("open_app", "com.example.shop"),
        ("finish", "12.50"),
    ]
    card = (out / "README.md").read_text()
    assert "1 `enter` step(s); 1 `key` step(s) keep their Waypoint name" in card
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["unmapped_actions"] == {"enter": 1, "key": 1}


def test_a_task_split_never_puts_one_task_in_two_splits(project, tmp_path):
    for seed in range(12):
        record = make_record(steps=1, seed=seed)
        record.task.uid = f"task-{seed % 4}"
        do_import_trajectory(project, record)
    split = {"ratios": {"train": 0.5, "test": 0.5}, "by": "task", "seed": 7}
    out = export(project, tmp_path, split=split)
    tasks = {
        name: {t["task_uid"] for t in lines(out / f"{name}.jsonl")} for name in ("train", "test")
    }
    assert tasks["train"] and tasks["test"]
    assert not tasks["train"] & tasks["test"]
    assert len(lines(out / "train.jsonl")) + len(lines(out / "test.jsonl")) == 12
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["split"] == {"by": "task", "seed": 7, "ratios": {"train": 0.5, "test": 0.5}}


def test_a_trajectory_split_follows_the_ratios_and_the_seed(project, tmp_path):
    for seed in range(10):
        do_import_trajectory(project, make_record(steps=1, seed=seed))
    split = {"ratios": {"train": 8, "test": 2}, "seed": 1}
    first = export(project, tmp_path, "a", split=split)
    assert [len(lines(first / f"{n}.jsonl")) for n in ("train", "test")] == [8, 2]
    other = export(project, tmp_path, "b", split={**split, "seed": 2})
    ids = {n: [t["task_id"] for t in lines(first / f"{n}.jsonl")] for n in ("train", "test")}
    assert ids["test"] != [t["task_id"] for t in lines(other / "test.jsonl")]


def test_a_split_by_app_keeps_each_app_in_one_split(project, tmp_path):
    for seed in range(6):
        record = make_record(steps=1, seed=seed)
        record.task.uid = f"task-{seed}"
        record.task.apps = [f"com.example.app{seed % 3}"]
        do_import_trajectory(project, record)
    out = export(project, tmp_path, split={"ratios": {"train": 2, "test": 1}, "by": "app"})
    apps = {n: {t["apps"][0] for t in lines(out / f"{n}.jsonl")} for n in ("train", "test")}
    assert not apps["train"] & apps["test"]
    assert len(apps["train"] | apps["test"]) == 3


def test_a_split_by_app_keeps_an_app_of_cross_app_tasks_in_one_split(project, tmp_path):
    """Trajectories that share any app are kept together: shop is used alone and with notes."""
    apps = [["com.shop", "com.notes"], ["com.shop"], ["com.notes", "com.mail"], ["com.maps"]]
    apps += [["com.bank"], ["com.chat"]]
    for seed, used in enumerate(apps):
        record = make_record(steps=1, seed=seed)
        record.task.uid = f"task-{seed}"
        record.task.apps = used
        do_import_trajectory(project, record)
    for seed in range(8):
        split = {"ratios": {"train": 1, "test": 1}, "by": "app", "seed": seed}
        out = export(project, tmp_path, f"s{seed}", split=split)
        used = {
            n: {app for t in lines(out / f"{n}.jsonl") for app in t["apps"]}
            for n in ("train", "test")
        }
        assert not used["train"] & used["test"], seed
        assert len(used["train"] | used["test"]) == 6


@pytest.mark.parametrize(
    ("split", "message"),
    [
        ({"ratios": {"train": 0}}, "split.ratios.train: must be a positive number, got 0"),
        ({"by": "device"}, "split.by: must be one of trajectory, task, app, got 'device'"),
        ({"seed": "x"}, "split.seed: must be an integer, got 'x'"),
        ({"ratio": {}}, "split: unknown field 'ratio' (known: ratios, by, seed)"),
    ],
)
def test_a_bad_split_is_refused_by_name(project, tmp_path, split, message):
    with pytest.raises(InvalidData, match=message.replace("(", r"\(").replace(")", r"\)")):
        export(project, tmp_path, split=split)


def test_the_manifest_lists_every_file_and_exports_are_byte_identical(project, tmp_path):
    do_import_trajectory(project, make_record(steps=3, seed=3))
    do_import_trajectory(project, make_record(steps=4, seed=4))
    first, second = export(project, tmp_path, "one"), export(project, tmp_path, "two")
    files = files_of(first)
    assert files == files_of(second)
    manifest = json.loads(files["manifest.json"])
    assert set(manifest["files"]) == set(files) - {"manifest.json"}
    for name, sha in manifest["files"].items():
        assert hashlib.sha256(files[name]).hexdigest() == sha
    assert manifest["counts"]["trajectories"] == 2
    assert manifest["counts"]["steps"] == 7
    assert "| test | 2 |" in files["README.md"].decode()


def test_it_loads_with_hugging_face_datasets(project, tmp_path):
    datasets = pytest.importorskip("datasets")
    do_import_trajectory(project, make_record(steps=3, seed=5))
    do_import_trajectory(project, make_record(steps=2, seed=6))
    out = export(project, tmp_path)
    loaded = datasets.load_dataset(
        "json", data_files={"test": str(out / "test.jsonl")}, cache_dir=str(tmp_path / "hf")
    )["test"]
    assert len(loaded) == 2
    assert all((out / s["image_name"]).is_file() for task in loaded for s in task["steps"])


def test_anchor_ids_that_look_like_step_indexes_still_lead_the_scorer_to_their_step(
    project, tmp_path
):
    """AndroTMem's scorer finds a link's source among step indexes and anchor ids alike: an
    anchor named "1" on step 0 must not be taken for step 1."""
    from evaluation.scoring import evaluate_files

    record = make_record(steps=3, seed=20)
    record.anchors[0]["id"], record.anchors[1]["id"] = "1", "2"
    record.anchor_links = [{"source": "1", "target": "2", "relation": "enables", "critical": True}]
    do_import_trajectory(project, record)
    out = export(project, tmp_path)
    [task] = lines(out / "test.jsonl")
    assert [a["id"] for s in task["steps"] for a in s["extra_info"]["status"]] == [
        "anchor:1",
        "anchor:2",
    ]
    assert task["steps"][2]["extra_info"]["links"] == [
        {"source": "anchor:1", "target": "anchor:2", "type": "enables", "is_critical": True}
    ]
    # Step 1 is wrong but outside the critical chain (step 0 -> step 2): the task completes.
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        "".join(
            json.dumps(
                {
                    "task_id": record.uid,
                    "step_index": i,
                    "prediction": {"action": {"action": "tap", "x": x, "y": 120}},
                }
            )
            + "\n"
            for i, x in ((0, 60), (1, 500), (2, 60))
        )
    )
    result = evaluate_files(out, predictions)
    assert (result["ams"], result["tcr"]) == (pytest.approx(2 / 3), 1.0)
