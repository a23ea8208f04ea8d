"""The virtual device's `uiautomator dump` reads like a phone's, for tools written for phones."""

from __future__ import annotations

import base64
import re
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from lxml import etree

from tests.devices.conftest import tap_node
from trajectories.uixml import parse_bounds

REALDATA = Path(__file__).resolve().parents[2].parent / "shared" / "realdata"
WIDTH, HEIGHT = 540, 1200
APPS = ["com.waypoint.answers", "com.waypoint.chatter", "com.waypoint.freshcart",
        "com.waypoint.megamart", "com.waypoint.notes", "com.waypoint.shopmate",
        "com.waypoint.agenda", "com.waypoint.ledger", "com.waypoint.contacts",
        "com.waypoint.skybook", "com.waypoint.mailbox", "com.waypoint.parceltrack",
        "com.waypoint.skycast"]  # fmt: skip
# The attributes of a <node>, in the order uiautomator writes them.
ATTRIBUTES = ["index", "text", "resource-id", "class", "package", "content-desc", "checkable",
              "checked", "clickable", "enabled", "focusable", "focused", "scrollable",
              "long-clickable", "password", "selected", "bounds"]  # fmt: skip
NODE_TAG = re.compile(r'<node((?: [a-z-]+="[^"<]*")+) ?/?>')
ATTRIBUTE = re.compile(r' ([a-z-]+)="')
# package:id/name, the name a valid Android resource name (a Java identifier); the virtual
# apps' names are lower case, as Android's naming convention has them.
RESOURCE_ID = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*:id/[A-Za-z_][A-Za-z0-9_]*")
LOWER_CASE_NAME = re.compile(r"[a-z][a-z0-9_]*")
TEXT_VIEWS = {"android.widget.TextView", "android.widget.Button"}


def check_like_a_phone(
    xml: str, width: int = WIDTH, height: int = HEIGHT, ours: bool = True
) -> etree._Element:
    """What tools written for real dumps rely on; returns the parsed <hierarchy>.

    ``ours``: also what Waypoint's dumps promise beyond that (lower-case resource names, every
    view inside its parent); real apps do not always keep to those.
    """
    assert "\n" not in xml.strip() and xml.startswith("<?xml version='1.0' encoding='UTF-8'")
    root = etree.fromstring(xml.encode(), etree.XMLParser(recover=False))  # strict
    ElementTree.fromstring(xml)  # the standard library's parser agrees
    # Every attribute double-quoted, in uiautomator's order (tools read them with regexes).
    tags = NODE_TAG.findall(xml)
    assert len(tags) == xml.count("<node "), "a <node> with an attribute not in double quotes"
    for attrs in tags:
        assert ATTRIBUTE.findall(attrs) == ATTRIBUTES
    # One window: the app's, filling the screen.
    assert root.tag == "hierarchy" and root.get("rotation") == "0"
    (window,) = root
    assert window.get("bounds") == f"[0,0][{width},{height}]"
    packages = {n.get("package") for n in root.iter("node")}
    assert len(packages) == 1, packages
    for parent in root.iter("node"):
        px1, py1, px2, py2 = parse_bounds(parent.get("bounds"))
        assert 0 <= px1 < px2 <= width and 0 <= py1 < py2 <= height, parent.attrib
        rid = parent.get("resource-id")
        assert not rid or RESOURCE_ID.fullmatch(rid), rid
        if rid and ours and not rid.startswith("android:"):
            assert LOWER_CASE_NAME.fullmatch(rid.split(":id/")[1]), rid
        for child in parent if ours else ():
            x1, y1, x2, y2 = parse_bounds(child.get("bounds"))
            assert px1 <= x1 and py1 <= y1 and x2 <= px2 and y2 <= py2, (
                parent.attrib,
                child.attrib,
            )
        # A text view or button holds its own text: no text views inside it.
        if parent.get("class") in TEXT_VIEWS:
            assert not [c for c in parent if c.get("class") == "android.widget.TextView"], (
                parent.attrib
            )
    return root


