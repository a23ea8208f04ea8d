"""The aitw export: Android in the Wild's own TFRecord steps, imported again as the same
trajectories; framing and records checked with the test's own CRC-32C."""

from __future__ import annotations

import dataclasses
import functools
import gzip
import io
import json
import struct
from pathlib import Path

import pytest
from PIL import Image

from formats.aitw_export import ui_annotations
from formats.catalogue import (
    check_export_request,
    import_trajectories,
)
from formats.imported import missing_screenshot
from formats.protos import Example
from formats.tfrecord import TFRecordWriter
from tests.trajectories.builders import make_record, png
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory
from trajectories.uixml import parse_ui_xml
from trajectories.validation import InvalidData

from . import wire
from .exports import export_to, file_bytes, recorded_with
from .test_import_aitw import (
    DUAL_POINT,
    PRESS_BACK,
    TYPE,
    H,
    W,
    episode_a,
    episode_b,
    pixels,
    shards,
    step,
)

pytestmark = pytest.mark.django_db

SHARD = "train-00000-of-00001"


@pytest.fixture
def read(read_folder):
    return functools.partial(read_folder, fmt="aitw")


def same(record) -> dict:
    """Everything an AitW episode carries, as the reader gives it (the shards' names aside)."""
    meta = {k: v for k, v in record.metadata["aitw"].items() if k != "files"}
    return {
        "uid": record.uid,
        "task": (record.task.uid, record.task.goal, record.task.apps),
        "device": record.device,
        "outcome": record.outcome,
        "final_screen": record.final_screen,
        "metadata": meta,
        "steps": [(s.index, s.screen, s.action, s.target, s.trainable) for s in record.steps],
        "screens": [
            (file_bytes(s.screenshot), s.screenshot_type, file_bytes(s.ui_xml), s.width, s.height)
            + (s.package, s.activity)
            for s in record.screens
        ],
    }


def exported(project, tmp_path, name="out", **kwargs) -> Path:
    return export_to(project, tmp_path, "aitw", name, **kwargs)


def episodes_with_a_missing_screenshot() -> list[bytes]:
    records = episode_a()
    records[2] = step("ep-a", 2, TYPE, text="running shoes", image=b"")
    return records


def test_import_export_import_gives_the_same_trajectories(project, tmp_path, read):
    source = shards(tmp_path, episodes_with_a_missing_screenshot(), episode_b())
    import_trajectories(project, source, "aitw")
    out = exported(project, tmp_path)
    # Episodes come in the order of their trajectories' ids.
    before = sorted(read(source), key=lambda r: r.uid)
    after = read(out)
    assert [same(r) for r in after] == [same(r) for r in before]
    [a] = [r for r in after if r.metadata["aitw"]["episode_id"] == "ep-a"]
    assert a.metadata["aitw"]["files"] == [SHARD]
    assert file_bytes(a.screens[2].screenshot) == missing_screenshot(W, H)
    assert a.steps[2].trainable is False
    assert import_trajectories(project, out, "auto") == {"created": 0, "existing": 2, "steps": 0}


def test_a_tap_keeps_its_original_touch_and_lift(project, tmp_path, read):
    import_trajectories(project, shards(tmp_path, episode_a()), "aitw")
    [record] = read(exported(project, tmp_path))
    original = record.metadata["aitw"]["actions"][0]
    assert original["touch"] == [0.5, 0.5]
    assert original["lift"] == pytest.approx([0.51, 0.5])


def frames(path: Path) -> list[bytes]:
    """The records of a GZIP TFRecord file, every CRC checked with the test's own CRC-32C."""
    raw = path.read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    body, records = gzip.decompress(raw), []
    while body:
        length_bytes = body[:8]
        (length,) = struct.unpack("<Q", length_bytes)
        assert struct.unpack("<I", body[8:12])[0] == wire.masked(length_bytes)
        record = body[12 : 12 + length]
        assert struct.unpack("<I", body[12 + length : 16 + length])[0] == wire.masked(record)
        records.append(record)
        body = body[16 + length :]
    return records


