"""The memory-world and androidcontrol exports: exact records, unmapped steps kept and listed."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from formats.catalogue import export_trajectories
from tests.trajectories.builders import XML, make_record, png
from trajectories.models import Trajectory
from trajectories.records import StepRecord
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def image(shade: int) -> str:
    return f"images/{hashlib.sha256(png(shade)).hexdigest()}.png"


def xml(label: str) -> str:
    data = XML.replace("{label}", label).encode()
    return f"xml/{hashlib.sha256(data).hexdigest()}.xml"


def export(project, tmp_path, fmt, name="out", **kwargs) -> Path:
    out = tmp_path / name
    export_trajectories(Trajectory.objects.filter(project=project), out, fmt, **kwargs)
    return out


def test_memory_world_writes_the_exact_task(project, tmp_path):
    spec = {
        "guideline": "Read the price on the product page, then submit it.",
        "must_visit": ["shop: product page", "answers: the task's answer page"],
        "output_format": "the price only",
    }
    record = make_record(
        steps=2, seed=1, metadata={"virtual_task": "t3", "seed": 42, "virtual_task_spec": spec}
    )
    do_import_trajectory(project, record)
    out = export(project, tmp_path, "memory-world")
    assert lines(out / "test.jsonl") == [
        {
            "task_id": record.uid,
            "task_uid": "task-1",
            "instruction": "Buy the cheapest headphones",
            "apps": ["com.example.shop"],
            "intent": "Purchase / Order",
            "difficulty": "L2",
            "memory_items": [
                {
                    "key": "price",
                    "value": "12.50",
                    "encode_step": 0,
                    "retrieve_steps": [1],
                    "where": {
                        "screenshot": image(31),
                        "package": "com.example.shop",
                        "evidence": {"bounds": [10, 100, 110, 140]},
                    },
                }
            ],
            "memory_specs": [{"key": "price", "description": "price of the headphones"}],
            "gold_answer": "12.50",
            "grading_rule": "exact",
            "reference_steps": 2,
            "outcome": "success",
            "environment": {
                "kind": "virtual",
                "virtual_task": "t3",
                "apps": ["com.example.shop"],
                "seed": 42,
            },
            # STAMP's task fields (appendix A.7, Table 18).
            "guideline": "Read the price on the product page, then submit it.",
            "must_visit": ["shop: product page", "answers: the task's answer page"],
            "final_action": {
                "type": "answer",
                "output_format": "the price only",
                "grading_rule": "exact",
            },
            "task_seed": "t3",
            "platform_seed": {"apps": [], "seed": 42},
        }
    ]
    assert (out / image(31)).read_bytes() == png(31)
    card = (out / "README.md").read_text()
    assert "no recorded seed (their environment cannot be rebuilt exactly):\n  0." in card


def test_memory_world_says_which_virtual_tasks_cannot_be_rebuilt(project, tmp_path):
    record = make_record(steps=1, seed=2)
    record.task.uid = "virtual:t9:abcd1234"
    do_import_trajectory(project, record)
    out = export(project, tmp_path, "memory-world")
    [task] = lines(out / "test.jsonl")
    assert task["environment"]["virtual_task"] == "t9"
    assert task["environment"]["seed"] is None
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["virtual_without_seed"] == 1


def test_androidcontrol_writes_one_exact_record_per_step(project, tmp_path):
    record = make_record(steps=3, seed=3)
    record.steps[1] = StepRecord(
        index=1,
        screen=1,
        action={"type": "swipe", "x": 60, "y": 200, "x2": 60, "y2": 40},
        summary="Scroll to the reviews",
    )
    record.steps[2] = StepRecord(
        index=2, screen=2, action={"type": "terminate", "status": "success"}
    )
    do_import_trajectory(project, record)
    out = export(project, tmp_path, "androidcontrol")
    common = {"episode_id": record.uid, "goal": "Buy the cheapest headphones"}
    screen = {"screenshot_width": 120, "screenshot_height": 240, "package": "com.example.shop"}
    assert lines(out / "train.jsonl") == [
        {
            **common,
            "step_index": 0,
            "step_instruction": "Tap Buy 0",
            "screenshot": image(93),
            **screen,
            "ui_xml": xml("Buy 0"),
            "action": {"action_type": "click", "x": 60, "y": 120},
        },
        {
            **common,
            "step_index": 1,
            "step_instruction": "Scroll to the reviews",
            "screenshot": image(94),
            **screen,
            "ui_xml": xml("Buy 1"),
            "action": {"action_type": "scroll", "direction": "down"},
        },
    ]
    # The terminate step has no AndroidControl action: kept aside and counted, not dropped.
    [unmapped] = lines(out / "unmapped.jsonl")
    assert unmapped["step_index"] == 2
    assert unmapped["action"] is None
    assert unmapped["waypoint_action"] == {"type": "terminate", "status": "success"}
    assert unmapped["split"] == "train"
    card = (out / "README.md").read_text()
    assert "| terminate | 1 |" in card
    assert (out / xml("Buy 0")).read_text() == XML.replace("{label}", "Buy 0")


def test_both_load_with_datasets_and_repeat_byte_for_byte(project, tmp_path):
    datasets = pytest.importorskip("datasets")
    do_import_trajectory(project, make_record(steps=3, seed=4))
    do_import_trajectory(project, make_record(steps=2, seed=5))
    for fmt, split in (("memory-world", "test"), ("androidcontrol", "train")):
        first = export(project, tmp_path, fmt, f"{fmt}-1")
        assert files_of(first) == files_of(export(project, tmp_path, fmt, f"{fmt}-2"))
        loaded = datasets.load_dataset(
            "json",
            data_files={split: str(first / f"{split}.jsonl")},
            cache_dir=str(tmp_path / f"hf-{fmt}"),
        )[split]
        assert len(loaded) == (2 if fmt == "memory-world" else 5)


def test_memory_world_takes_the_seed_recorded_on_the_virtual_device(project, tmp_path):
    apps = [{"slug": "freshcart", "package": "com.waypoint.freshcart", "version": "1.0"}]
    reset = make_record(
        steps=1, seed=4, metadata={"virtual_device": {"seed": 5, "apps": apps, "reset": True}}
    )
    kept = make_record(
        steps=1, seed=5, metadata={"virtual_device": {"seed": 7, "apps": apps, "reset": False}}
    )
    for record in (reset, kept):
        do_import_trajectory(project, record)
    out = export(project, tmp_path, "memory-world")
    environments = {t["task_id"]: t["environment"] for t in lines(out / "test.jsonl")}
    assert environments[reset.uid] == {
        "kind": "virtual",
        "virtual_task": None,
        "apps": ["com.example.shop"],
        "seed": 5,
        "reset": True,
        "device_apps": apps,
    }
    assert (environments[kept.uid]["seed"], environments[kept.uid]["reset"]) == (7, False)
    counts = json.loads((out / "manifest.json").read_text())["counts"]
    assert (counts["virtual"], counts["virtual_without_seed"], counts["virtual_without_reset"]) == (
        2,
        0,
        1,
    )


def test_the_cards_parquet_snippet_loads_androidcontrol_as_written(project, tmp_path):
    """The card's code, run as a reader copies it, loads the splits (unmapped steps have
    columns of their own and load apart)."""
    datasets = pytest.importorskip("datasets")
    record = make_record(steps=3, seed=6)
    record.steps[2] = StepRecord(
        index=2, screen=2, action={"type": "terminate", "status": "success"}
    )
    do_import_trajectory(project, record)
    out = tmp_path / "ac"
    export_trajectories(
        Trajectory.objects.filter(project=project),
        out,
        "androidcontrol",
        options={"parquet": True},
    )
    card = (out / "README.md").read_text()
    snippet = card.split("## Parquet")[1].split("```python\n")[1].split("```")[0]
    scope: dict = {}
    cwd = os.getcwd()
    try:
        os.chdir(out)
        exec(snippet.replace("})", "}, cache_dir='../hf')"), scope)  # noqa: S102
        assert set(scope["ds"]) == {"train"}
        assert len(scope["ds"]["train"]) == 2
        unmapped = datasets.load_dataset(
            "parquet", data_files="unmapped.parquet", cache_dir="../hf-u"
        )["train"]
        assert unmapped[0]["waypoint_action"]["type"] == "terminate"
    finally:
        os.chdir(cwd)
    assert 'data_files="unmapped.parquet"' in card


def test_androidcontrol_names_the_app_an_open_app_step_opened(project, tmp_path):
    """AndroidControl's open_app takes the app's name: the device's name for the package
    (the virtual device's apps, kept with the recording) when the step has none."""
    record = make_record(steps=2, seed=7)
    record.metadata = {
        "virtual_device": {
            "seed": 3,
            "apps": [{"slug": "shopmate", "package": "com.waypoint.shopmate", "label": "ShopMate"}],
        }
    }
    record.steps[0] = StepRecord(
        index=0, screen=0, action={"type": "open_app", "package": "com.waypoint.shopmate"}
    )
    record.steps[1] = StepRecord(
        index=1, screen=1, action={"type": "open_app", "package": "com.other", "app_label": "Other"}
    )
    do_import_trajectory(project, record)
    out = export(project, tmp_path, "androidcontrol")
    assert [r["action"] for r in lines(out / "train.jsonl")] == [
        {"action_type": "open_app", "app_name": "ShopMate"},
        {"action_type": "open_app", "app_name": "Other"},
    ]
