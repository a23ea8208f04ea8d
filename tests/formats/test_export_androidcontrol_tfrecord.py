"""The androidcontrol-tfrecord export: AndroidControl's own GZIP TFRecord episodes, the UI XML
as accessibility forests again, imported again as the same trajectories."""

from __future__ import annotations

import functools
import gzip
import json
import struct
from pathlib import Path

import pytest

from formats.androidcontrol_import import forest_to_uiautomator_xml
from formats.androidcontrol_tfrecord import xml_to_forest
from formats.catalogue import (
    check_export_request,
    import_trajectories,
)
from formats.imported import missing_screenshot
from formats.protos import Example, Forest
from tests.trajectories.builders import XML, png
from trajectories.models import Trajectory
from trajectories.validation import InvalidData

from . import wire
from .exports import export_to, file_bytes, recorded_with
from .test_import_androidcontrol import SHARD, H, W, episode, screen_forest, shards

pytestmark = pytest.mark.django_db


@pytest.fixture
def read(read_folder):
    return functools.partial(read_folder, fmt="androidcontrol")


def same(record) -> dict:
    """Everything an AndroidControl episode carries, as the reader gives it (where in which
    file aside)."""
    meta = {
        k: v for k, v in record.metadata["androidcontrol"].items() if k not in ("file", "record")
    }
    return {
        "uid": record.uid,
        "task": (record.task.uid, record.task.goal, record.task.apps),
        "device": record.device,
        "final_screen": record.final_screen,
        "metadata": meta,
        "subgoals": record.subgoals,
        "steps": [
            (s.index, s.screen, s.action, s.target, s.summary, s.trainable) for s in record.steps
        ],
        "screens": [
            (
                file_bytes(s.screenshot),
                s.screenshot_type,
                file_bytes(s.ui_xml),
                s.width,
                s.height,
                s.package,
            )
            for s in record.screens
        ],
    }


def second_episode() -> bytes:
    """A type at a point, back, wait and a long press, with a screenshot missing."""
    actions = [
        {"action_type": "type", "text": "shoes", "x": 60, "y": 20},
        {"action_type": "navigate_back"},
        {"action_type": "wait"},
        {"action_type": "long_press", "x": 60, "y": 120},
        {"action_type": "scroll", "direction": "left"},
    ]
    shots = [png(70 + i) for i in range(6)]
    shots[3] = b""
    return episode(77, actions, ["Search", "Back", "Wait", "Hold", "Next"], shots=shots)


def exported(project, tmp_path, name="out", **kwargs) -> Path:
    return export_to(project, tmp_path, "androidcontrol-tfrecord", name, **kwargs)


def test_import_export_import_gives_the_same_trajectories(project, tmp_path, read):
    source = shards(tmp_path, episode(), second_episode())
    import_trajectories(project, source, "androidcontrol")
    out = exported(project, tmp_path)
    before = sorted(read(source), key=lambda r: r.uid)
    after = read(out)
    assert [same(r) for r in after] == [same(r) for r in before]
    [second] = [r for r in after if r.metadata["androidcontrol"]["episode_id"] == 77]
    assert file_bytes(second.screens[3].screenshot) == missing_screenshot(W, H)
    assert second.steps[3].trainable is False
    assert import_trajectories(project, out, "auto") == {"created": 0, "existing": 2, "steps": 0}


def test_a_forest_becomes_the_same_dump_again():
    for forest in (screen_forest(), screen_forest(keyboard=True)):
        xml, package = forest_to_uiautomator_xml(Forest.FromString(forest))
        again = xml_to_forest(xml, package)
        assert forest_to_uiautomator_xml(Forest.FromString(again.SerializeToString())) == (
            xml,
            package,
        )
    assert package == "com.example.shop"  # the keyboard's window is not the app in front


def frames(path: Path) -> list[bytes]:
    """The records of a GZIP TFRecord file, every CRC checked with the test's own CRC-32C."""
    body, records = gzip.decompress(path.read_bytes()), []
    while body:
        (length,) = struct.unpack("<Q", body[:8])
        assert struct.unpack("<I", body[8:12])[0] == wire.masked(body[:8])
        record = body[12 : 12 + length]
        assert struct.unpack("<I", body[12 + length : 16 + length])[0] == wire.masked(record)
        records.append(record)
        body = body[16 + length :]
    return records


def recorded(project) -> Trajectory:
    """A recording with actions AndroidControl has and some it has not."""
    actions = [
        {"type": "click", "x": 61, "y": 119},
        {"type": "key", "keycode": "KEYCODE_ENTER"},
        {"type": "swipe", "x": 60, "y": 200, "x2": 60, "y2": 40, "duration_ms": 300},
        {"type": "type", "text": "héadphones ✓"},
        {"type": "answer", "text": "12.50"},
        {"type": "terminate", "status": "success"},
    ]
    return recorded_with(project, 7, actions)


def test_steps_it_cannot_express_are_listed_apart_and_the_rest_kept(project, tmp_path, read):
    trajectory = recorded(project)
    out = exported(project, tmp_path)
    [raw] = frames(out / SHARD)
    features = Example.FromString(raw).features.feature
    assert [json.loads(a) for a in features["actions"].bytes_list.value] == [
        {"action_type": "click", "x": 61, "y": 119},
        {"action_type": "scroll", "direction": "down"},
        {"action_type": "input_text", "text": "héadphones ✓"},
    ]
    assert list(features["step_instructions"].bytes_list.value) == [
        b"Tap Buy 0",
        b"Tap Buy 2",
        b"Tap Buy 3",
    ]
    [record] = read(out)
    assert record.task.goal == "Buy the cheapest headphones"
    assert [s.action for s in record.steps] == [
        {"type": "click", "x": 61, "y": 119},
        {"type": "swipe", "x": 60, "y": 180, "x2": 60, "y2": 60},
        {"type": "type", "text": "héadphones ✓"},
    ]
    # each kept step's screen, then the final screen
    assert [file_bytes(s.screenshot) for s in record.screens] == [
        png(7 * 31 + i) for i in (0, 2, 3, 6)
    ]
    assert file_bytes(record.screens[0].ui_xml) == XML.replace("{label}", "Buy 0").encode()
    assert record.steps[0].target["resource_id"] == "com.example.shop:id/buy"
    assert record.screens[0].package == "com.example.shop"
    unmapped = [json.loads(line) for line in (out / "unmapped.jsonl").open(encoding="utf-8")]
    assert [(u["step_index"], u["waypoint_action"]["type"]) for u in unmapped] == [
        (1, "key"),
        (4, "answer"),
        (5, "terminate"),
    ]
    assert {u["episode_id"] for u in unmapped} == {features["episode_id"].int64_list.value[0]}
    splits = json.loads((out / "splits.json").read_text())
    assert splits == {"train": [features["episode_id"].int64_list.value[0]]}
    assert str(trajectory.uid) not in raw.decode("latin-1")


def test_it_takes_no_options():
    with pytest.raises(InvalidData) as error:
        check_export_request("androidcontrol-tfrecord", {"parquet": True}, None)
    assert str(error.value) == (
        "options: unknown option 'parquet' for androidcontrol-tfrecord (it takes no options)"
    )