def nodes(xml: str) -> list[etree._Element]:
    return list(etree.fromstring(xml.encode()).iter("node"))


def node_with(xml: str, **attrs: str) -> etree._Element:
    for n in nodes(xml):
        if all(n.get(k.replace("_", "-")) == v for k, v in attrs.items()):
            return n
    raise AssertionError(f"no node with {attrs}")


def bounds_of(n) -> tuple[int, int, int, int]:
    return parse_bounds(n.get("bounds"))


def overlap(a, b) -> bool:
    return max(a[0], b[0]) < min(a[2], b[2]) and max(a[1], b[1]) < min(a[3], b[3])


def test_the_real_dumps_pass_the_same_checks():
    for name in ("favoritesScreen", "mapScreen"):
        xml = (REALDATA / "zillow-auto-mobile" / f"{name}.xml").read_text()
        root = check_like_a_phone(xml, 1080, 2400, ours=False)
        ids = [n.get("resource-id") for n in root[0]]
        assert ids[-2:] == ["android:id/statusBarBackground", "android:id/navigationBarBackground"]


@pytest.mark.parametrize("package", ["com.android.launcher3", *APPS])
def test_every_app_dumps_one_window_like_a_phone(device, package):
    if package != "com.android.launcher3":
        device.app_start(package)
    xml = device.dump_hierarchy()
    root = check_like_a_phone(xml)
    assert {n.get("package") for n in root.iter("node")} == {package}
    # As on a phone, the decor view holds the content and the bars' backgrounds.
    assert [n.get("resource-id") for n in root[0]] == [
        "android:id/content",
        "android:id/statusBarBackground",
        "android:id/navigationBarBackground",
    ]


def test_the_keyboard_is_another_window_and_not_in_the_dump(device):
    device.app_start("com.waypoint.chatter")
    tap_node(device, resource_id="com.waypoint.chatter:id/chat_noah")
    tap_node(device, resource_id="com.waypoint.chatter:id/message_input")
    assert "mInputShown=true" in device.shell("dumpsys input_method")
    xml = device.dump_hierarchy()
    check_like_a_phone(xml)
    assert "inputmethod" not in xml
    # The app is resized above the keyboard, as with adjustResize.
    field = bounds_of(node_with(xml, resource_id="com.waypoint.chatter:id/message_input"))
    assert field[3] <= HEIGHT - 260 * 540 // 360


def test_typed_control_characters_and_quotes_keep_the_dump_readable(device):
    device.app_start("com.waypoint.chatter")
    tap_node(device, resource_id="com.waypoint.chatter:id/chat_mia")
    tap_node(device, resource_id="com.waypoint.chatter:id/message_input")
    typed = "bell\x07 esc\x1b \"q\" 'x' <&> tab\tend"
    msg = base64.b64encode(typed.encode()).decode()
    device.shell(["am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", msg])
    xml = device.dump_hierarchy()
    check_like_a_phone(xml)
    assert 'text="bell. esc. &quot;q&quot;' in xml
    field = node_with(xml, resource_id="com.waypoint.chatter:id/message_input")
    assert field.get("text") == "bell. esc. \"q\" 'x' <&> tab\tend"


def test_the_page_that_scrolls_is_a_scrollable_view_holding_the_rows(device):
    device.app_start("com.waypoint.freshcart")
    xml = device.dump_hierarchy()
    (scroller,) = [n for n in nodes(xml) if n.get("scrollable") == "true" and n.iter()]
    ids = {n.get("resource-id") for n in scroller.iter("node")}
    assert "com.waypoint.freshcart:id/product_aerosound_x3" in ids
    assert scroller.get("class") == "android.widget.ScrollView"
    # Ids are resource names: the HTML id "product_aerosound-x5" reads as product_aerosound_x5.
    assert "com.waypoint.freshcart:id/product_aerosound_x5" in ids


