"""The gui-odyssey import: episode JSON and screenshots become cross-app trajectories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.catalogue import IMPORTERS, export_trajectories, import_trajectories
from formats.detect import detect_folder_format
from formats.imported import missing_screenshot
from tests.trajectories.builders import png
from trajectories.blobs import read_blob
from trajectories.models import Step, Trajectory
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db

W, H = 120, 240


def odyssey_step(index: int, action: str, info, ps: str = "") -> dict:
    return {
        "step": index,
        "screenshot": f"ep1_{index}.png",
        "action": action,
        "info": info,
        "ps": ps,
    }


STEPS = [
    odyssey_step(0, "CLICK", [[500, 500]]),
    odyssey_step(1, "SCROLL", [[500, 750], [500, 250]], ps="[[500, 750], [500, 500], [500, 250]]"),
    odyssey_step(2, "TEXT", "New York Fashion Week"),
    odyssey_step(3, "CLICK", "KEY_HOME"),
    odyssey_step(4, "LONG_PRESS", [[250, 125], [260, 130]]),
    odyssey_step(5, "COMPLETE", "", ps="reminder set"),
]


def episode(steps=None, episode_id: str = "ep1") -> dict:
    """An episode with the fields of GUI-Odyssey's introduction.md."""
    steps = STEPS if steps is None else steps
    return {
        "episode_id": episode_id,
        "device_info": {
            "product": "sdk_gphone64_x86_64",
            "release_version": "14",
            "sdk_version": "34",
            "h": H,
            "w": W,
            "device_name": "Pixel 7 Pro",
        },
        "task_info": {
            "category": "Multi_Apps",
            "app": ["DuckDuckGo", "TickTick"],
            "meta_task": "Search for the next {} and set a reminder.",
            "task": "Search for the next New York Fashion Week and set a reminder.",
            "instruction": "Utilize DuckDuckGo to find the dates for the next New York Fashion "
            "Week and then use TickTick to set a reminder for the event.",
        },
        "step_length": len(steps),
        "steps": steps,
    }


def dataset(tmp_path: Path, *episodes: dict) -> Path:
    folder = tmp_path / "odyssey"
    (folder / "annotations").mkdir(parents=True)
    (folder / "screenshots").mkdir()
    for ep in episodes:
        (folder / "annotations" / f"{ep['episode_id']}.json").write_text(json.dumps(ep))
        for s in ep["steps"]:
            (folder / "screenshots" / s["screenshot"]).write_bytes(png(60 + s["step"]))
    return folder


def read(folder: Path) -> list:
    reader, _ = IMPORTERS["gui-odyssey"]
    return [record for _, record in reader(folder, {})]


def test_it_is_detected_by_its_folders(tmp_path):
    assert detect_folder_format(dataset(tmp_path, episode()), "data") == "gui-odyssey"


def test_an_episode_is_a_cross_app_task_on_its_device(tmp_path):
    [record] = read(dataset(tmp_path, episode()))
    assert record.task.goal.startswith("Utilize DuckDuckGo to find the dates")
    assert record.task.apps == ["DuckDuckGo", "TickTick"]
    assert record.device == {
        "width": W,
        "height": H,
        "model": "Pixel 7 Pro",
        "android_version": "14",
    }
    meta = record.metadata["gui-odyssey"]
    assert meta["category"] == "Multi_Apps"
    assert meta["meta_task"] == "Search for the next {} and set a reminder."
    assert record.outcome == "success"
    assert record.screens[2].screenshot.path.read_bytes() == png(62)


def test_coordinates_in_thousandths_become_pixels_of_the_screenshot(tmp_path):
    [record] = read(dataset(tmp_path, episode()))
    assert record.steps[0].action == {"type": "click", "x": 60, "y": 120}


def test_a_scroll_is_a_swipe_between_its_points_and_keeps_its_path(tmp_path):
    [record] = read(dataset(tmp_path, episode()))
    assert record.steps[1].action == {"type": "swipe", "x": 60, "y": 180, "x2": 60, "y2": 60}
    original = record.metadata["gui-odyssey"]["actions"][1]
    assert original["ps"] == "[[500, 750], [500, 500], [500, 250]]"


