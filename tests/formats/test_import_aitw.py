"""The aitw import: Android in the Wild's TFRecord steps grouped into episodes, dual-point actions
read as its action matching reads them, UI annotations as a dump."""

from __future__ import annotations

import functools
import io
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.test import override_settings
from PIL import Image

from formats.catalogue import export_trajectories, import_trajectories
from formats.detect import detect_archive_format, detect_folder_format
from formats.imported import missing_screenshot
from tests.trajectories.builders import png
from trajectories.blobs import read_blob
from trajectories.models import Step, Trajectory
from trajectories.uixml import parse_ui_xml
from trajectories.validation import InvalidData

from . import wire

pytestmark = pytest.mark.django_db

W, H = 40, 80
SHARD = "general-00000-of-00002"
# results/action_type values of android_in_the_wild/action_type.py
TYPE, DUAL_POINT, PRESS_BACK, PRESS_HOME, PRESS_ENTER = 3, 4, 5, 6, 7
COMPLETE, IMPOSSIBLE = 10, 11


def pixels(shade: int) -> bytes:
    return bytes((shade + i) % 256 for i in range(W * H * 3))


def step(
    episode_id: str,
    step_id: int,
    action_type: int,
    touch=(-1.0, -1.0),
    lift=(-1.0, -1.0),
    text: str = "",
    *,
    image: bytes | None = None,
    height: int = H,
    goal: str = "Search for running shoes",
) -> bytes:
    """One AitW step, with the features of the dataset's README."""
    image = pixels(step_id) if image is None else image
    return wire.example(
        {
            "android_api_level": wire.int64_feature(30),
            "current_activity": wire.bytes_feature(
                b"com.android.chrome/org.chromium.chrome.browser.ChromeTabbedActivity"
            ),
            "device_type": wire.bytes_feature(b"Pixel 4"),
            "episode_id": wire.bytes_feature(episode_id.encode()),
            "episode_length": wire.int64_feature(5),
            "goal_info": wire.bytes_feature(goal.encode()),
            "image/channels": wire.int64_feature(3),
            "image/height": wire.int64_feature(height),
            "image/width": wire.int64_feature(W),
            "image/encoded": wire.bytes_feature(image),
            "image/ui_annotations_positions": wire.float_feature(
                0.05, 0.1, 0.1, 0.8, 0.45, 0.4, 0.1, 0.2
            ),
            "image/ui_annotations_text": wire.bytes_feature(b"Search", b""),
            "image/ui_annotations_ui_types": wire.bytes_feature(b"TEXT", b"ICON_HOME"),
            "results/action_type": wire.int64_feature(action_type),
            "results/type_action": wire.bytes_feature(text.encode()),
            "results/yx_touch": wire.float_feature(*touch),
            "results/yx_lift": wire.float_feature(*lift),
            "step_id": wire.int64_feature(step_id),
        }
    )


def episode_a() -> list[bytes]:
    return [
        step("ep-a", 1, DUAL_POINT, (0.8, 0.5), (0.2, 0.5)),  # stored out of order
        step("ep-a", 0, DUAL_POINT, (0.5, 0.5), (0.51, 0.5)),
        step("ep-a", 2, TYPE, text="running shoes"),
        step("ep-a", 3, PRESS_ENTER),
        step("ep-a", 4, COMPLETE),
    ]


def episode_b() -> list[bytes]:
    return [
        step("ep-b", 0, PRESS_HOME, goal="Turn off wifi"),
        step("ep-b", 1, IMPOSSIBLE, goal="Turn off wifi"),
    ]


def shards(tmp_path: Path, first: list[bytes], second: list[bytes] | None = None) -> Path:
    folder = tmp_path / "aitw"
    wire.write_tfrecord(folder / SHARD, first)
    if second is not None:
        wire.write_tfrecord(folder / "general-00001-of-00002", second)
    return folder


@pytest.fixture
def read(read_folder):
    return functools.partial(read_folder, fmt="aitw")


def test_it_is_detected_by_what_its_first_record_holds(tmp_path):
    assert detect_folder_format(shards(tmp_path, episode_a()), "data") == "aitw"


