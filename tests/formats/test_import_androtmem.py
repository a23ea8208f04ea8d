"""The androtmem import: AndroTMem-Bench task records and images become trajectories with their
anchors and links, and an androtmem export imported again exports to the same bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from formats.catalogue import IMPORTERS, export_trajectories, import_trajectories
from formats.imported import missing_screenshot
from tests.trajectories.builders import make_record, png
from trajectories.blobs import read_blob
from trajectories.models import Anchor, AnchorLink, Step, Trajectory
from trajectories.records import ScreenRecord, StepRecord
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
SCORER = REPO / "bench" / "standin_androtmem_scorer.py"
W, H = 120, 240


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def export(project, dest: Path) -> Path:
    export_trajectories(Trajectory.objects.filter(project=project), dest, "androtmem")
    return dest


def step(index: int, form: dict, status=(), links=(), image: str | None = None) -> dict:
    """One step as AndroTMem-Bench writes it (evaluation/evaluate_predictions.py reads it)."""
    return {
        "step_index": index,
        "image_name": image if image is not None else f"task_001/step_{index:03d}.png",
        "actionForm": form,
        "extra_info": {"status": list(status), "links": list(links)},
    }


def anchor(key: str, kind: str, content_en: str, content: str = "", description: str = ""):
    return {
        "id": key,
        "type": kind,
        "content": content or content_en,
        "content_en": content_en,
        "description": description,
        "description_en": description,
        "evidence": "the price label",
    }


def native_task() -> dict:
    """A task as AndroTMem-Bench releases it: links name steps or anchors as their source."""
    return {
        "task_id": "task_001",
        "instruction": "在商店里买最便宜的耳机",
        "instruction_en": "Buy the cheapest headphones",
        "primary_intent": "Purchase / Order",
        "steps": [
            step(
                0,
                {"action": "open_app", "bbox": None, "value": "Shop", "direction": ""},
                status=[anchor("s0", "subgoal", "[Subgoal] open the shop", "[子目标] 打开商店")],
            ),
            step(
                1,
                {"action": "tap", "bbox": [10, 100, 110, 140], "value": "", "direction": ""},
                status=[anchor("s1", "context_info", "[Context Info] price 12.50")],
                links=[{"source": 0, "type": "enables", "is_critical": True}],
            ),
            step(2, {"action": "swipe", "bbox": None, "value": "", "direction": "up"}),
            step(3, {"action": "text", "bbox": None, "value": "Héllo ", "direction": ""}),
            step(
                4,
                {"action": "finish", "bbox": None, "value": "", "direction": ""},
                status=[{"id": "s4", "content_en": "[Finish] bought", "description_en": "done"}],
                links=[
                    {"source": "s1", "type": "prerequisite", "is_critical": True},
                    {"source": "3", "type": "result_of", "is_critical": False},
                ],
            ),
        ],
    }


def write_native(folder: Path, tasks: list[dict], *, array: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if array:
        (folder / "bench.json").write_text(json.dumps(tasks, ensure_ascii=False), "utf-8")
    else:
        lines = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks)
        (folder / "bench.jsonl").write_text(lines, "utf-8")
    for task in tasks:
        for s in task["steps"]:
            path = folder / "images" / s["image_name"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(png(40 + s["step_index"]))
    return folder


def read(folder: Path) -> list:
    reader, _ = IMPORTERS["androtmem"]
    return [record for _, record in reader(folder, {})]


# ---------------------------------------------------------------- round trip


def test_it_is_registered_and_detected_from_a_waypoint_export(project, tmp_path):
    do_import_trajectory(project, make_record(steps=2, seed=3))
    out = export(project, tmp_path / "bench")
    Trajectory.objects.all().delete()
    counts = import_trajectories(project, out, "auto")
    assert counts == {"created": 1, "existing": 0, "steps": 2}


def test_an_export_imported_again_exports_the_same_bytes_labels_included(project, tmp_path):
    record = make_record(steps=6, seed=5)
    actions = [
        {"type": "click", "x": 60, "y": 120},
        {"type": "type", "text": "Héllo "},
        {"type": "swipe", "x": 60, "y": 200, "x2": 50, "y2": 40},
        {"type": "open_app", "package": "com.example.shop", "app_label": "Shop"},
        {"type": "key", "keycode": "KEYCODE_TAB"},
        {"type": "terminate", "status": "success"},
    ]
    record.steps = [
        StepRecord(index=i, screen=i, action=a, summary=f"step {i}", target=record.steps[0].target)
        if a["type"] == "click"
        else StepRecord(index=i, screen=i, action=a, summary=f"step {i}")
        for i, a in enumerate(actions)
    ]
    record.anchors[1]["step"] = 4  # the finish anchor before the terminate step
    record.subgoals = []
    record.metadata = {"virtual_task": "shop-cheapest", "virtual_device": {"seed": 7}}
    do_import_trajectory(project, record)
    first = export(project, tmp_path / "first")
    Trajectory.objects.all().delete()

    import_trajectories(project, first, "androtmem")
    second = export(project, tmp_path / "second")

    assert files_of(second) == files_of(first)
    links = list(AnchorLink.objects.values_list("source__key", "target__key", "critical"))
    assert links == [("a1", "a2", True)]


def test_the_scorer_gives_the_same_ams_and_tcr_on_the_reexported_copy(project, tmp_path):
    source = write_native(tmp_path / "release", [native_task()])
    import_trajectories(project, source, "androtmem")
    copy = export(project, tmp_path / "copy")
    predictions = tmp_path / "pred.jsonl"
    guesses = [
        {"action": "open_app", "value": "Shop"},
        {"action": "tap", "x": 60, "y": 120},
        {"action": "swipe", "direction": "up"},
        {"action": "text", "value": "hello"},
        {"action": "finish"},
    ]
    predictions.write_text(
        "".join(
            json.dumps({"task_id": "task_001", "step_index": i, "prediction": {"action": g}}) + "\n"
            for i, g in enumerate(guesses)
        )
    )

    def score(gt: Path) -> list[str]:
        run = subprocess.run(
            [sys.executable, str(SCORER), "--pred", str(predictions), "--gt", str(gt)],
            capture_output=True,
            text=True,
            check=True,
        )
        return [line for line in run.stdout.splitlines() if line.startswith(("AMS", "TCR"))]

    original = score(source / "bench.jsonl")
    assert original == ["AMS (Action Match):    0.8000", "TCR (Task Completion): 100.00%"]
    assert score(copy / "test.jsonl") == original


# ---------------------------------------------------------------- fields


def test_the_task_keeps_its_goal_intent_and_id(tmp_path):
    [record] = read(write_native(tmp_path / "r", [native_task()]))
    assert record.task.goal == "Buy the cheapest headphones"
    assert record.task.intent == "purchase_order"
    assert record.task.uid == "androtmem:task_001"
    assert record.metadata["androtmem"]["task_id"] == "task_001"
    assert record.uid == read(tmp_path / "r")[0].uid  # stable: a second import adds nothing


def test_a_tap_is_a_click_at_the_centre_of_its_bbox_which_is_the_target(tmp_path):
    [record] = read(write_native(tmp_path / "r", [native_task()]))
    assert record.steps[1].action == {"type": "click", "x": 60, "y": 120}
    assert record.steps[1].target == {"bounds": [10, 100, 110, 140]}


def test_a_swipe_direction_is_the_way_the_finger_moves(tmp_path):
    [record] = read(write_native(tmp_path / "r", [native_task()]))
    assert record.steps[2].action == {"type": "swipe", "x": 60, "y": 180, "x2": 60, "y2": 60}


@pytest.mark.parametrize(
    ("form", "action"),
    [
        ({"action": "text", "value": "Héllo "}, {"type": "type", "text": "Héllo "}),
        ({"action": "input_text", "value": "x"}, {"type": "type", "text": "x"}),
        ({"action": "long_press", "bbox": [0, 0, 10, 10]}, {"type": "long_press", "x": 5, "y": 5}),
        ({"action": "finish", "value": "failure"}, {"type": "terminate", "status": "failure"}),
        ({"action": "finish", "value": "12.50"}, {"type": "answer", "text": "12.50"}),
        ({"action": "need_feedback", "value": "Size?"}, {"type": "answer", "text": "Size?"}),
        ({"action": "capture_screen"}, {"type": "wait", "duration_ms": 0}),
        ({"action": "wait"}, {"type": "wait", "duration_ms": 1000}),
        ({"action": "home"}, {"type": "home"}),
        ({"action": "back"}, {"type": "back"}),
        ({"action": "open_app", "value": "com.example.shop"},
         {"type": "open_app", "package": "com.example.shop"}),
        ({"action": "swipe_two_points", "x": 5, "y": 200, "x_end": 100, "y_end": 190},
         {"type": "swipe", "x": 5, "y": 200, "x2": 100, "y2": 190}),
    ],
)  # fmt: skip
def test_every_androtmem_action_has_its_canonical_action_and_keeps_the_original(
    tmp_path, form, action
):
    task = native_task()
    task["steps"][3]["actionForm"] = form
    [record] = read(write_native(tmp_path / "r", [task]))
    assert record.steps[3].action == action
    assert record.metadata["androtmem"]["actions"][3] == form


def test_anchors_keep_their_type_content_and_the_other_language(tmp_path):
    [record] = read(write_native(tmp_path / "r", [native_task()]))
    by_id = {a["id"]: a for a in record.anchors}
    assert by_id["s0"]["type"] == "subgoal"
    assert by_id["s0"]["content"] == "[Subgoal] open the shop"
    assert by_id["s0"]["evidence"] == {"evidence": "the price label"}
    assert by_id["s4"]["type"] == "finish"  # read from "[Finish] ..." when the type is missing
    assert by_id["s4"]["description"] == "done"
    texts = record.metadata["androtmem"]["anchor_texts"]
    assert texts == {"s0": {"content": "[子目标] 打开商店"}}


def test_links_from_a_step_start_at_its_anchor_and_keep_is_critical(tmp_path):
    [record] = read(write_native(tmp_path / "r", [native_task()]))
    links = {(x["source"], x["target"], x["relation"], x["critical"]) for x in record.anchor_links}
    assert links == {
        ("s0", "s1", "enables", True),
        ("s1", "s4", "prerequisite", True),
        ("step:3", "s4", "result_of", False),
    }
    assert record.metadata["androtmem"]["implicit_anchors"] == ["step:3"]


def test_a_missing_screenshot_is_a_grey_stand_in_and_the_step_is_not_trained_on(project, tmp_path):
    task = native_task()
    task["steps"][2]["image_name"] = "task_001/gone.png"
    task["steps"][2].update(width=W, height=H)
    source = write_native(tmp_path / "r", [task])
    (source / "images" / "task_001" / "gone.png").unlink()
    import_trajectories(project, source, "androtmem")
    trajectory = Trajectory.objects.get()
    step = Step.objects.select_related("screen__screenshot").get(trajectory=trajectory, index=2)
    assert read_blob(step.screen.screenshot) == missing_screenshot(W, H)
    assert step.trainable is False
    assert trajectory.metadata["androtmem"]["missing_screenshots"] == [2]


def test_a_json_array_of_tasks_is_read_like_jsonl(tmp_path):
    [a] = read(write_native(tmp_path / "a", [native_task()]))
    [b] = read(write_native(tmp_path / "b", [native_task()], array=True))
    assert [s.action for s in a.steps] == [s.action for s in b.steps]
    assert a.anchor_links == b.anchor_links


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda t: t["steps"][1]["actionForm"].update(bbox=[10, 100, 5]),
            "bench.jsonl line 2 (task 'task_002'): steps[1].actionForm.bbox: "
            "must be [x_min, y_min, x_max, y_max], got [10, 100, 5]",
        ),
        (
            lambda t: t["steps"][2]["actionForm"].update(action="teleport"),
            "bench.jsonl line 2 (task 'task_002'): steps[2].actionForm.action: "
            "unknown AndroTMem action 'teleport'",
        ),
        (
            lambda t: t["steps"][4]["extra_info"]["links"][0].update(source="nowhere"),
            "bench.jsonl line 2 (task 'task_002'): steps[4].extra_info.links[0].source: "
            "'nowhere' names no step or anchor of this task",
        ),
        (
            lambda t: t["steps"][0]["extra_info"]["status"][0].update(type="mood"),
            "bench.jsonl line 2 (task 'task_002'): steps[0].extra_info.status[0].type: "
            "unknown anchor type 'mood' (known: subgoal, state_change, dependency, exception, "
            "context_info, finish)",
        ),
    ],
)
def test_bad_input_names_the_file_task_and_field_and_writes_nothing(
    project, tmp_path, change, message
):
    good, bad = native_task(), native_task()
    bad["task_id"] = "task_002"
    change(bad)
    source = write_native(tmp_path / "r", [good, bad])
    with pytest.raises(InvalidData) as error:
        import_trajectories(project, source, "androtmem")
    assert str(error.value) == message
    assert not Trajectory.objects.exists()
    assert not Anchor.objects.exists()


def test_a_truncated_image_is_refused_by_name(project, tmp_path):
    source = write_native(tmp_path / "r", [native_task()])
    path = source / "images" / "task_001" / "step_001.png"
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(InvalidData, match=r"steps\[1\]\.image_name \(images/task_001/step_001"):
        import_trajectories(project, source, "androtmem")
    assert not Trajectory.objects.exists()


def test_a_line_that_is_not_json_is_refused_by_file_and_line(project, tmp_path):
    source = write_native(tmp_path / "r", [native_task()])
    with open(source / "bench.jsonl", "a") as handle:
        handle.write('{"task_id": \n')
    with pytest.raises(InvalidData, match=r"^bench\.jsonl line 2: invalid JSON at column"):
        import_trajectories(project, source, "androtmem")
    assert not Trajectory.objects.exists()


def test_screens_are_taken_whole_from_their_files(tmp_path):
    [record] = read(write_native(tmp_path / "r", [native_task()]))
    screen: ScreenRecord = record.screens[1]
    assert (screen.width, screen.height) == (W, H)
    assert screen.screenshot.path.read_bytes() == png(41)