def test_rows_under_the_header_and_the_tab_bar_are_cut_or_left_out(device, virtual_device):
    device.app_start("com.waypoint.freshcart")
    device.swipe(270, 1000, 270, 300, 0.3)
    time.sleep(0.3)
    xml = device.dump_hierarchy()
    check_like_a_phone(xml)
    header = bounds_of(node_with(xml, **{"class": "android.widget.Toolbar"}))
    tabs = [bounds_of(node_with(xml, resource_id=f"com.waypoint.freshcart:id/tab_{t}"))
            for t in ("home", "orders", "account")]  # fmt: skip
    rows = [
        n
        for n in nodes(xml)
        if n.get("resource-id").startswith("com.waypoint.freshcart:id/product_")
    ]
    assert rows
    for row in rows:
        for part in [row, *row.iter("node")]:
            assert not overlap(bounds_of(part), header), part.attrib
            assert not any(overlap(bounds_of(part), tab) for tab in tabs), part.attrib
    # What is scrolled out of view or fully covered is not dumped at all, as uiautomator does.
    shown = {n.get("resource-id").rsplit("/", 1)[1] for n in rows}
    assert "product_aerosound_x5" not in shown
    # A value that is covered is not "visible" either.
    visible = {v["name"] for v in virtual_device.visible_vars()}
    assert "price_aerosound" not in visible


def test_a_button_holds_its_label_as_its_own_text(device):
    # The launcher's icons: a button with a tile and a label inside, like Android's BubbleTextView.
    xml = device.dump_hierarchy()
    icon = node_with(xml, content_desc="FreshCart")
    assert (icon.get("class"), icon.get("text"), len(icon)) == (
        "android.widget.Button",
        "FreshCart",
        0,
    )


def test_text_views_hold_their_text_and_never_other_text_views(device, virtual_device):
    device.app_start("com.waypoint.freshcart")
    tap_node(device, resource_id="com.waypoint.freshcart:id/product_kettle")
    xml = device.dump_hierarchy()
    check_like_a_phone(xml)  # no text view inside a text view
    price = node_with(xml, resource_id="com.waypoint.freshcart:id/product_price")
    was = price.getnext()  # the crossed-out price is a text view beside it
    assert (was.get("class"), was.get("text")[0]) == ("android.widget.TextView", "$")
    assert len(price) == 0 and price.get("text").startswith("$")

    device.app_start("com.waypoint.chatter")
    tap_node(device, resource_id="com.waypoint.chatter:id/chat_noah")
    xml = device.dump_hierarchy()
    check_like_a_phone(xml)
    meeting = virtual_device.catalog.variable("chatter.meeting_time").value
    message = next(n for n in nodes(xml) if meeting in n.get("text"))
    assert message.get("text").startswith("Let's meet") and len(message) == 0


def test_a_span_shown_as_a_block_is_a_line_of_its_own_in_its_view_s_text(device):
    """A message's time sits under its text (a span styled as a block): the view's text keeps
    them apart, as a phone's text view holds its lines, instead of running them together."""
    device.app_start("com.waypoint.chatter")
    tap_node(device, resource_id="com.waypoint.chatter:id/chat_ava")
    texts = [n.get("text") for n in nodes(device.dump_hierarchy())]
    assert "Bins go out on Tuesday evening 12 Mar" in texts, texts
    assert "You're the best. Keys are under the blue pot Yesterday" in texts, texts


def test_a_transparent_view_is_not_visible_and_not_dumped(device, virtual_device):
    device.app_start("com.waypoint.freshcart")
    assert 'resource-id="com.waypoint.freshcart:id/cart_count"' in device.dump_hierarchy()
    virtual_device.call(
        virtual_device.phone.screen._eval,
        "document.querySelector('iframe.front').contentDocument"
        ".querySelector('[data-testid=cart_count]').style.opacity = '0'",
    )
    xml = device.dump_hierarchy()
    check_like_a_phone(xml)
    assert "cart_count" not in xml and 'text="FreshCart"' in xml