def test_typed_text_special_keys_and_status_actions(tmp_path):
    [record] = read(dataset(tmp_path, episode()))
    assert record.steps[2].action == {"type": "type", "text": "New York Fashion Week"}
    assert record.steps[3].action == {"type": "home"}
    assert record.steps[5].action == {"type": "terminate", "status": "success"}
    assert record.metadata["gui-odyssey"]["actions"][5]["ps"] == "reminder set"


def test_a_gesture_of_several_points_presses_the_first_and_keeps_them_all(tmp_path):
    [record] = read(dataset(tmp_path, episode()))
    assert record.steps[4].action == {"type": "long_press", "x": 30, "y": 30}
    assert record.metadata["gui-odyssey"]["actions"][4]["info"] == [[250, 125], [260, 130]]


@pytest.mark.parametrize(
    ("action", "info", "canonical"),
    [
        ("CLICK", "KEY_BACK", {"type": "back"}),
        ("CLICK", "KEY_APPSELECT", {"type": "key", "keycode": "KEYCODE_APP_SWITCH"}),
        ("INCOMPLETE", "", {"type": "terminate", "status": "failure"}),
        ("IMPOSSIBLE", "", {"type": "terminate", "status": "failure"}),
        ("TYPE", "hi", {"type": "type", "text": "hi"}),
        ("HOME", "", {"type": "home"}),
        ("BACK", "", {"type": "back"}),
        ("SCROLL", [[1000, 500], [0, 500]],
         {"type": "swipe", "x": 119, "y": 120, "x2": 0, "y2": 120}),
    ],
)  # fmt: skip
def test_every_action_has_its_canonical_action(tmp_path, action, info, canonical):
    [record] = read(dataset(tmp_path, episode([odyssey_step(0, action, info)])))
    assert record.steps[0].action == canonical


def test_a_missing_screenshot_is_a_grey_stand_in_of_the_device_size(project, tmp_path):
    folder = dataset(tmp_path, episode())
    (folder / "screenshots" / "ep1_3.png").unlink()
    import_trajectories(project, folder, "gui-odyssey")
    step = Step.objects.select_related("screen__screenshot").get(index=3)
    assert read_blob(step.screen.screenshot) == missing_screenshot(W, H)
    assert step.trainable is False
    assert Trajectory.objects.get().metadata["gui-odyssey"]["missing_screenshots"] == [3]


def test_screenshots_still_in_their_sub_folders_are_found(tmp_path):
    folder = dataset(tmp_path, episode())
    sub = folder / "screenshots" / "ep1"
    sub.mkdir()
    for path in list((folder / "screenshots").glob("*.png")):
        path.rename(sub / path.name)
    [record] = read(folder)
    assert "missing_screenshots" not in record.metadata["gui-odyssey"]


def test_it_imports_and_exports_to_every_training_format(project, tmp_path):
    counts = import_trajectories(project, dataset(tmp_path, episode()), "auto")
    assert counts == {"created": 1, "existing": 0, "steps": 6}
    for fmt in ("androtmem", "stamp-sft", "androidcontrol"):
        out = export_trajectories(Trajectory.objects.all(), tmp_path / fmt, fmt)
        assert out["trajectories"] == 1
    assert import_trajectories(project, dataset(tmp_path / "again", episode()), "auto") == {
        "created": 0,
        "existing": 1,
        "steps": 0,
    }


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (
            odyssey_step(0, "CLICK", [[500, 1500]]),
            "annotations/ep2.json (episode 'ep2'): steps[0].info[0][1]: must lie in 0-1000, "
            "got 1500",
        ),
        (
            odyssey_step(0, "DANCE", ""),
            "annotations/ep2.json (episode 'ep2'): steps[0].action: "
            "unknown GUI-Odyssey action 'DANCE'",
        ),
        (
            odyssey_step(0, "SCROLL", [[500, 500]]),
            "annotations/ep2.json (episode 'ep2'): steps[0].info: "
            "a scroll needs its start and end points",
        ),
    ],
)
def test_bad_input_names_the_file_and_field_and_writes_nothing(project, tmp_path, step, message):
    folder = dataset(tmp_path, episode(), episode([step], episode_id="ep2"))
    with pytest.raises(InvalidData) as error:
        import_trajectories(project, folder, "gui-odyssey")
    assert str(error.value) == message
    assert not Trajectory.objects.exists()