def test_shards_in_the_datasets_folders_are_found_and_detected(project, tmp_path):
    folder = tmp_path / "android-in-the-wild"
    wire.write_tfrecord(folder / "general" / SHARD, episode_a())
    wire.write_tfrecord(folder / "install" / SHARD, episode_b())
    assert import_trajectories(project, folder, "auto")["created"] == 2


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_an_archive_of_shards_is_detected_from_its_first_record(tmp_path, kind):
    folder = shards(tmp_path, episode_a())
    upload = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(upload, "w") as archive:
            archive.write(folder / SHARD, f"aitw/general/{SHARD}")
    else:
        with tarfile.open(fileobj=upload, mode="w:gz") as archive:
            archive.add(folder / SHARD, f"aitw/general/{SHARD}")
    upload.seek(0)
    assert detect_archive_format(upload, f"data.{kind}") == "aitw"


def test_steps_are_grouped_into_episodes_across_shards_in_step_order(read, tmp_path):
    a, b = read(shards(tmp_path, episode_a()[:3], episode_a()[3:] + episode_b()))
    assert [s.action["type"] for s in a.steps] == ["click", "swipe", "type", "enter", "terminate"]
    assert a.metadata["aitw"]["files"] == [SHARD, "general-00001-of-00002"]
    assert [s.action["type"] for s in b.steps] == ["home", "terminate"]


def test_an_episode_keeps_its_goal_device_and_activity(read, tmp_path):
    [a] = read(shards(tmp_path, episode_a()))
    assert a.task.goal == "Search for running shoes"
    assert a.task.apps == ["com.android.chrome"]
    assert a.device == {"width": W, "height": H, "model": "Pixel 4", "android_version": "11"}
    assert a.screens[0].package == "com.android.chrome"
    assert a.screens[0].activity == "org.chromium.chrome.browser.ChromeTabbedActivity"
    assert a.metadata["aitw"]["episode_id"] == "ep-a"
    assert a.outcome == "success"


def test_the_raw_pixels_become_a_png_of_the_same_pixels(read, tmp_path):
    [a] = read(shards(tmp_path, episode_a()))
    with Image.open(io.BytesIO(a.screens[1].screenshot.path.read_bytes())) as image:
        assert image.format == "PNG" and image.size == (W, H)
        assert image.tobytes() == pixels(1)


def test_ui_annotations_become_a_dump_and_a_tap_targets_the_icon_it_lands_on(read, tmp_path):
    [a] = read(shards(tmp_path, episode_a()))
    tree = parse_ui_xml(a.screens[0].ui_xml.path.read_bytes())
    assert [(e.class_name, e.text, e.content_desc, e.bounds) for e in tree.elements[1:]] == [
        ("android.widget.TextView", "Search", "", (4, 4, 36, 12)),
        ("android.widget.ImageView", "", "home", (16, 36, 24, 44)),
    ]
    assert a.steps[0].action == {"type": "click", "x": 20, "y": 40}
    assert a.steps[0].target["content_desc"] == "home"


@pytest.mark.parametrize(
    ("lift", "kind"),
    [
        ((0.53, 0.5), "click"),
        ((0.5, 0.46), "click"),
        ((0.55, 0.5), "swipe"),
        ((0.5, 0.45), "swipe"),
    ],
)
def test_a_dual_point_action_is_a_tap_within_004_of_its_touch_else_a_swipe(
    read, tmp_path, lift, kind
):
    records = [step("ep", 0, DUAL_POINT, (0.5, 0.5), lift), step("ep", 1, COMPLETE)]
    [record] = read(shards(tmp_path, records))
    assert record.steps[0].action["type"] == kind
    assert record.metadata["aitw"]["actions"][0]["touch"] == [0.5, 0.5]


def test_a_swipe_goes_from_touch_to_lift(read, tmp_path):
    [a] = read(shards(tmp_path, episode_a()))
    assert a.steps[1].action == {"type": "swipe", "x": 20, "y": 64, "x2": 20, "y2": 16}


def test_typed_text_button_presses_and_status_actions(read, tmp_path):
    a, b = read(shards(tmp_path, episode_a(), episode_b()))
    assert a.steps[2].action == {"type": "type", "text": "running shoes"}
    assert a.steps[3].action == {"type": "enter"}
    assert a.steps[4].action == {"type": "terminate", "status": "success"}
    assert b.steps[0].action == {"type": "home"}
    assert b.steps[1].action == {"type": "terminate", "status": "failure"}
    assert b.outcome == "failure"
    assert a.task.uid != b.task.uid


