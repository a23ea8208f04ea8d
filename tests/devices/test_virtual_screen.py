"""Screenshots, uiautomator dumps and input on the virtual device, through the adb server."""

from __future__ import annotations

import asyncio
import io
import json
import threading
import time

import pytest
from lxml import etree
from PIL import Image

from tests.devices.conftest import adb, settled_screen, tap_node


def nodes(xml: str):
    return list(etree.fromstring(xml.encode()).iter("node"))


def text_of(xml: str, resource_id: str) -> str:
    return next(n.get("text") for n in nodes(xml) if n.get("resource-id") == resource_id)


def test_screenshot_is_a_png_at_device_size(adb_server, device):
    image = device.screenshot()
    assert image.size == (540, 1200)
    png = adb(adb_server, device.serial, "exec-out", "screencap", "-p").stdout
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert Image.open(io.BytesIO(png)).size == (540, 1200)


def test_dump_is_uiautomator_xml_of_the_app_window(adb_server, device):
    xml = device.dump_hierarchy()
    assert xml.startswith("<?xml")
    all_nodes = nodes(xml)
    # One window, the foreground app's: the system bars are other windows, as on a phone.
    assert {n.get("package") for n in all_nodes} == {"com.android.launcher3"}
    bar = next(n for n in all_nodes if n.get("resource-id") == "android:id/navigationBarBackground")
    x1, y1, x2, y2 = (int(v) for v in bar.get("bounds").replace("][", ",").strip("[]").split(","))
    assert (x1, y1, x2, y2) == (0, 1128, 540, 1200)  # at the bottom, in device pixels
    icon = next(n for n in all_nodes if n.get("text") == "FreshCart")
    assert icon.get("class") == "android.widget.Button"
    # `adb shell uiautomator dump` then `adb pull`, as people do by hand
    out = adb(adb_server, device.serial, "shell", "uiautomator", "dump").stdout
    assert out == b"UI hierchary dumped to: /sdcard/window_dump.xml\n"
    assert device.sync.read_text("/sdcard/window_dump.xml") == xml


def test_tapping_opens_an_app_and_back_returns(device):
    tap_node(device, text="MegaMart")
    assert device.app_current().package == "com.waypoint.megamart"
    xml = device.dump_hierarchy()
    tap_node(device, resource_id="com.waypoint.megamart:id/card_kettle")
    assert "Price includes VAT" in device.dump_hierarchy()
    device.keyevent("BACK")  # app-level back: the store front
    assert "Price includes VAT" not in device.dump_hierarchy()
    assert device.app_current().package == "com.waypoint.megamart"
    device.keyevent(4)  # then out to the launcher
    assert device.app_current().package == "com.android.launcher3"
    assert xml


def test_switching_apps_keeps_their_state(device):
    device.app_start("com.waypoint.freshcart")
    tap_node(device, resource_id="com.waypoint.freshcart:id/product_kettle")
    device.keyevent("HOME")
    device.app_start("com.waypoint.notes")
    device.app_start("com.waypoint.freshcart")
    assert text_of(device.dump_hierarchy(), "com.waypoint.freshcart:id/product_title") == (
        "Brew Pro Electric Kettle 1.7L"
    )


@pytest.mark.parametrize(
    "text", ["hello world", "Grüße, 東京 & ;|$HOME \"q\" 'x' `id` 100%", "a%sb"]
)
def test_send_keys_arrives_exactly_as_typed(device, text):
    device.app_start("com.waypoint.chatter")
    tap_node(device, resource_id="com.waypoint.chatter:id/chat_mia")
    tap_node(device, resource_id="com.waypoint.chatter:id/message_input")
    device.send_keys(text)
    typed = text_of(device.dump_hierarchy(), "com.waypoint.chatter:id/message_input")
    # "%s" is a space for `input text`, as on a phone
    assert typed == text.replace("%s", " ")