def features(record: bytes) -> dict:
    found = {}
    for key, feature in Example.FromString(record).features.feature.items():
        kind = feature.WhichOneof("kind")
        found[key] = list(getattr(feature, kind).value) if kind else []
    return found


def test_the_shard_holds_aitws_steps_framed_as_tensorflow_frames_them(project, tmp_path):
    import_trajectories(project, shards(tmp_path, episode_a(), episode_b()), "aitw")
    out = exported(project, tmp_path)
    records = [features(r) for r in frames(out / SHARD)]
    assert [(f["episode_id"], f["step_id"]) for f in records] == [
        ([b"ep-b"], [i]) for i in range(2)
    ] + [([b"ep-a"], [i]) for i in range(5)]
    records = records[2:]
    first = records[0]
    assert first["goal_info"] == [b"Search for running shoes"]
    assert first["episode_length"] == [5]
    assert first["current_activity"] == [
        b"com.android.chrome/org.chromium.chrome.browser.ChromeTabbedActivity"
    ]
    assert (first["device_type"], first["android_api_level"]) == ([b"Pixel 4"], [30])
    assert (first["image/width"], first["image/height"], first["image/channels"]) == (
        [W],
        [H],
        [3],
    )
    assert first["image/encoded"] == [pixels(0)]  # raw pixels, as the dataset stores them
    assert first["results/action_type"] == [DUAL_POINT]
    assert first["image/ui_annotations_text"] == [b"Search", b""]
    assert first["image/ui_annotations_ui_types"] == [b"TEXT", b"ICON_HOME"]
    assert first["image/ui_annotations_positions"] == pytest.approx(
        [0.05, 0.1, 0.1, 0.8, 0.45, 0.4, 0.1, 0.2]
    )
    typed = records[2]
    assert (typed["results/action_type"], typed["results/type_action"]) == (
        [TYPE],
        [b"running shoes"],
    )
    assert typed["results/yx_touch"] == typed["results/yx_lift"] == [-1.0, -1.0]


def test_the_writer_frames_records_as_the_tests_own_encoder_does():
    records = [b"", b"one", bytes(range(256)) * 5]
    plain = io.BytesIO()
    writer = TFRecordWriter(plain, compress=False)
    for record in records:
        writer.write(record)
    writer.close()
    assert plain.getvalue() == b"".join(wire.frame(r) for r in records)
    packed = io.BytesIO()
    writer = TFRecordWriter(packed)
    for record in records:
        writer.write(record)
    writer.close()
    assert gzip.decompress(packed.getvalue()) == plain.getvalue()
    assert packed.getvalue()[4:8] == b"\x00\x00\x00\x00"  # no time in the gzip header


def recorded(project) -> Trajectory:
    """A recording with actions AitW has and some it has not."""
    actions = [
        {"type": "open_app", "package": "com.example.shop"},
        {"type": "click", "x": 61, "y": 119},
        {"type": "swipe", "x": 60, "y": 200, "x2": 60, "y2": 40, "duration_ms": 300},
        {"type": "swipe", "x": 60, "y": 120, "x2": 62, "y2": 122, "duration_ms": 300},
        {"type": "long_press", "x": 60, "y": 120, "duration_ms": 800},
        {"type": "type", "text": "héadphones ✓"},
        {"type": "key", "keycode": "KEYCODE_ENTER"},
        {"type": "answer", "text": "12.50"},
    ]
    return recorded_with(project, 5, actions)


