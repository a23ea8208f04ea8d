"""The androidcontrol import: GZIP TFRecord episodes become trajectories with screens, dumps
made from the accessibility forests, canonical actions and step instructions."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pyarrow.parquet
import pytest
from django.test import override_settings

from formats.catalogue import IMPORTERS, export_trajectories, import_trajectories
from formats.detect import detect_folder_format
from formats.imported import missing_screenshot
from formats.spool import spool_closed
from tests.trajectories.builders import make_record, png
from trajectories.blobs import read_blob
from trajectories.models import Step, Subgoal, Trajectory
from trajectories.records import FileRef
from trajectories.services import do_import_trajectory
from trajectories.uixml import parse_ui_xml
from trajectories.validation import InvalidData

from . import wire

pytestmark = pytest.mark.django_db

W, H = 120, 240
SHARD = "android_control-00000-of-00001"


def screen_forest(label: str = "Buy", keyboard: bool = False) -> bytes:
    app = wire.window(
        [
            wire.node(0, (0, 0, W, H), children=(1, 2, 9)),  # 9: a child the device left out
            wire.node(
                1,
                (0, 0, W, 40),
                class_name="android.widget.EditText",
                resource_id="com.example.shop:id/search",
                hint="Search",
                clickable=True,
            ),
            wire.node(
                2,
                (10, 100, 110, 140),
                class_name="android.widget.Button",
                text=label,
                resource_id="com.example.shop:id/buy",
                clickable=True,
            ),
        ]
    )
    windows = [app]
    if keyboard:
        keys = wire.node(
            20,
            (0, 160, W, H),
            class_name="android.inputmethodservice.Keyboard",
            package="com.google.android.inputmethod.latin",
            clickable=True,
        )
        windows.append(wire.window([keys], layer=2, window_type=2))
    return wire.forest(*windows)


ACTIONS = [
    {"action_type": "open_app", "app_name": "Shop"},
    {"action_type": "click", "x": 60, "y": 120},
    {"action_type": "scroll", "direction": "down"},
    {"action_type": "input_text", "text": "headphones"},
]
INSTRUCTIONS = ["Open Shop", "Tap Buy", "Find the headphones", "Find the headphones"]


def episode(
    episode_id: int = 1234,
    actions: list[dict] | None = None,
    instructions: list[str] | None = None,
    *,
    shots: list[bytes] | None = None,
    trees: list[bytes] | None = None,
    size: tuple[int, int] = (W, H),
) -> bytes:
    """One AndroidControl record, with the features of the dataset's README."""
    actions = ACTIONS if actions is None else actions
    instructions = INSTRUCTIONS[: len(actions)] if instructions is None else instructions
    n = len(actions) + 1
    shots = [png(50 + i) for i in range(n)] if shots is None else shots
    trees = [screen_forest(keyboard=i == n - 1) for i in range(n)] if trees is None else trees
    return wire.example(
        {
            "episode_id": wire.int64_feature(episode_id),
            "goal": wire.bytes_feature(b"Search headphones in Shop"),
            "screenshots": wire.bytes_feature(*shots),
            "accessibility_trees": wire.bytes_feature(*trees),
            "screenshot_widths": wire.int64_feature(*[size[0]] * n),
            "screenshot_heights": wire.int64_feature(*[size[1]] * n),
            "actions": wire.bytes_feature(*[json.dumps(a).encode() for a in actions]),
            "step_instructions": wire.bytes_feature(*[s.encode() for s in instructions]),
        }
    )


def shards(tmp_path: Path, *records: bytes, compress: bool = True) -> Path:
    folder = tmp_path / "androidcontrol"
    wire.write_tfrecord(folder / SHARD, records, compress=compress)
    return folder


@pytest.fixture
def read(read_folder):
    return functools.partial(read_folder, fmt="androidcontrol")


# ---------------------------------------------------------------- fields


def test_it_is_detected_by_its_shard_names(tmp_path):
    assert detect_folder_format(shards(tmp_path, episode()), "data") == "androidcontrol"


def test_an_episode_becomes_a_trajectory_with_its_goal_and_screens(read, tmp_path):
    [record] = read(shards(tmp_path, episode()))
    assert record.task.goal == "Search headphones in Shop"
    assert record.task.uid == "androidcontrol:1234"
    assert record.task.apps == ["com.example.shop"]
    assert len(record.screens) == 5 and record.final_screen == 4
    assert [s.package for s in record.screens] == ["com.example.shop"] * 5
    assert record.screens[2].screenshot.path.read_bytes() == png(52)
    assert record.metadata["androidcontrol"]["episode_id"] == 1234
    assert record.uid == read(shards(tmp_path, episode()))[0].uid


