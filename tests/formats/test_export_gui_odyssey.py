"""The gui-odyssey export: GUI-Odyssey's own layout, imported again as the same trajectories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from formats.catalogue import (
    IMPORTERS,
    check_export_request,
    import_trajectories,
)
from formats.gui_odyssey_export import thousandths
from formats.imported import missing_screenshot, on_screen
from tests.trajectories.builders import make_record, png
from trajectories.models import Job, Trajectory
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

from .exports import export_to, file_bytes, recorded_with
from .test_import_gui_odyssey import STEPS, H, W, dataset, episode, odyssey_step

pytestmark = pytest.mark.django_db


def read(folder: Path) -> list:
    reader, _ = IMPORTERS["gui-odyssey"]
    return [record for _, record in reader(folder, {})]


def shot(screen) -> bytes:
    return file_bytes(screen.screenshot)


def same(record) -> dict:
    """Everything a GUI-Odyssey episode carries, as the reader gives it."""
    return {
        "uid": record.uid,
        "task": (record.task.uid, record.task.goal, record.task.apps),
        "device": record.device,
        "outcome": record.outcome,
        "metadata": record.metadata,
        "steps": [(s.index, s.screen, s.action, s.trainable) for s in record.steps],
        "screens": [(shot(s), s.width, s.height, s.ui_xml) for s in record.screens],
    }


def second_episode() -> dict:
    """Failure, the recent-apps key, a bare point and a missing screenshot."""
    steps = [
        odyssey_step(0, "CLICK", "KEY_APPSELECT"),
        odyssey_step(1, "CLICK", [333, 667]),
        odyssey_step(2, "CLICK", "KEY_BACK"),
        odyssey_step(3, "IMPOSSIBLE", "", ps="no such event"),
    ]
    for s in steps:
        s["screenshot"] = f"ep2_{s['step']}.png"
    return episode(steps, episode_id="ep2")


def exported(project, tmp_path, name="out", **kwargs) -> Path:
    return export_to(project, tmp_path, "gui-odyssey", name, **kwargs)


def test_import_export_import_gives_the_same_trajectories(project, tmp_path):
    source = dataset(tmp_path, episode(), second_episode())
    (source / "screenshots" / "ep2_2.png").unlink()
    import_trajectories(project, source, "gui-odyssey")
    out = exported(project, tmp_path)
    before, after = read(source), read(out)
    assert [same(r) for r in after] == [same(r) for r in before]
    assert after[1].steps[2].trainable is False
    assert shot(after[1].screens[2]) == missing_screenshot(W, H)
    assert not (out / "screenshots" / "ep2_2.png").exists()


def test_the_steps_are_written_as_they_came(project, tmp_path):
    import_trajectories(project, dataset(tmp_path, episode()), "gui-odyssey")
    out = exported(project, tmp_path)
    written = json.loads((out / "annotations" / "ep1.json").read_text(encoding="utf-8"))
    original = episode()
    assert written["episode_id"] == "ep1"
    assert written["step_length"] == len(STEPS)
    assert written["steps"] == original["steps"]
    assert written["task_info"] == original["task_info"]
    info = original["device_info"]
    assert written["device_info"] == {**info, "product": ""}
    for s in written["steps"]:
        assert (out / "screenshots" / s["screenshot"]).read_bytes() == png(60 + s["step"])


def test_the_export_is_detected_and_imports_as_the_trajectories_it_came_from(project, tmp_path):
    import_trajectories(project, dataset(tmp_path, episode(), second_episode()), "gui-odyssey")
    out = exported(project, tmp_path)
    assert import_trajectories(project, out, "auto") == {"created": 0, "existing": 2, "steps": 0}


def test_an_edited_action_is_written_from_the_edit(project, tmp_path):
    import_trajectories(project, dataset(tmp_path, episode()), "gui-odyssey")
    step = Trajectory.objects.get().steps.get(index=0)
    step.action = {"x": 90, "y": 30}
    step.save(update_fields=["action"])
    written = json.loads((exported(project, tmp_path) / "annotations" / "ep1.json").read_text())
    assert written["steps"][0] == {
        "step": 0,
        "screenshot": "ep1_0.png",
        "action": "CLICK",
        "info": [[750, 125]],
        "ps": "",
    }


def recorded(project) -> Trajectory:
    """A recording with actions GUI-Odyssey has and some it has not."""
    actions = [
        {"type": "open_app", "package": "com.example.shop"},
        {"type": "click", "x": 61, "y": 119},
        {"type": "swipe", "x": 60, "y": 200, "x2": 60, "y2": 40, "duration_ms": 300},
        {"type": "type", "text": "héadphones ✓"},
        {"type": "answer", "text": "12.50"},
        {"type": "back"},
    ]
    return recorded_with(project, 4, actions)


def test_steps_it_cannot_express_are_listed_apart_and_the_rest_kept(project, tmp_path):
    trajectory = recorded(project)
    out = exported(project, tmp_path)
    uid = str(trajectory.uid)
    [record] = read(out)
    assert record.task.goal == "Buy the cheapest headphones"
    assert record.task.apps == ["com.example.shop"]
    assert record.device == {
        "width": 120,
        "height": 240,
        "model": "Pixel 8",
        "android_version": "14",
    }
    assert [s.action for s in record.steps] == [
        {"type": "click", "x": 61, "y": 119},
        {"type": "swipe", "x": 60, "y": 200, "x2": 60, "y2": 40},
        {"type": "type", "text": "héadphones ✓"},
        {"type": "back"},
    ]
    assert [shot(s) for s in record.screens] == [png(4 * 31 + i) for i in (1, 2, 3, 5)]
    unmapped = [json.loads(line) for line in (out / "unmapped.jsonl").read_text().splitlines()]
    assert unmapped == [
        {
            "episode_id": uid,
            "step_index": 0,
            "split": "train",
            "waypoint_action": {"type": "open_app", "package": "com.example.shop"},
        },
        {
            "episode_id": uid,
            "step_index": 4,
            "split": "train",
            "waypoint_action": {"type": "answer", "text": "12.50"},
        },
    ]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == "gui-odyssey"
    assert manifest["counts"]["unmapped_actions"] == {"answer": 1, "open_app": 1}
    assert f"annotations/{uid}.json" in manifest["files"]
    assert "| open_app | 1 |" in (out / "README.md").read_text()


def test_an_episode_has_gui_odysseys_fields_and_no_others(project, tmp_path):
    trajectory = recorded(project)
    out = exported(project, tmp_path)
    annotation = json.loads((out / "annotations" / f"{trajectory.uid}.json").read_text())
    assert set(annotation) == {"episode_id", "device_info", "task_info", "step_length", "steps"}
    assert {tuple(s) for s in annotation["steps"]} == {
        ("step", "screenshot", "action", "info", "ps")
    }
    assert annotation["device_info"]["sdk_version"] == "34"


def test_the_split_lists_annotation_files_as_gui_odysseys_splits_do(project, tmp_path):
    for seed in range(4):
        do_import_trajectory(project, make_record(steps=1, seed=seed))
    split = {"ratios": {"train": 0.5, "test": 0.5}, "seed": 3}
    out = exported(project, tmp_path, split=split)
    listed = json.loads((out / "splits" / "waypoint_split.json").read_text())
    assert set(listed) == {"train", "test"}
    files = sorted(listed["train"] + listed["test"])
    assert files == sorted(p.name for p in (out / "annotations").iterdir())
    assert len(files) == 4 and listed["train"] and listed["test"]


def test_every_pixel_of_a_wide_screen_maps_back_to_itself():
    for size in (120, 1080, 1440, 2960):
        for pixel in range(size):
            assert on_screen(thousandths(pixel, size) / 1000 * size, size) == pixel
    assert thousandths(60, 120) == 500


def test_it_takes_no_options(project):
    with pytest.raises(InvalidData) as error:
        check_export_request("gui-odyssey", {"parquet": True}, None)
    assert str(error.value) == (
        "options: unknown option 'parquet' for gui-odyssey (it takes no options)"
    )
    assert check_export_request("gui-odyssey", None, {"ratios": {"train": 1}}) == (
        {},
        {"ratios": {"train": 1}},
    )


def test_the_export_page_offers_it_and_queues_it_without_parquet(
    project, alice, client, django_capture_on_commit_callbacks
):
    client.force_login(alice)
    url = reverse("project-export", args=[project.pk])
    page = client.get(url).content.decode()
    assert '<option value="gui-odyssey">GUI-Odyssey (its own layout, importable again)' in page
    assert 'data-for-any="androidcontrol androtmem memory-world stamp-sft"' in page
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(url, {"format": "gui-odyssey", "parquet": "on", "status": ""})
    job = Job.objects.get()
    assert response.status_code == 302
    assert job.format == "gui-odyssey"
    assert not job.params.get("options")
