"""The DroidBot importer on a real DroidBot run (../shared/realdata/droidbot)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from formats.catalogue import IMPORTERS, import_trajectories
from formats.droidbot import count_trajectories, read_droidbot
from trajectories.blobs import read_blob
from trajectories.models import Screen, Step, Task, Trajectory
from trajectories.services import do_create_project
from trajectories.uixml import parse_ui_xml
from trajectories.validation import InvalidData, check_trajectory_record

REPO = Path(__file__).resolve().parents[2]
DROIDBOT = REPO.parent / "shared" / "realdata" / "droidbot"
APP = "com.yanzhenjie.album.sample"
CAMERA = "com.sec.android.app.camera"
FIRST = "2017-08-11_155427"
# Steps per trajectory, derived by chaining the 73 events over the 10 states present.
STEPS = [8, 6, 1, 4, 1, 2, 1, 2, 1]


@pytest.fixture(scope="module")
def records():
    return list(read_droidbot(DROIDBOT))


@pytest.fixture(autouse=True)
def blob_folder(settings, tmp_path):
    """Blobs written by these tests go to a throwaway folder."""
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "blobs"), "base_url": "/media/"},
        },
    }


@pytest.fixture
def project(db):
    owner = get_user_model().objects.create_user("dora", "dora@example.org", "dora-password")
    return do_create_project("DroidBot runs", owner)


def copy_run(tmp_path: Path) -> Path:
    """A writable copy of the run (the shared files are read-only)."""
    dest = tmp_path / "droidbot"
    for path in sorted(DROIDBOT.rglob("*")):
        target = dest / path.relative_to(DROIDBOT)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    return dest


# ---------------------------------------------------------------- reading


def test_registered_as_an_import_format():
    assert IMPORTERS["droidbot"] == (read_droidbot, count_trajectories)


def test_chains_the_events_into_trajectories(records):
    assert count_trajectories(DROIDBOT) == len(records) == 9
    assert [len(r.steps) for _, r in records] == STEPS
    assert sum(STEPS) == 26
    for where, record in records:
        check_trajectory_record(record, where)
        assert len(record.screens) == len(record.steps) + 1
        assert record.final_screen == len(record.steps)
        assert [s.screen for s in record.steps] == list(range(len(record.steps)))
    where, first = records[0]
    assert where.startswith(f"DroidBot trajectory 1 (events/event_{FIRST}.json .. ")
    assert first.metadata["droidbot"]["events"][:3] == [
        f"events/event_{FIRST}.json",
        "events/event_2017-08-11_155430.json",
        "events/event_2017-08-11_155434.json",
    ]


def test_first_step_is_a_click_on_the_select_image_button(records):
    record = records[0][1]
    step = record.steps[0]
    # action_check_image's bounds are [[1248, 112], [1440, 304]].
    assert step.action == {"type": "click", "x": 1344, "y": 208}
    assert step.target["resource_id"] == f"{APP}:id/action_check_image"
    assert step.target["bounds"] == [1248, 112, 1440, 304]
    assert step.target["class"] == "android.widget.TextView"
    assert step.target["content_desc"] == "Select Image"
    # The target is a node of the step's converted UI XML.
    tree = parse_ui_xml(record.screens[0].ui_xml)
    assert tree.element_at(1344, 208).to_target() == step.target
    assert step.summary == "Tap 'Select Image'"


def test_screens_keep_their_jpeg_bytes_and_real_size(records):
    record = records[0][1]
    screen = record.screens[0]
    assert screen.screenshot == (DROIDBOT / "states" / f"screen_{FIRST}.png").read_bytes()
    assert screen.screenshot[:3] == b"\xff\xd8\xff"
    assert screen.screenshot_type == "image/jpeg"
    assert (screen.width, screen.height) == (1440, 2560)
    assert (screen.package, screen.activity) == (APP, ".MainActivity")
    assert record.screens[1].activity == "com.yanzhenjie.album.AlbumActivity"
    assert len(parse_ui_xml(screen.ui_xml).elements) == 14  # the 14 views of the state
    assert record.device == {
        "width": 1440,
        "height": 2560,
        "serial": "ce041604bb5daa1d04",
        "model": "SM-G935F",
        "android_version": "7.0",
    }


def test_task_and_source(records):
    for _, record in records:
        assert record.task.uid == f"droidbot:{APP}"
        assert record.task.goal == f"Explore {APP} (DroidBot)"
        assert record.source == "imported"
    assert len({r.uid for _, r in records}) == 9


def test_cross_app_state_is_in_the_camera(records):
    last = records[-1][1]
    assert last.screens[-1].package == CAMERA
    assert last.screens[-1].activity == ".Camera"
    assert last.steps[0].action == {"type": "click", "x": 526, "y": 90}
    assert last.steps[0].target["text"] == "HDR (rich tone)"


def test_off_screen_taps_on_an_unchanged_screen_are_skipped(records):
    # DroidBot tapped the centre of inverted bounds [[0, 3306], [1440, 2560]]: y = 2933.
    skipped = records[0][1].metadata["droidbot"]["skipped"]
    assert skipped == [
        {
            "event": "events/event_2017-08-11_155437.json",
            "reason": "point (720, 2933) lies outside the 1440x2560 screen",
        },
        {
            "event": "events/event_2017-08-11_155441.json",
            "reason": "point (720, 2733) lies outside the 1440x2560 screen",
        },
    ]


def test_long_press_and_scroll(records):
    long_press = records[1][1].steps[3]
    assert long_press.action == {"type": "long_press", "x": 1344, "y": 208, "duration_ms": 2000}
    # Scroll UP on rv_content_list [[0, 320], [1440, 2560]]: the finger moves down by 4/5 h.
    scroll = records[5][1].steps[1]
    assert scroll.action == {
        "type": "swipe",
        "x": 720,
        "y": 544,
        "x2": 720,
        "y2": 2336,
        "duration_ms": 500,
    }
    assert scroll.target["resource_id"] == f"{APP}:id/rv_content_list"


def test_uids_are_stable(records):
    again = list(read_droidbot(DROIDBOT))
    assert [r.uid for _, r in again] == [r.uid for _, r in records]


# ---------------------------------------------------------------- events the run lacks


def test_keys_intents_and_breaks(tmp_path):
    """Rewrite three chained events as a key, an app launch and a broadcast."""
    run = copy_run(tmp_path)

    def rewrite(tag: str, event: dict) -> None:
        path = run / "events" / f"event_2017-08-11_{tag}.json"
        obj = json.loads(path.read_text())
        obj["event"] = event
        path.write_text(json.dumps(obj))

    rewrite("155430", {"event_type": "key", "name": "MENU"})
    rewrite("155434", {"event_type": "key", "name": "BACK"})
    rewrite(
        "155445",
        {"event_type": "intent", "intent": f"am start {APP}/{APP}.MainActivity"},
    )
    rewrite("155448", {"event_type": "intent", "intent": "am broadcast -a X"})
    records = [r for _, r in read_droidbot(run)]
    first = records[0]
    assert [s.action for s in first.steps[1:4]] == [
        {"type": "key", "keycode": "KEYCODE_MENU"},
        {"type": "back"},
        {"type": "open_app", "package": APP},
    ]
    assert first.steps[3].target is None
    # The broadcast ends the first trajectory; the next one starts at event 155451.
    assert len(first.steps) == 4
    assert records[1].metadata["droidbot"]["events"][0] == "events/event_2017-08-11_155451.json"
    assert count_trajectories(run) == len(records) == 10


# ---------------------------------------------------------------- importing


@pytest.mark.django_db
def test_import_writes_the_trajectories(project):
    counts = import_trajectories(project, DROIDBOT, "droidbot")
    assert counts == {"created": 9, "existing": 0, "steps": 26}
    assert Trajectory.objects.filter(project=project).count() == 9
    assert Step.objects.filter(trajectory__project=project).count() == 26
    assert Screen.objects.filter(trajectory__project=project).count() == 26 + 9
    task = Task.objects.get(project=project)
    assert (task.uid, task.goal) == (f"droidbot:{APP}", f"Explore {APP} (DroidBot)")

    first = Trajectory.objects.get(uid=read_uid(0))
    assert (first.source, first.step_count) == ("imported", 8)
    assert (first.screen_width, first.screen_height) == (1440, 2560)
    step = first.steps.get(index=0)
    assert (step.action_type, step.action) == ("click", {"x": 1344, "y": 208})
    assert step.target["resource_id"] == f"{APP}:id/action_check_image"
    screen = step.screen
    assert screen.screenshot.content_type == "image/jpeg"
    assert (screen.width, screen.height) == (1440, 2560)
    assert read_blob(screen.screenshot)[:3] == b"\xff\xd8\xff"
    assert parse_ui_xml(read_blob(screen.ui_xml)).package == APP
    last = Trajectory.objects.get(uid=read_uid(8))
    assert last.final_screen.package == CAMERA

    # Importing the same folder again creates nothing.
    again = import_trajectories(project, DROIDBOT, "droidbot")
    assert again == {"created": 0, "existing": 9, "steps": 0}
    assert Trajectory.objects.count() == 9
    assert Step.objects.count() == 26


def read_uid(position: int) -> str:
    return list(read_droidbot(DROIDBOT))[position][1].uid


@pytest.mark.django_db
def test_import_from_a_zip(project, tmp_path):
    archive = tmp_path / "droidbot-run.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(DROIDBOT.rglob("*")):
            if path.is_file():
                zf.write(path, f"report_{APP}/{path.relative_to(DROIDBOT).as_posix()}")
    progress = []
    counts = import_trajectories(
        project, archive, "droidbot", progress=lambda done, total: progress.append((done, total))
    )
    assert counts == {"created": 9, "existing": 0, "steps": 26}
    assert progress[-1] == (18, 18)
    # The folder itself holds the same trajectories: nothing new.
    assert import_trajectories(project, DROIDBOT, "droidbot")["existing"] == 9
    assert Trajectory.objects.count() == 9


# ---------------------------------------------------------------- bad input


def broken_import(project, run: Path) -> str:
    with pytest.raises(InvalidData) as caught:
        import_trajectories(project, run, "droidbot")
    assert Trajectory.objects.count() == 0
    assert Step.objects.count() == 0
    return str(caught.value)


@pytest.mark.django_db
def test_truncated_screenshot(project, tmp_path):
    run = copy_run(tmp_path)
    shot = run / "states" / "screen_2017-08-11_155448.png"
    shot.write_bytes(shot.read_bytes()[:50_000])
    assert broken_import(project, run) == (
        "states/screen_2017-08-11_155448.png: the image is truncated"
    )


@pytest.mark.django_db
def test_screenshot_that_is_text(project, tmp_path):
    run = copy_run(tmp_path)
    (run / "states" / "screen_2017-08-11_155430.png").write_text("not a screenshot\n")
    assert broken_import(project, run) == (
        "states/screen_2017-08-11_155430.png: not an image (expected PNG, JPEG or WebP bytes)"
    )


@pytest.mark.django_db
def test_missing_screenshot(project, tmp_path):
    run = copy_run(tmp_path)
    (run / "states" / "screen_2017-08-11_155604.png").unlink()
    assert broken_import(project, run) == (
        "states/state_2017-08-11_155604.json: its screenshot "
        "states/screen_2017-08-11_155604.png is missing"
    )


@pytest.mark.django_db
def test_corrupt_state_json(project, tmp_path):
    run = copy_run(tmp_path)
    (run / "states" / "state_2017-08-11_155513.json").write_text("{not json")
    assert broken_import(project, run) == (
        "states/state_2017-08-11_155513.json: invalid JSON "
        "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
    )


@pytest.mark.django_db
def test_corrupt_event_json(project, tmp_path):
    run = copy_run(tmp_path)
    path = run / "events" / "event_2017-08-11_155455.json"
    path.write_bytes(path.read_bytes()[:100])
    message = broken_import(project, run)
    assert message.startswith("events/event_2017-08-11_155455.json: invalid JSON (")


@pytest.mark.django_db
def test_event_without_start_state(project, tmp_path):
    run = copy_run(tmp_path)
    path = run / "events" / "event_2017-08-11_155455.json"
    obj = json.loads(path.read_text())
    del obj["start_state"]
    path.write_text(json.dumps(obj))
    assert broken_import(project, run) == (
        "events/event_2017-08-11_155455.json: field 'start_state' is required"
    )


@pytest.mark.django_db
def test_not_a_droidbot_folder(project, tmp_path):
    run = copy_run(tmp_path)
    shutil.rmtree(run / "states")
    assert broken_import(project, run) == (
        "states/: folder is missing (a DroidBot output folder has states/ and events/)"
    )