def test_the_forest_becomes_a_uiautomator_dump_that_locates_the_tap(read, tmp_path):
    [record] = read(shards(tmp_path, episode()))
    tree = parse_ui_xml(record.screens[1].ui_xml.path.read_bytes())
    buy = tree.element_at(60, 120)
    assert (buy.class_name, buy.text, buy.resource_id) == (
        "android.widget.Button",
        "Buy",
        "com.example.shop:id/buy",
    )
    assert buy.bounds == (10, 100, 110, 140) and buy.clickable
    assert [e.class_name for e in tree.elements] == [
        "android.widget.FrameLayout",
        "android.widget.EditText",
        "android.widget.Button",
    ]
    assert b'hint="Search"' in record.screens[1].ui_xml.path.read_bytes()


def test_the_keyboard_window_is_in_front_of_the_app(read, tmp_path):
    [record] = read(shards(tmp_path, episode()))
    tree = parse_ui_xml(record.screens[4].ui_xml.path.read_bytes())
    assert tree.element_at(60, 200).class_name == "android.inputmethodservice.Keyboard"
    assert record.screens[4].package == "com.example.shop"  # the app window is the package


def test_a_click_targets_the_element_it_lands_on(read, tmp_path):
    [record] = read(shards(tmp_path, episode()))
    assert record.steps[1].action == {"type": "click", "x": 60, "y": 120}
    assert record.steps[1].target["bounds"] == [10, 100, 110, 140]
    assert record.steps[1].target["text"] == "Buy"


def test_scroll_down_is_a_finger_swipe_up(read, tmp_path):
    [record] = read(shards(tmp_path, episode()))
    assert record.steps[2].action == {"type": "swipe", "x": 60, "y": 180, "x2": 60, "y2": 60}


def swipe(x: int, y: int, x2: int, y2: int) -> dict:
    return {"type": "swipe", "x": x, "y": y, "x2": x2, "y2": y2}


@pytest.mark.parametrize(
    ("action", "canonical"),
    [
        ({"action_type": "long_press", "x": 6, "y": 9}, {"type": "long_press", "x": 6, "y": 9}),
        ({"action_type": "scroll", "direction": "up"}, swipe(60, 60, 60, 180)),
        ({"action_type": "scroll", "direction": "left"}, swipe(30, 120, 90, 120)),
        ({"action_type": "scroll", "direction": "right"}, swipe(90, 120, 30, 120)),
        ({"action_type": "input_text", "text": "Héllo"}, {"type": "type", "text": "Héllo"}),
        ({"action_type": "type", "text": "hi", "x": 60, "y": 20}, {"type": "type", "text": "hi"}),
        ({"action_type": "open_app", "app_name": "Shop"},
         {"type": "open_app", "package": "Shop", "app_label": "Shop"}),
        ({"action_type": "navigate_back"}, {"type": "back"}),
        ({"action_type": "navigate_home"}, {"type": "home"}),
        ({"action_type": "wait"}, {"type": "wait", "duration_ms": 1000}),
    ],
)  # fmt: skip
def test_every_action_type_has_its_canonical_action_and_keeps_the_original(
    read, tmp_path, action, canonical
):
    [record] = read(shards(tmp_path, episode(actions=[action], instructions=["do it"])))
    assert record.steps[0].action == canonical
    assert record.metadata["androidcontrol"]["actions"] == [action]


def test_a_type_action_targets_the_field_it_clicks(read, tmp_path):
    action = {"action_type": "type", "text": "shoes", "x": 60, "y": 20}
    [record] = read(shards(tmp_path, episode(actions=[action], instructions=["search"])))
    assert record.steps[0].target["resource_id"] == "com.example.shop:id/search"


def test_step_instructions_are_step_summaries_and_runs_of_them_are_subgoals(read, tmp_path):
    [record] = read(shards(tmp_path, episode()))
    assert [s.summary for s in record.steps] == INSTRUCTIONS
    assert [(g["start"], g["end"], g["text"]) for g in record.subgoals] == [
        (0, 0, "Open Shop"),
        (1, 1, "Tap Buy"),
        (2, 3, "Find the headphones"),
    ]