def test_an_encoded_png_is_kept_as_it_is(read, tmp_path):
    records = [step("ep", 0, PRESS_BACK, image=png(3, W, H)), step("ep", 1, COMPLETE)]
    [record] = read(shards(tmp_path, records))
    assert record.screens[0].screenshot.path.read_bytes() == png(3, W, H)
    assert record.steps[0].action == {"type": "back"}


def test_a_missing_screenshot_is_a_grey_stand_in_not_trained_on(project, tmp_path):
    records = episode_a()
    records[2] = step("ep-a", 2, TYPE, text="running shoes", image=b"")
    import_trajectories(project, shards(tmp_path, records), "aitw")
    s = Step.objects.select_related("screen__screenshot").get(index=2)
    assert read_blob(s.screen.screenshot) == missing_screenshot(W, H)
    assert s.trainable is False


def test_it_imports_resumes_and_exports_to_every_training_format(project, tmp_path):
    folder = shards(tmp_path, episode_a(), episode_b())
    assert import_trajectories(project, folder, "auto") == {
        "created": 2,
        "existing": 0,
        "steps": 7,
    }
    assert import_trajectories(project, folder, "aitw")["existing"] == 2
    for fmt in ("androtmem", "stamp-sft", "androidcontrol", "waypoint"):
        assert (
            export_trajectories(Trajectory.objects.all(), tmp_path / fmt, fmt)["trajectories"] == 2
        )


# ---------------------------------------------------------------- hostile input


def broken(project, folder: Path) -> str:
    with pytest.raises(InvalidData) as error:
        import_trajectories(project, folder, "aitw")
    assert not Trajectory.objects.exists()
    return str(error.value)


def test_pixels_that_do_not_fill_the_image_are_refused(project, tmp_path):
    records = episode_b()
    records[1] = step("ep-b", 1, IMPOSSIBLE, image=b"\x00" * 99)
    assert broken(project, shards(tmp_path, episode_a(), records)) == (
        "general-00001-of-00002 record 2 (episode 'ep-b'): image/encoded: "
        "holds 99 bytes, not 80 x 40 x 3 pixels"
    )


def test_an_image_too_large_is_refused_before_its_pixels_are_read(project, tmp_path):
    records = [step("ep", 0, PRESS_BACK, height=50_000, image=b"\x00"), step("ep", 1, COMPLETE)]
    assert broken(project, shards(tmp_path, records)) == (
        f"{SHARD} record 1 (episode 'ep'): image/width, image/height: the image is 40x50000 "
        "pixels; each side must be 1 to 4096 pixels (WAYPOINT_MAX_IMAGE_SIDE)"
    )


def test_an_episode_split_by_another_is_refused(project, tmp_path):
    records = episode_a()[:2] + episode_b() + episode_a()[2:]
    assert broken(project, shards(tmp_path, records)) == (
        f"{SHARD} record 5: episode_id: episode 'ep-a' appears again after other episodes "
        "(an episode's steps must be consecutive)"
    )


def test_an_episode_with_a_missing_step_is_refused(project, tmp_path):
    records = [r for i, r in enumerate(episode_a()) if i != 2]
    assert broken(project, shards(tmp_path, records)) == (
        f"{SHARD} record 1 (episode 'ep-a'): step_id must run 0, 1, 2, ... without gaps, "
        "got '[0, 1, 3, 4]'"
    )


def test_an_unknown_action_type_is_refused(project, tmp_path):
    records = [step("ep", 0, 8), step("ep", 1, COMPLETE)]
    assert broken(project, shards(tmp_path, records)) == (
        f"{SHARD} record 1 (episode 'ep'): results/action_type: unknown AitW action type 8"
    )


def test_a_record_that_is_not_an_example_is_refused(project, tmp_path):
    folder = tmp_path / "aitw"
    wire.write_tfrecord(folder / SHARD, [episode_a()[0], b"\x0a\xff\xff\xff\xff\x0f"])
    message = broken(project, folder)
    assert message.startswith(f"{SHARD} record 2: not a tf.train.Example")


def test_a_gzip_bomb_is_refused(project, tmp_path):
    records = [step("ep", 0, PRESS_BACK, image=b"\x00" * (W * H * 3)), step("ep", 1, COMPLETE)]
    with override_settings(WAYPOINT_MAX_UNPACK_RATIO=3, WAYPOINT_MAX_UNPACKED_BYTES=20_000):
        assert "(WAYPOINT_MAX_UNPACK_RATIO)" in broken(project, shards(tmp_path, records))