def test_steps_it_cannot_express_are_listed_apart_and_the_rest_kept(project, tmp_path, read):
    trajectory = recorded(project)
    out = exported(project, tmp_path)
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
        {"type": "enter"},
    ]
    kept = (1, 2, 5, 6)
    for screen, i in zip(record.screens, kept, strict=True):
        with Image.open(io.BytesIO(file_bytes(screen.screenshot))) as got:
            with Image.open(io.BytesIO(png(5 * 31 + i))) as expected:
                assert got.tobytes() == expected.convert("RGB").tobytes()
        assert (screen.package, screen.activity) == ("com.example.shop", ".MainActivity")
    tree = parse_ui_xml(file_bytes(record.screens[0].ui_xml))
    assert [(e.class_name, e.text, e.bounds) for e in tree.elements[1:]] == [
        ("android.widget.TextView", "Buy 1", (10, 100, 110, 140))
    ]
    assert record.steps[0].target["text"] == "Buy 1"
    unmapped = [json.loads(line) for line in (out / "unmapped.jsonl").open(encoding="utf-8")]
    assert [(u["episode_id"], u["step_index"], u["split"]) for u in unmapped] == [
        (str(trajectory.uid), i, "train") for i in (0, 3, 4, 7)
    ]
    assert unmapped[3]["waypoint_action"] == {"type": "answer", "text": "12.50"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["unmapped_actions"] == {
        "answer": 1,
        "long_press": 1,
        "open_app": 1,
        "swipe": 1,
    }
    assert SHARD in manifest["files"]


DUMP = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">
<node class="android.widget.FrameLayout" text="" content-desc="" bounds="[0,0][100,200]">
 <node class="android.widget.LinearLayout" text="" content-desc="" bounds="[0,0][100,50]">
  <node class="android.widget.ImageButton" text="" content-desc="Navigate up"
   bounds="[0,0][20,20]"/>
  <node class="android.widget.TextView" text="Cart" content-desc="" bounds="[20,0][80,20]"/>
  <node class="android.view.View" text="" content-desc="" bounds="[80,0][100,20]"/>
 </node>
 <node class="android.widget.Button" text="" content-desc="Pay now" bounds="[0,150][100,200]"/>
 <node class="android.widget.TextView" text="" content-desc="" bounds="[0,100][50,120]"/>
</node></hierarchy>"""


def test_a_real_dump_gives_its_text_and_icons_and_leaves_its_layouts_out():
    positions, texts, kinds = ui_annotations(DUMP.encode(), 100, 200)
    assert kinds == [b"ICON_NAVIGATE_UP", b"TEXT", b"ICON_PAY_NOW", b"TEXT"]
    assert texts == [b"", b"Cart", b"", b""]
    assert positions == pytest.approx(
        [0, 0, 0.1, 0.2, 0, 0.2, 0.1, 0.6, 0.75, 0, 0.25, 1, 0.5, 0, 0.1, 0.5]
    )


def test_it_takes_no_options():
    with pytest.raises(InvalidData) as error:
        check_export_request("aitw", {"parquet": True}, None)
    assert str(error.value) == "options: unknown option 'parquet' for aitw (it takes no options)"


def test_an_encoded_png_comes_back_as_the_same_pixels(project, tmp_path, read):
    records = [step("ep", 0, PRESS_BACK, image=png(3, W, H)), step("ep", 1, 10)]
    import_trajectories(project, shards(tmp_path, records), "aitw")
    [record] = read(exported(project, tmp_path))
    with Image.open(io.BytesIO(file_bytes(record.screens[0].screenshot))) as got:
        with Image.open(io.BytesIO(png(3, W, H))) as expected:
            assert got.tobytes() == expected.tobytes()


def test_a_recording_of_flat_phone_screens_imports_again_with_the_default_limits(
    project, tmp_path, read
):
    """Raw pixels of an app's flat screens deflate hundreds of times: the shard is no gzip
    bomb, and the reader takes it back with the instance's own limits."""
    record = make_record(steps=3, seed=7)
    screens = [
        dataclasses.replace(s, screenshot=png(40 * i, 540, 1200), width=540, height=1200)
        for i, s in enumerate(record.screens)
    ]
    do_import_trajectory(project, dataclasses.replace(record, screens=screens))
    out = exported(project, tmp_path)
    shard = out / SHARD
    raw = len(gzip.decompress(shard.read_bytes()))
    assert raw > 100 * shard.stat().st_size  # past the ratio, under the unpacked bytes' limit
    [back] = read(out)
    assert [(s.width, s.height) for s in back.screens] == [(540, 1200)] * 3
    first = Image.open(io.BytesIO(file_bytes(back.screens[0].screenshot)))
    assert first.size == (540, 1200) and first.getpixel((5, 5)) == (0, 80, 160)