def test_an_empty_screenshot_is_a_grey_stand_in_and_its_step_is_not_trained_on(project, tmp_path):
    shots = [png(50 + i) for i in range(5)]
    shots[1] = b""
    import_trajectories(project, shards(tmp_path, episode(shots=shots)), "androidcontrol")
    step = Step.objects.select_related("screen__screenshot").get(index=1)
    assert read_blob(step.screen.screenshot) == missing_screenshot(W, H)
    assert step.trainable is False
    assert Trajectory.objects.get().metadata["androidcontrol"]["missing_screenshots"] == [1]


# ---------------------------------------------------------------- the import


def test_it_imports_the_shards_streamed_all_or_nothing_and_resumes(project, tmp_path):
    folder = shards(tmp_path, episode(1), episode(2))
    seen = []
    counts = import_trajectories(
        project, folder, "auto", progress=lambda done, total: seen.append((done, total))
    )
    assert counts == {"created": 2, "existing": 0, "steps": 8}
    assert seen[-1] == (4, 4)
    assert Subgoal.objects.count() == 6
    more = shards(tmp_path, episode(1), episode(2), episode(3))
    assert import_trajectories(project, more, "androidcontrol") == {
        "created": 1,
        "existing": 2,
        "steps": 4,
    }


def test_the_second_pass_reads_records_that_hold_no_image_bytes(tmp_path):
    reader, _ = IMPORTERS["androidcontrol"]
    folder = shards(tmp_path, episode())
    with spool_closed({}) as checked:
        list(reader(folder, checked))
        [(_, record)] = list(reader(folder, checked))
        assert all(isinstance(s.screenshot, FileRef) for s in record.screens)
        assert all(isinstance(s.ui_xml, FileRef) for s in record.screens)
        assert record.screens[0].screenshot.path.read_bytes() == png(50)


def test_it_exports_back_to_androidcontrol_with_its_episode_id_and_instructions(project, tmp_path):
    import_trajectories(project, shards(tmp_path, episode()), "androidcontrol")
    out = tmp_path / "out"
    export_trajectories(Trajectory.objects.all(), out, "androidcontrol")
    lines = [json.loads(x) for x in (out / "train.jsonl").read_text().splitlines()]
    assert [x["episode_id"] for x in lines] == ["1234"] * 4
    assert [x["step_instruction"] for x in lines] == INSTRUCTIONS
    assert [x["action"] for x in lines] == [
        {"action_type": "open_app", "app_name": "Shop"},
        {"action_type": "click", "x": 60, "y": 120},
        {"action_type": "scroll", "direction": "down"},
        {"action_type": "input_text", "text": "headphones"},
    ]


def test_imported_and_recorded_episodes_export_together_with_parquet(project, tmp_path):
    """One column, one type: AndroidControl's numeric episode ids beside a recording's."""
    import_trajectories(project, shards(tmp_path, episode()), "androidcontrol")
    do_import_trajectory(project, make_record(steps=2, seed=3))
    out = tmp_path / "out"
    export_trajectories(Trajectory.objects.all(), out, "androidcontrol", options={"parquet": True})
    table = pyarrow.parquet.read_table(out / "train.parquet")
    ids = table.column("episode_id").to_pylist()
    assert len(ids) == 6 and "1234" in ids and all(isinstance(i, str) for i in ids)


@pytest.mark.parametrize("fmt", ["androtmem", "stamp-sft", "waypoint"])
def test_it_exports_to_every_training_format(project, tmp_path, fmt):
    import_trajectories(project, shards(tmp_path, episode()), "androidcontrol")
    counts = export_trajectories(Trajectory.objects.all(), tmp_path / fmt, fmt)
    assert counts["trajectories"] == 1


# ---------------------------------------------------------------- hostile input


def broken(project, folder: Path) -> str:
    with pytest.raises(InvalidData) as error:
        import_trajectories(project, folder, "androidcontrol")
    assert not Trajectory.objects.exists()
    return str(error.value)


def test_a_wrong_checksum_is_refused_naming_the_file_and_record(project, tmp_path):
    folder = shards(tmp_path, episode(1), episode(2), compress=False)
    path = folder / SHARD
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF  # inside the second record's data
    path.write_bytes(bytes(data))
    assert broken(project, folder) == f"{SHARD} record 2: the checksum of its data is wrong"


