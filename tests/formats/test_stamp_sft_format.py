"""The stamp-sft export: STAMP's prompt, two-tier history, targets, up-sampling, loading."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from formats.catalogue import export_trajectories
from formats.stamp_sft import SYSTEM_PROMPT
from tests.trajectories.builders import make_record, png
from trajectories.models import Trajectory
from trajectories.records import StepRecord
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db

PAPER = Path(__file__).resolve().parents[2].parent / "shared" / "papers" / "stamp-memory-world.txt"


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def image(shade: int) -> str:
    return f"images/{hashlib.sha256(png(shade)).hexdigest()}.png"


def export(project, tmp_path, name="sft", **kwargs) -> Path:
    out = tmp_path / name
    export_trajectories(Trajectory.objects.filter(project=project), out, "stamp-sft", **kwargs)
    return out


def output(i: int, memory: str = "none") -> str:
    return (
        f"<think>Press buy {i}</think>\nAction: Tap Buy {i}\nMemory: {memory}\n<tool_call>\n"
        '{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}\n'
        "</tool_call>"
    )


def test_the_system_prompt_is_table_15_verbatim():
    text = PAPER.read_text(encoding="utf-8")
    start = text.index("# Tools\nYou may call one or more functions")
    end = text.index("- If finishing, use action=terminate in the tool call.", start)
    assert (
        SYSTEM_PROMPT == text[start:end] + "- If finishing, use action=terminate in the tool call."
    )
    assert "The screen’s resolution is 1000x1000." in SYSTEM_PROMPT


def test_it_writes_one_exact_sample_per_step_with_two_tier_history(project, tmp_path):
    do_import_trajectory(project, make_record(steps=3, seed=1))
    out = export(project, tmp_path, options={"k": 1})
    samples = lines(out / "train.jsonl")
    prompt = (
        "Please generate the next move according to the UI screenshot, instruction and previous "
        "actions.\nInstruction: Buy the cheapest headphones\nPrevious actions:\n"
    )
    system = {"role": "system", "content": SYSTEM_PROMPT}
    assert samples == [
        {
            "messages": [
                system,
                {"role": "user", "content": prompt + "\n<image>"},
                {"role": "assistant", "content": output(0, "price is 12.50 €")},
            ],
            "images": [image(31)],
            "memory_required": True,
            "weight": 2.0,
            "reasoning": "recorded",
        },
        {
            "messages": [
                system,
                {"role": "user", "content": prompt + "\n<image>"},
                {"role": "assistant", "content": output(0, "price is 12.50 €")},
                {"role": "user", "content": "<image>"},
                {"role": "assistant", "content": output(1)},
            ],
            "images": [image(31), image(32)],
            "memory_required": False,
            "weight": 1.0,
            "reasoning": "recorded",
        },
        {
            "messages": [
                system,
                {
                    "role": "user",
                    "content": prompt + "Step 1: Tap Buy 0\nMemory: price is 12.50 €\n<image>",
                },
                {"role": "assistant", "content": output(1)},
                {"role": "user", "content": "<image>"},
                {"role": "assistant", "content": output(2)},
            ],
            "images": [image(32), image(33)],
            "memory_required": False,
            "weight": 1.0,
            "reasoning": "recorded",
        },
    ]
    for sample in samples:
        text = "".join(m["content"] for m in sample["messages"])
        assert text.count("<image>") == len(sample["images"])
        for name in sample["images"]:
            assert (out / name).is_file()


@pytest.mark.parametrize(
    ("step", "images", "history"),
    [(1, 1, []), (5, 5, []), (6, 6, []), (7, 6, [1]), (30, 6, list(range(1, 25)))],
)
def test_history_keeps_five_turns_in_full_and_the_rest_as_lines(
    project, tmp_path, step, images, history
):
    do_import_trajectory(project, make_record(steps=30, seed=3))
    samples = lines(export(project, tmp_path) / "train.jsonl")
    sample = samples[step - 1]
    assert len(sample["images"]) == images
    first_user = sample["messages"][1]["content"]
    numbers = [
        int(line.split(":")[0][5:]) for line in first_user.splitlines() if line.startswith("Step ")
    ]
    assert numbers == history
    # The turns kept in full are the steps right before this one, then the current step.
    assistants = [m["content"] for m in sample["messages"] if m["role"] == "assistant"]
    assert [a.split("Action: Tap Buy ")[1].split("\n")[0] for a in assistants] == [
        str(i) for i in range(step - images, step)
    ]


def test_the_assistant_target_maps_every_canonical_action_to_mobile_use(project, tmp_path):
    actions = [
        {"type": "long_press", "x": 30, "y": 60, "duration_ms": 1500},
        {"type": "swipe", "x": 60, "y": 200, "x2": 60, "y2": 40, "duration_ms": 300},
        {"type": "type", "text": "héllo"},
        {"type": "key", "keycode": "KEYCODE_VOLUME_UP"},
        {"type": "back"},
        {"type": "home"},
        {"type": "enter"},
        {"type": "open_app", "package": "com.example.shop", "app_label": "Shop"},
        {"type": "wait", "duration_ms": 2000},
        {"type": "answer", "text": "12.50"},
        {"type": "terminate", "status": "success"},
    ]
    record = make_record(steps=len(actions), seed=4)
    record.steps = [
        StepRecord(index=i, screen=i, action=a, summary="", thought="t")
        for i, a in enumerate(actions)
    ]
    record.memory_targets, record.anchors, record.anchor_links = [], [], []
    do_import_trajectory(project, record)
    samples = lines(export(project, tmp_path, options={"thought": False}) / "train.jsonl")
    calls = [
        json.loads(
            s["messages"][-1]["content"].split("<tool_call>\n")[1].split("\n</tool_call>")[0]
        )
        for s in samples
    ]
    assert [c["arguments"] for c in calls] == [
        {"action": "long_press", "coordinate": [250, 250], "time": 1.5},
        {"action": "swipe", "coordinate": [500, 833], "coordinate2": [500, 167]},
        {"action": "type", "text": "héllo"},
        {"action": "key", "text": "volume_up"},
        {"action": "system_button", "button": "Back"},
        {"action": "system_button", "button": "Home"},
        {"action": "system_button", "button": "Enter"},
        {"action": "open", "text": "Shop"},
        {"action": "wait", "time": 2.0},
        {"action": "answer", "text": "12.50"},
        {"action": "terminate", "status": "success"},
    ]
    assert samples[2]["messages"][-1]["content"] == (
        'Action: type "héllo"\nMemory: none\n<tool_call>\n'
        '{"name": "mobile_use", "arguments": {"action": "type", "text": "héllo"}}\n</tool_call>'
    )


def test_memory_steps_are_up_sampled_to_the_ratio(project, tmp_path):
    do_import_trajectory(project, make_record(steps=4, seed=5))  # 1 memory step, 3 others
    for ratio, expected in ((None, 1), (1, 3), (3, 9)):
        out = export(project, tmp_path, f"r{ratio}", options={"memory_ratio": ratio})
        samples = lines(out / "train.jsonl")
        memory = [s for s in samples if "Memory: price" in s["messages"][-1]["content"]]
        assert (len(memory), len(samples) - len(memory)) == (expected, 3)
        assert (
            json.loads((out / "manifest.json").read_text())["counts"]["memory_samples"] == expected
        )


def test_only_trainable_steps_become_samples_unless_asked(project, tmp_path):
    record = make_record(steps=3, seed=6)
    record.steps[1].trainable = False
    do_import_trajectory(project, record)
    assert len(lines(export(project, tmp_path, "a") / "train.jsonl")) == 2
    everything = export(project, tmp_path, "b", options={"trainable_only": False})
    assert len(lines(everything / "train.jsonl")) == 3


def test_images_are_resized_to_the_longest_side(project, tmp_path):
    from PIL import Image

    do_import_trajectory(project, make_record(steps=1, seed=7))
    out = export(project, tmp_path, options={"max_side": 60})
    name = lines(out / "train.jsonl")[0]["images"][0]
    assert Image.open(out / name).size == (30, 60)


def test_bad_options_are_refused_by_name(project, tmp_path):
    with pytest.raises(InvalidData, match=r"options: unknown option 'K' for stamp-sft"):
        export(project, tmp_path, options={"K": 5})
    with pytest.raises(InvalidData, match=r"options.k: must be int, got '5'"):
        export(project, tmp_path, options={"k": "5"})
    assert not list(tmp_path.iterdir())


def test_the_folder_has_a_manifest_a_card_and_llama_factory_info(project, tmp_path):
    do_import_trajectory(project, make_record(steps=2, seed=8))
    out = export(project, tmp_path, filters={"status": "annotating"})
    manifest = json.loads((out / "manifest.json").read_text())
    files = files_of(out)
    assert set(manifest["files"]) == set(files) - {"manifest.json"}
    for name, sha in manifest["files"].items():
        assert hashlib.sha256(files[name]).hexdigest() == sha
    assert manifest["format"] == "stamp-sft"
    assert manifest["schema_version"] == 1
    assert manifest["waypoint_version"] == "0.1.0"
    assert manifest["filter"] == {"status": "annotating"}
    assert manifest["split"] == {"by": "trajectory", "seed": 0, "ratios": {"train": 1.0}}
    assert manifest["counts"]["samples"] == 2
    card = (out / "README.md").read_text()
    assert "samples: 2" in card and "| com.example.shop | 2 |" in card
    assert 'load_dataset("json", data_files={"train": "train.jsonl"})' in card
    info = json.loads((out / "dataset_info.json").read_text())
    assert info["waypoint_stamp_sft_train"]["formatting"] == "sharegpt"
    assert info["waypoint_stamp_sft_train"]["tags"]["system_tag"] == "system"


def test_the_same_inputs_give_byte_identical_exports(project, tmp_path):
    do_import_trajectory(project, make_record(steps=7, seed=9))
    do_import_trajectory(project, make_record(steps=2, seed=10))
    split = {"ratios": {"train": 0.5, "test": 0.5}, "seed": 3}
    first = export(project, tmp_path, "one", split=split)
    second = export(project, tmp_path, "two", split=split)
    assert files_of(first) == files_of(second)


def test_it_loads_with_hugging_face_datasets(project, tmp_path):
    datasets = pytest.importorskip("datasets")
    do_import_trajectory(project, make_record(steps=7, seed=11))
    out = export(project, tmp_path)
    loaded = datasets.load_dataset(
        "json", data_files={"train": str(out / "train.jsonl")}, cache_dir=str(tmp_path / "hf")
    )["train"]
    assert len(loaded) == 7
    assert loaded[6]["messages"][0]["role"] == "system"
    assert all((out / name).is_file() for name in loaded[6]["images"])


def test_parquet_copies_embed_the_images_and_repeat_byte_for_byte(project, tmp_path):
    datasets = pytest.importorskip("datasets")
    do_import_trajectory(project, make_record(steps=3, seed=12))
    first = export(project, tmp_path, "p1", options={"parquet": True})
    second = export(project, tmp_path, "p2", options={"parquet": True})
    assert files_of(first) == files_of(second)
    manifest = json.loads((first / "manifest.json").read_text())
    assert "train.parquet" in manifest["files"]
    loaded = datasets.load_dataset(
        "parquet",
        data_files={"train": str(first / "train.parquet")},
        cache_dir=str(tmp_path / "hf"),
    )["train"]
    jsonl = lines(first / "train.jsonl")
    assert loaded[2]["messages"] == jsonl[2]["messages"]
    embedded = loaded[2]["image_files"]
    assert [f["path"] for f in embedded] == jsonl[2]["images"]
    assert embedded[0]["bytes"] == png(12 * 31)
    assert "datasets import Image, Sequence" in (first / "README.md").read_text()


def test_a_literal_placeholder_in_text_claims_no_image(project, tmp_path):
    """ms-swift and LLaMA-Factory count <image>/<video> in the text against the images."""
    record = make_record(steps=2, seed=3)
    record.task.goal = "Send the <image> and the <video> to Ann"
    record.steps[0].thought = "The <audio> tab"
    record.steps[1] = StepRecord(
        index=1, screen=1, action={"type": "type", "text": "see <image>"}, memory="<video> sent"
    )
    do_import_trajectory(project, record)
    samples = lines(export(project, tmp_path) / "train.jsonl")
    for sample in samples:
        text = "".join(m["content"] for m in sample["messages"])
        assert text.count("<image>") == len(sample["images"])
        assert "<video>" not in text and "<audio>" not in text
    last = samples[-1]["messages"][-1]["content"]
    call = json.loads(last.split("<tool_call>\n")[1].split("\n</tool_call>")[0])
    assert call["arguments"] == {"action": "type", "text": "see <image>"}  # typed exactly


def test_a_step_without_labels_is_described_on_the_tool_calls_screen(project, tmp_path):
    """Action: and the tool call give the same point, on GUI-Owl's 0-1000 screen."""
    record = make_record(steps=2, seed=4)
    record.steps[1] = StepRecord(
        index=1, screen=1, action={"type": "swipe", "x": 60, "y": 200, "x2": 50, "y2": 40}
    )
    record.steps[0].summary = ""
    do_import_trajectory(project, record)
    samples = lines(export(project, tmp_path) / "train.jsonl")
    first = samples[0]["messages"][-1]["content"]
    assert "Action: click at (500, 500)" in first
    assert '"coordinate": [500, 500]' in first
    second = samples[1]["messages"][-1]["content"]
    assert "Action: swipe from (500, 833) to (417, 167)" in second
    assert '"coordinate": [500, 833], "coordinate2": [417, 167]' in second