def test_adb_keyboard_base64_broadcast_carries_any_unicode(device):
    import base64

    device.app_start("com.waypoint.notes")
    tap_node(device, resource_id="com.waypoint.notes:id/new_note")
    tap_node(device, resource_id="com.waypoint.notes:id/note_title")
    text = "Prix: 12,50 € — ok 👍"
    device.shell(["am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg",
                  base64.b64encode(text.encode()).decode()])  # fmt: skip
    assert text_of(device.dump_hierarchy(), "com.waypoint.notes:id/note_title") == text


def test_keyboard_appears_for_text_fields(device, virtual_device):
    def keyboard_shown() -> bool:
        return "mInputShown=true" in device.shell("dumpsys input_method")

    device.app_start("com.waypoint.chatter")
    tap_node(device, resource_id="com.waypoint.chatter:id/chat_noah")
    assert not keyboard_shown()
    tap_node(device, resource_id="com.waypoint.chatter:id/message_input")
    assert keyboard_shown()
    xml = device.dump_hierarchy()
    assert "com.google.android.inputmethod.latin" not in xml  # its own window, not dumped
    field = next(n for n in nodes(xml) if n.get("resource-id").endswith("message_input"))
    assert field.get("focused") == "true" and field.get("class") == "android.widget.EditText"
    key = virtual_device.call(
        virtual_device.phone.screen._eval,
        "(() => { const r = document.querySelector('#keyboard button[aria-label=\"q\"]')"
        ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()",
    )
    scale = virtual_device.phone.screen.scale
    device.click(round(key[0] * scale), round(key[1] * scale))  # the soft keyboard types too
    assert text_of(device.dump_hierarchy(), "com.waypoint.chatter:id/message_input") == "q"
    device.keyevent("BACK")  # hides the keyboard first, like Android
    assert not keyboard_shown()
    assert device.app_current().package == "com.waypoint.chatter"


def test_swipe_scrolls(device):
    device.app_start("com.waypoint.freshcart")
    before = device.shell("waypoint visible-vars")
    device.swipe(270, 1000, 270, 300, 0.2)
    time.sleep(0.3)
    after = device.shell("waypoint visible-vars")
    assert before != after


class SlowRenderer:
    """The screen's DevTools session, answering each command ``delay`` seconds late, as a
    renderer on a busy machine does."""

    def __init__(self, session, delay: float):
        self.session, self.delay = session, delay

    async def send(self, method, params=None):
        await asyncio.sleep(self.delay)
        return await self.session.send(method, params)


def scrolled(virtual_device) -> float:
    """How far the foreground app's page is scrolled, in CSS pixels."""
    return virtual_device.call(
        virtual_device.phone.screen._eval,
        "document.querySelector('iframe.front').contentDocument.scrollingElement.scrollTop",
    )


def test_a_swipe_takes_the_duration_asked_when_the_renderer_is_slow(device, virtual_device):
    device.app_start("com.waypoint.freshcart")
    settled_screen(device)
    screen = virtual_device.phone.screen
    session = screen._cdp
    screen._cdp = SlowRenderer(session, 0.03)
    try:
        start = time.monotonic()
        device.shell(["input", "swipe", "270", "900", "270", "500", "400"])
        took = time.monotonic() - start
    finally:
        screen._cdp = session
    # The finger follows the clock: a move every frame, each a round trip, used to add the
    # round trips to the duration (25 moves at 30 ms each: 1.2 s for a 400 ms swipe).
    assert 0.4 <= took < 0.75, took


def test_the_screen_is_captured_while_the_finger_rests_at_the_end_of_a_swipe(device, monkeypatch):
    from devices.virtual import screen

    monkeypatch.setattr(screen, "SWIPE_REST_S", 1.0)  # a long rest, to capture in it for sure
    device.app_start("com.waypoint.freshcart")
    settled_screen(device)
    before = device.shell(["screencap", "-p"], encoding=None)
    returned = []
    swipe = threading.Thread(
        target=lambda: returned.append(
            (device.shell(["input", "swipe", "270", "900", "270", "600", "1300"]), time.monotonic())
        )
    )
    swipe.start()
    time.sleep(0.7)  # moved for 0.3 s, resting for 1 s
    during = device.shell(["screencap", "-p"], encoding=None)
    captured_at = time.monotonic()
    swipe.join()
    # The live view's frame need not wait for the finger to lift: the page is where it ends.
    assert captured_at < returned[0][1] - 0.3
    assert during != before