def test_a_truncated_record_is_refused(project, tmp_path):
    folder = shards(tmp_path, episode(1), episode(2), compress=False)
    path = folder / SHARD
    path.write_bytes(path.read_bytes()[:-30])
    assert broken(project, folder) == (
        f"{SHARD} record 2: truncated (the file ends inside the record)"
    )


def test_a_damaged_gzip_stream_is_refused(project, tmp_path):
    folder = shards(tmp_path, episode(1))
    path = folder / SHARD
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert broken(project, folder).startswith(f"{SHARD} record 1:")


def test_a_record_over_the_file_limit_is_refused_before_it_is_read(project, tmp_path):
    folder = shards(tmp_path, episode(1))
    with override_settings(WAYPOINT_MAX_FILE_BYTES=1000):
        message = broken(project, folder)
    assert message.startswith(f"{SHARD} record 1: the record is ")
    assert message.endswith("over the limit of 1000 bytes (WAYPOINT_MAX_FILE_BYTES)")


def test_a_gzip_bomb_is_refused_by_the_unpack_ratio(project, tmp_path):
    shots = [png(50), b"\x00" * 60_000]
    folder = shards(tmp_path, episode(actions=[ACTIONS[1]], shots=shots))
    with override_settings(WAYPOINT_MAX_UNPACK_RATIO=2, WAYPOINT_MAX_UNPACKED_BYTES=20_000):
        assert "(WAYPOINT_MAX_UNPACK_RATIO)" in broken(project, folder)


def test_an_oversized_image_is_refused_by_its_declared_size(project, tmp_path):
    folder = shards(tmp_path, episode(size=(W, 100_000)))
    assert broken(project, folder) == (
        f"{SHARD} record 1 (episode 1234): screenshot_widths/heights[0]: the image is "
        "120x100000 pixels; each side must be 1 to 4096 pixels (WAYPOINT_MAX_IMAGE_SIDE)"
    )


def test_a_forest_that_is_not_a_protobuf_is_refused(project, tmp_path):
    trees = [screen_forest() for _ in range(5)]
    trees[3] = b"\xff\xff\xff\xff"
    message = broken(project, shards(tmp_path, episode(trees=trees)))
    assert message.startswith(
        f"{SHARD} record 1 (episode 1234): accessibility_trees[3]: not an accessibility forest"
    )


def test_a_forest_nested_past_the_dump_depth_is_refused(project, tmp_path):
    chain = [wire.node(i, (0, 0, W, H), children=(i + 1,)) for i in range(300)]
    trees = [screen_forest() for _ in range(5)]
    trees[0] = wire.forest(wire.window(chain))
    message = broken(project, shards(tmp_path, episode(trees=trees)))
    assert message == (
        f"{SHARD} record 1 (episode 1234): accessibility_trees[0]: not an accessibility forest "
        "(node 200: nested deeper than 200 levels)"
    )


def test_a_proto_bomb_of_nested_groups_is_refused(project, tmp_path):
    trees = [screen_forest() for _ in range(5)]
    trees[2] = wire.tag(99, 3) * 100_000  # unknown groups opened 100,000 deep
    message = broken(project, shards(tmp_path, episode(trees=trees)))
    assert message.startswith(
        f"{SHARD} record 1 (episode 1234): accessibility_trees[2]: not an accessibility forest"
    )


def test_an_action_json_that_is_bad_names_its_place(project, tmp_path):
    actions = [{"action_type": "click", "x": "left", "y": 3}]
    message = broken(project, shards(tmp_path, episode(actions=actions, instructions=["x"])))
    assert message == f"{SHARD} record 1 (episode 1234): actions[0].x: must be a number, got 'left'"


def test_a_bad_second_episode_leaves_nothing_written(project, tmp_path):
    bad = episode(2, actions=[{"action_type": "teleport"}], instructions=["x"])
    message = broken(project, shards(tmp_path, episode(1), bad))
    assert message == (
        f"{SHARD} record 2 (episode 2): actions[0].action_type: "
        "unknown AndroidControl action 'teleport'"
    )


def test_counts_of_actions_and_screenshots_must_agree(project, tmp_path):
    record = episode(shots=[png(1), png(2)])
    message = broken(project, shards(tmp_path, record))
    assert message == (
        f"{SHARD} record 1 (episode 1234): accessibility_trees: 5 values for 2 screenshots"
    )


def test_the_fixture_writer_checksums_match_tensorflows_vector():
    assert wire.crc32c(b"123456789") == 0xE3069283  # CRC-32C's check value
