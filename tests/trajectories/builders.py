"""Small hand-made trajectories for tests that need exact, readable content."""

from __future__ import annotations

import io
import uuid
from datetime import UTC, datetime, timedelta

from PIL import Image, ImageDraw

from trajectories.records import ScreenRecord, StepRecord, TaskRecord, TrajectoryRecord

WIDTH, HEIGHT = 120, 240

XML = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
    '<hierarchy rotation="0">'
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" '
    'package="com.example.shop" content-desc="" checkable="false" checked="false" '
    'clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" '
    'long-clickable="false" password="false" selected="false" bounds="[0,0][120,240]">'
    '<node index="0" text="{label}" resource-id="com.example.shop:id/buy" '
    'class="android.widget.Button" package="com.example.shop" content-desc="" '
    'checkable="false" checked="false" clickable="true" enabled="true" focusable="true" '
    'focused="false" scrollable="false" long-clickable="false" password="false" '
    'selected="false" bounds="[10,100][110,140]"/>'
    "</node></hierarchy>"
)


def png(shade: int, width: int = WIDTH, height: int = HEIGHT) -> bytes:
    image = Image.new("RGB", (width, height), (shade % 256, 80, 160))
    ImageDraw.Draw(image).rectangle((10, 100, 110, 140), fill=(240, 240, 240))
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


def make_record(steps: int = 3, seed: int = 0, **overrides) -> TrajectoryRecord:
    """A trajectory of ``steps`` clicks on a Buy button, with every kind of label."""
    start = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
    screens = [
        ScreenRecord(
            screenshot=png(seed * 31 + i),
            ui_xml=XML.replace("{label}", f"Buy {i}").encode(),
            width=WIDTH,
            height=HEIGHT,
            package="com.example.shop",
            activity=".MainActivity",
            captured_at=start + timedelta(seconds=2 * i),
        )
        for i in range(steps + 1)
    ]
    step_records = [
        StepRecord(
            index=i,
            screen=i,
            action={"type": "click", "x": 60, "y": 120},
            target={
                "bounds": [10, 100, 110, 140],
                "resource_id": "com.example.shop:id/buy",
                "class": "android.widget.Button",
                "text": f"Buy {i}",
                "content_desc": "",
                "path": "0/0",
            },
            thought=f"Press buy {i}",
            summary=f"Tap Buy {i}",
            memory="price is 12.50 €" if i == 0 else "",
            action_sent_at=start + timedelta(seconds=2 * i),
            settled_at=start + timedelta(seconds=2 * i, milliseconds=700),
        )
        for i in range(steps)
    ]
    fields = dict(
        uid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"waypoint-test/{seed}/{steps}")),
        task=TaskRecord(
            uid=f"task-{seed}",
            goal="Buy the cheapest headphones",
            apps=["com.example.shop"],
            intent="purchase_order",
            difficulty="L2",
            gold_answer="12.50",
            grading_rule="exact",
            memory_items=[{"key": "price", "description": "price of the headphones"}],
        ),
        screens=screens,
        steps=step_records,
        final_screen=steps,
        device={
            "model": "Pixel 8",
            "android_version": "14",
            "width": WIDTH,
            "height": HEIGHT,
            "density": 420,
            "serial": "emulator-5554",
        },
        source="recorded",
        status="annotating",
        outcome="success",
        recorded_by="alice",
        recorded_at=start,
        metadata={"note": "ünïcode ✓"},
        subgoals=[
            {
                "start": 0,
                "end": 0,
                "text": "Open the item",
                "effect": "item page",
                "behaviour": "tap",
                "success": "yes",
            },
        ]
        + (
            [
                {
                    "start": 1,
                    "end": steps - 1,
                    "text": "Buy it",
                    "effect": "bought",
                    "behaviour": "tap",
                    "success": "uncertain",
                }
            ]
            if steps > 1
            else []
        ),
        memory_targets=[
            {
                "key": "price",
                "value": "12.50",
                "encode_step": 0,
                "retrieve_steps": [steps - 1] if steps > 1 else [],
                "evidence": {"bounds": [10, 100, 110, 140]},
            },
        ],
        anchors=[
            {
                "id": "a1",
                "step": 0,
                "type": "context_info",
                "content": "price 12.50",
                "description": "needed at checkout",
                "evidence": {},
            },
            {
                "id": "a2",
                "step": steps - 1,
                "type": "finish",
                "content": "bought",
                "description": "",
                "evidence": {},
            },
        ],
        anchor_links=[{"source": "a1", "target": "a2", "relation": "enables", "critical": True}],
    )
    fields.update(overrides)
    return TrajectoryRecord(**fields)