@pytest.mark.parametrize("ms", [60, 400, 1000])
def test_a_swipe_scrolls_by_the_distance_swiped_however_fast(device, virtual_device, ms):
    device.app_start("com.waypoint.freshcart")
    settled_screen(device)
    scale = virtual_device.phone.screen.scale
    before = scrolled(virtual_device)
    device.shell(["input", "swipe", "270", "900", "270", "600", str(ms)])
    time.sleep(0.5)  # a fling, if any, would scroll on meanwhile
    # Less Chromium's touch slop (15 CSS px), as a phone's list starts to scroll only after it.
    distance = 300 / scale
    assert distance - 20 <= scrolled(virtual_device) - before <= distance


def test_visible_vars_report_where_memory_variables_are(device, virtual_device):
    device.app_start("com.waypoint.chatter")
    tap_node(device, resource_id="com.waypoint.chatter:id/chat_noah")
    visible = json.loads(device.shell("waypoint visible-vars"))
    meeting = virtual_device.catalog.variable("chatter.meeting_time")
    assert [(v["ref"], v["value"]) for v in visible] == [("chatter.meeting_time", meeting.value)]
    x1, y1, x2, y2 = visible[0]["bounds"]
    assert 0 <= x1 < x2 <= 540 and 0 <= y1 < y2 <= 1200
    assert virtual_device.visible_vars() == visible  # the in-process API agrees


def test_answer_page_says_success_only_for_the_gold_answer(device, virtual_device):
    task = virtual_device.catalog.task("noah-meeting-time")
    device.shell(["waypoint", "task", "start", task.id])
    assert device.app_current().package == "com.waypoint.answers"
    for answer, shown in (("12:00", False), (task.gold, True)):
        tap_node(device, resource_id="com.waypoint.answers:id/answer")
        device.shell(["am", "broadcast", "-a", "ADB_CLEAR_TEXT"])
        device.send_keys(answer)
        tap_node(device, resource_id="com.waypoint.answers:id/submit")
        texts = [n.get("text") for n in nodes(device.dump_hierarchy())]
        assert ("Success!" in texts) is shown


def test_dump_while_animating_fails_like_a_phone(device, virtual_device):
    device.app_start("com.waypoint.notes")
    virtual_device.call(
        virtual_device.phone.screen._eval,
        "document.querySelector('iframe.front').contentDocument.body.animate("
        "[{opacity: 1}, {opacity: 0.5}], {duration: 100000})",
    )
    virtual_device.phone.screen.idle_timeout = 0.3
    try:
        out = device.shell("uiautomator dump /sdcard/x.xml")
        assert out == "ERROR: could not get idle state."
        with pytest.raises(Exception, match="uiautomator dump failed"):
            device.dump_hierarchy()
    finally:
        virtual_device.phone.screen.idle_timeout = 2.0
        device.app_stop("com.waypoint.notes")


def test_screenshots_follow_the_screen(device):
    settled_screen(device)
    first = device.shell("screencap -p", encoding=None)
    assert device.shell("screencap -p", encoding=None) == first  # cached, same screen
    device.app_start("com.waypoint.megamart")
    assert device.shell("screencap -p", encoding=None) != first


def test_screen_version_tells_whether_a_capture_and_its_vars_match(device):
    device.app_start("com.waypoint.megamart")
    settled_screen(device)
    before = device.shell("waypoint screen-version")
    device.screenshot()
    assert device.shell("waypoint screen-version") == before
    device.swipe(270, 900, 270, 400, 0.2)
    time.sleep(0.3)
    assert device.shell("waypoint screen-version") != before
