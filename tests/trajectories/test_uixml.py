import dataclasses
import json
import random
import re
from pathlib import Path

import pytest
from lxml import etree

from trajectories.uixml import (
    UIElement,
    UITree,
    UIXmlError,
    parse_bounds,
    parse_ui_xml,
    structure_similarity,
    views_to_uiautomator_xml,
)

REALDATA = Path(__file__).resolve().parents[2].parent / "shared" / "realdata"
ZILLOW = REALDATA / "zillow-auto-mobile"
DROIDBOT = REALDATA / "droidbot"
ZILLOW_PACKAGE = "com.zillow.android.zillowmap"


def zillow_bytes(name: str) -> bytes:
    return (ZILLOW / f"{name}.xml").read_bytes()


@pytest.fixture(scope="module")
def favorites() -> UITree:
    return parse_ui_xml(zillow_bytes("favoritesScreen"))


@pytest.fixture(scope="module")
def map_screen() -> UITree:
    return parse_ui_xml(zillow_bytes("mapScreen"))


def droidbot_states() -> list[dict]:
    paths = sorted((DROIDBOT / "states").glob("state_*.json"))
    return [json.loads(p.read_text()) for p in paths]


def node(bounds: str, children: str = "", **attrs: str) -> str:
    """A synthetic <node>; `long_clickable=` for long-clickable, `class_=` for class."""
    rendered = "".join(f' {k.rstrip("_").replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<node bounds="{bounds}"{rendered}>{children}</node>'


def dump(*nodes: str) -> str:
    header = '<?xml version="1.0" encoding="UTF-8"?>'
    return f'{header}<hierarchy rotation="0">{"".join(nodes)}</hierarchy>'


def error_of(data: bytes | str) -> str:
    with pytest.raises(UIXmlError) as info:
        parse_ui_xml(data)
    return str(info.value)


# --- parsing real dumps ----------------------------------------------------------------------


def test_it_parses_the_zillow_favorites_dump(favorites):
    assert len(favorites.elements) == 51
    assert favorites.package == ZILLOW_PACKAGE
    assert (favorites.width, favorites.height) == (1080, 2400)
    assert favorites.root_bounds == (0, 0, 1080, 2400)
    assert favorites.rotation == 0


def test_it_parses_the_zillow_map_dump(map_screen):
    assert len(map_screen.elements) == 170
    assert map_screen.package == ZILLOW_PACKAGE
    assert (map_screen.width, map_screen.height) == (1080, 2400)


def test_it_reads_every_attribute_of_a_node(favorites):
    (button,) = favorites.find(resource_id=f"{ZILLOW_PACKAGE}:id/create_an_account_button")
    assert button == UIElement(
        path="0/0/0/0/0/0/0/0/0/0/0/0/2/0/3",
        index=3,
        depth=14,
        text="Create an account",
        resource_id=f"{ZILLOW_PACKAGE}:id/create_an_account_button",
        class_name="android.widget.Button",
        package=ZILLOW_PACKAGE,
        content_desc="",
        bounds=(130, 1284, 949, 1394),
        checkable=False,
        checked=False,
        clickable=True,
        enabled=True,
        focusable=True,
        focused=False,
        scrollable=False,
        long_clickable=False,
        password=False,
        selected=False,
    )
    assert (button.width, button.height, button.area) == (819, 110, 819 * 110)
    assert button.center == (539, 1339)
    assert button.contains(130, 1284) and not button.contains(949, 1300)


def test_it_gives_the_step_target_of_an_element(favorites):
    (button,) = favorites.find(resource_id="create_an_account_button")
    assert button.to_target() == {
        "bounds": [130, 1284, 949, 1394],
        "resource_id": f"{ZILLOW_PACKAGE}:id/create_an_account_button",
        "class": "android.widget.Button",
        "text": "Create an account",
        "content_desc": "",
        "path": "0/0/0/0/0/0/0/0/0/0/0/0/2/0/3",
    }


def test_paths_and_depths_follow_the_tree(favorites):
    root, *_, nav_bar = favorites.elements
    assert (root.path, root.depth) == ("0", 0)
    assert nav_bar.resource_id == "android:id/navigationBarBackground"
    assert (nav_bar.path, nav_bar.depth, nav_bar.index) == ("0/2", 1, 2)
    for el in favorites.elements:
        assert el.depth == el.path.count("/")


def test_it_accepts_text_and_the_adb_trailer():
    text = zillow_bytes("favoritesScreen").decode("utf-8")
    assert len(parse_ui_xml(text).elements) == 51
    trailer = zillow_bytes("favoritesScreen") + b"UI hierchary dumped to: /dev/tty\n"
    assert len(parse_ui_xml(trailer).elements) == 51


def test_an_empty_hierarchy_is_an_empty_screen():
    tree = parse_ui_xml("<hierarchy rotation='1'/>")
    assert tree.elements == [] and tree.rotation == 1
    assert (tree.width, tree.height, tree.package) == (0, 0, "")
    assert tree.element_at(10, 10) is None


# --- hit-testing -----------------------------------------------------------------------------


def test_it_finds_the_smallest_clickable_under_a_point(favorites, map_screen):
    assert favorites.element_at(500, 1340).resource_id.endswith("/create_an_account_button")
    assert favorites.element_at(540, 2050).resource_id.endswith("/subtitle")
    # The chip sits inside three larger clickable containers of the search bar.
    chip = map_screen.element_at(300, 150)
    assert chip.resource_id == f"{ZILLOW_PACKAGE}:id/single_chip_id"
    assert chip.text == "Seattle WA homes"
    handle = map_screen.element_at(540, 2000)
    assert handle.content_desc == "Bottom sheet handle"


def test_a_tap_on_a_label_hits_its_clickable_parent(favorites, map_screen):
    # "Search" tab: the TextView itself is not clickable, the tab View around it is.
    tab = favorites.element_at(100, 2270)
    assert (tab.bounds, tab.clickable, tab.text) == ((0, 2127, 200, 2337), True, "")
    save_search = map_screen.element_at(850, 1880)
    assert save_search.bounds == (689, 1816, 1038, 1942)
    assert save_search.clickable


def test_it_falls_back_to_focusable_then_labelled_nodes(favorites):
    # Over the sign-in illustration nothing is clickable; the focusable list behind it wins.
    assert favorites.element_at(540, 900).resource_id.endswith("/recycler_view")
    # In the empty part of the toolbar nothing is clickable or focusable: the toolbar itself.
    assert favorites.element_at(540, 150).resource_id.endswith("/legacy_toolbar")
    assert favorites.element_at(200, 130).text == "Saved homes"


def test_it_falls_back_to_the_smallest_node_of_all():
    tree = parse_ui_xml(
        dump(node("[0,0][100,100]", node("[10,10][50,50]", node("[20,20][30,30]"))))
    )
    assert tree.element_at(25, 25).path == "0/0/0"
    assert tree.element_at(15, 15).path == "0/0"
    assert tree.element_at(60, 60).path == "0"


def test_a_disabled_button_only_counts_as_a_fallback():
    tree = parse_ui_xml(
        dump(
            node(
                "[0,0][100,100]",
                node("[10,10][50,50]", clickable="true", enabled="false", resource_id="a:id/off"),
                clickable="true",
                resource_id="a:id/card",
            )
        )
    )
    assert tree.element_at(20, 20).resource_id == "a:id/card"
    lonely = parse_ui_xml(
        dump(node("[0,0][100,100]", node("[10,10][50,50]", clickable="true", enabled="false")))
    )
    assert lonely.element_at(20, 20).path == "0/0"


def test_long_clickable_counts_as_clickable():
    tree = parse_ui_xml(
        dump(
            node("[0,0][100,100]", node("[10,10][50,50]", long_clickable="true"), focusable="true")
        )
    )
    assert tree.element_at(20, 20).path == "0/0"


def test_zero_area_nodes_never_match():
    tree = parse_ui_xml(
        dump(
            node(
                "[0,0][100,100]",
                node("[10,10][10,50]", clickable="true") + node("[60,60][40,40]", clickable="true"),
            )
        )
    )
    assert tree.element_at(10, 20).path == "0"
    assert tree.element_at(50, 50).path == "0"


def test_ties_on_area_go_to_the_deepest_node():
    same = "[0,0][100,100]"
    tree = parse_ui_xml(
        dump(
            node(same, node(same, node(same, clickable="true"), clickable="true"), clickable="true")
        )
    )
    assert tree.element_at(50, 50).path == "0/0/0"
    siblings = parse_ui_xml(dump(node(same, node(same, text="a") + node(same, text="b"))))
    assert siblings.element_at(50, 50).text == "b"


def shop_screen() -> UITree:
    """A real-style list screen: the list runs under a toolbar and a tab bar drawn after it."""
    rows = "".join(
        node(
            f"[0,{y}][1080,{y + 300}]",
            node(f"[40,{y + 20}][800,{y + 120}]", text=f"Item {i}"),
            clickable="true",
            resource_id=f"shop:id/row_{i}",
        )
        for i, y in enumerate(range(0, 2100, 300))
    ) + node("[0,2190][1080,2270]", clickable="true", resource_id="shop:id/row_last")
    toolbar = node(
        "[0,0][1080,200]",
        node("[40,60][400,140]", text="Shop", class_="android.widget.TextView"),
        class_="androidx.appcompat.widget.Toolbar",
        resource_id="shop:id/toolbar",
    )
    tabs = node(
        "[0,2200][1080,2400]",
        node("[0,2200][540,2400]", clickable="true", resource_id="shop:id/tab_home")
        + node("[540,2200][1080,2400]", clickable="true", resource_id="shop:id/tab_orders"),
        class_="android.widget.LinearLayout",
    )
    lst = node("[0,0][1080,2400]", rows, scrollable="true", resource_id="shop:id/list")
    return parse_ui_xml(dump(node("[0,0][1080,2400]", lst + toolbar + tabs)))  # fmt: skip


def test_a_tab_bar_drawn_over_a_list_gets_the_tap_however_small_the_row_beneath():
    tree = shop_screen()
    # The last row peeks out under the tab bar and is smaller than the tab: still the tab.
    assert tree.element_at(300, 2250).resource_id == "shop:id/tab_home"
    assert tree.element_at(800, 2210).resource_id == "shop:id/tab_orders"
    assert tree.element_at(300, 2050).resource_id == "shop:id/row_6"


def test_a_toolbar_takes_the_tap_not_the_row_scrolled_under_it():
    tree = shop_screen()
    assert tree.element_at(200, 100).text == "Shop"
    assert tree.element_at(700, 100).resource_id == "shop:id/toolbar"
    assert tree.element_at(700, 250).resource_id == "shop:id/row_0"


def test_a_later_sibling_covers_an_earlier_one_even_when_larger():
    small, card = "[100,100][200,200]", "[0,0][500,500]"
    tree = parse_ui_xml(
        dump(
            node(
                "[0,0][1000,1000]",
                node(small, clickable="true", resource_id="a:id/below")
                + node(card, clickable="true", resource_id="a:id/dialog"),
            )
        )
    )
    assert tree.element_at(150, 150).resource_id == "a:id/dialog"
    # Drawn first, the dialog would lie beneath the button: then the button is hit.
    swapped = parse_ui_xml(
        dump(
            node(
                "[0,0][1000,1000]",
                node(card, clickable="true", resource_id="a:id/dialog")
                + node(small, clickable="true", resource_id="a:id/below"),
            )
        )
    )
    assert swapped.element_at(150, 150).resource_id == "a:id/below"


def test_points_outside_every_node_find_nothing(favorites):
    assert favorites.element_at(2000, 100) is None
    assert favorites.element_at(-1, 5) is None
    assert favorites.element_at(1080, 100) is None  # the right edge belongs to nobody
    assert favorites.element_at(1079, 2399).resource_id == "android:id/navigationBarBackground"


# --- queries ---------------------------------------------------------------------------------


def test_it_lists_the_interactable_elements(favorites, map_screen):
    for tree in (favorites, map_screen):
        found = tree.interactable()
        assert found
        assert all(el.enabled and el.area > 0 for el in found)
    ids = {el.resource_id.rpartition("/")[2] for el in favorites.interactable()}
    assert {"create_an_account_button", "subtitle"} <= ids
    assert "toolbar_title" not in ids


def test_interactable_includes_text_fields_and_skips_disabled_ones():
    tree = parse_ui_xml(
        dump(
            node(
                "[0,0][100,100]",
                node("[0,0][50,50]", class_="android.widget.EditText")
                + node("[50,50][90,90]", clickable="true", enabled="false"),
            )
        )
    )
    assert [el.path for el in tree.interactable()] == ["0/0"]


def test_it_finds_elements_by_field(map_screen):
    full = f"{ZILLOW_PACKAGE}:id/single_chip_id"
    assert [el.text for el in map_screen.find(resource_id=full)] == ["Seattle WA homes"]
    assert map_screen.find(resource_id="single_chip_id") == map_screen.find(resource_id=full)
    assert len(map_screen.find(text="Search", class_name="android.widget.TextView")) == 1
    assert len(map_screen.find(content_desc="Filters")) == 2
    assert map_screen.find(text="Search", class_name="android.widget.Button") == []


# --- screen identity -------------------------------------------------------------------------


def test_the_structure_signature_ignores_text_and_values():
    original = zillow_bytes("mapScreen")
    rewritten = re.sub(rb' (text|content-desc)="[^"]*"', rb' \1="changed"', original)
    rewritten = rewritten.replace(b'checked="false"', b'checked="true"')
    assert rewritten != original
    a, b = parse_ui_xml(original), parse_ui_xml(rewritten)
    assert a.structure_signature() == b.structure_signature()
    moved = UITree([dataclasses.replace(el, bounds=(1, 2, 3, 4)) for el in a.elements])
    assert moved.structure_signature() == a.structure_signature()
    assert re.fullmatch(r"[0-9a-f]{64}", a.structure_signature())


def test_the_structure_signature_tells_screens_apart(favorites, map_screen):
    assert favorites.structure_signature() != map_screen.structure_signature()
    renamed = UITree(
        [
            dataclasses.replace(el, resource_id="x:id/other")
            if "subtitle" in el.resource_id
            else el
            for el in favorites.elements
        ]
    )
    assert renamed.structure_signature() != favorites.structure_signature()


def test_the_structure_signature_ignores_how_many_list_items_show():
    doc = etree.fromstring(zillow_bytes("mapScreen"))
    markers = doc.xpath("//node[starts-with(@content-desc, 'For sale Home Map Marker')]")
    assert len(markers) == 75
    for marker in markers[1:]:
        marker.getparent().remove(marker)
    fewer = parse_ui_xml(etree.tostring(doc))
    assert len(fewer.elements) == 170 - 74
    assert (
        fewer.structure_signature() == parse_ui_xml(zillow_bytes("mapScreen")).structure_signature()
    )


def test_structure_tokens_and_similarity(favorites, map_screen):
    assert favorites.structure_tokens()[0] == "0:android.widget.FrameLayout#"
    assert favorites.structure_tokens()[14] == (
        f"14:android.widget.TextView#{ZILLOW_PACKAGE}:id/toolbar_title"
    )
    assert structure_similarity(favorites, favorites) == 1.0
    between = structure_similarity(favorites, map_screen)
    assert 0.0 < between < 0.5
    assert between == structure_similarity(map_screen, favorites)
    assert structure_similarity(UITree(), UITree()) == 1.0
    assert structure_similarity(favorites, UITree()) == 0.0


# --- DroidBot conversion ---------------------------------------------------------------------


def test_every_droidbot_state_converts_to_a_dump_with_one_node_per_view():
    states = droidbot_states()
    assert len(states) == 10
    for state in states:
        xml = views_to_uiautomator_xml(state["views"])
        assert xml.startswith(b"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy")
        tree = parse_ui_xml(xml)
        views = state["views"]
        assert len(tree.elements) == len(views)
        assert (tree.width, tree.height) == (1440, 2560)
        assert tree.package == state["foreground_activity"].split("/")[0]
        expected = sorted(
            (v["class"], tuple(v["bounds"][0] + v["bounds"][1]), v["text"] or "") for v in views
        )
        got = sorted((el.class_name, el.bounds, el.text) for el in tree.elements)
        assert got == expected


def test_converted_states_keep_the_tree_and_the_flags():
    views = droidbot_states()[0]["views"]
    tree = parse_ui_xml(views_to_uiautomator_xml(views))
    (button,) = tree.find(resource_id="com.yanzhenjie.album.sample:id/action_check_image")
    view = next(v for v in views if v["resource_id"] == button.resource_id)
    assert button.bounds == (1248, 112, 1440, 304)
    assert (button.clickable, button.enabled, button.long_clickable) == (
        view["clickable"],
        view["enabled"],
        view["long_clickable"],
    )
    parent_path = button.path.rpartition("/")[0]
    parent = next(el for el in tree.elements if el.path == parent_path)
    assert parent.bounds == tuple(
        views[view["parent"]]["bounds"][0] + views[view["parent"]]["bounds"][1]
    )


def test_converted_states_hit_the_views_droidbot_touched():
    states = {s["state_str"]: s for s in droidbot_states()}
    checked = 0
    for path in sorted((DROIDBOT / "events").glob("event_*.json")):
        record = json.loads(path.read_text())
        event, state = record["event"], states.get(record["start_state"])
        view = event.get("view")
        if event["event_type"] != "touch" or state is None or not view["clickable"]:
            continue
        (x1, y1), (x2, y2) = view["bounds"]
        if x2 <= x1 or y2 <= y1:
            continue
        tree = parse_ui_xml(views_to_uiautomator_xml(state["views"]))
        hit = tree.element_at((x1 + x2) // 2, (y1 + y2) // 2)
        assert hit.bounds == (x1, y1, x2, y2), path.name
        assert hit.resource_id == (view["resource_id"] or ""), path.name
        checked += 1
    assert checked >= 15


def test_the_converter_uses_the_given_package_and_cleans_text():
    views = [
        {"temp_id": 0, "parent": -1, "children": [1], "class": "F", "bounds": [[0, 0], [9, 9]]},
        {
            "temp_id": 1,
            "parent": 0,
            "children": [],
            "class": "T",
            "text": "a\x00b",
            "bounds": [[1, 1], [5, 5]],
            "is_password": True,
        },
    ]
    tree = parse_ui_xml(views_to_uiautomator_xml(views, package="com.example"))
    assert tree.package == "com.example"
    child = tree.elements[1]
    assert (child.text, child.password, child.enabled, child.path) == ("a.b", True, True, "0/0")


@pytest.mark.parametrize(
    ("views", "message"),
    [
        (
            [{"temp_id": 0, "parent": 7, "children": [], "bounds": [[0, 0], [1, 1]]}],
            "view 0: parent 7 does not exist",
        ),
        (
            [{"temp_id": 0, "parent": -1, "children": [3], "bounds": [[0, 0], [1, 1]]}],
            "view 0: child 3 does not exist",
        ),
        (
            [{"temp_id": 0, "parent": -1, "children": [], "bounds": [[0, 0], [1]]}],
            "view 0: bad bounds [[0, 0], [1]]",
        ),
        (
            [
                {"temp_id": 0, "parent": 1, "children": [1], "bounds": [[0, 0], [1, 1]]},
                {"temp_id": 1, "parent": 0, "children": [0], "bounds": [[0, 0], [1, 1]]},
            ],
            "view 0: not reachable from a root view",
        ),
        (
            [
                {"temp_id": 0, "parent": -1, "children": [1], "bounds": [[0, 0], [1, 1]]},
                {"temp_id": 1, "parent": None, "children": [], "bounds": [[0, 0], [1, 1]]},
            ],
            "view 0: child 1 names None as its parent",
        ),
        (
            [{"temp_id": [0], "parent": -1, "children": [], "bounds": [[0, 0], [1, 1]]}],
            "view 0: bad temp_id [0]",
        ),
        (
            [{"temp_id": 0, "parent": -1, "children": "1,2", "bounds": [[0, 0], [1, 1]]}],
            "view 0: children must be a list of ids, got '1,2'",
        ),
        (None, "views must be a list, got NoneType"),
    ],
)
def test_the_converter_rejects_broken_view_lists(views, message):
    with pytest.raises(UIXmlError) as info:
        views_to_uiautomator_xml(views)
    assert str(info.value) == message


# --- bad input -------------------------------------------------------------------------------


def test_a_dump_cut_in_half_is_reported_as_truncated():
    data = zillow_bytes("favoritesScreen")
    assert error_of(data[: len(data) // 2]) == (
        "truncated UI XML: the document ends early (line 1, column 9135)"
    )


def test_every_cut_of_a_dump_raises_uixmlerror():
    data = zillow_bytes("favoritesScreen")
    for cut in range(1, len(data) - 1, 97):
        with pytest.raises(UIXmlError):
            parse_ui_xml(data[:cut])


def test_garbage_raises_uixmlerror():
    rng = random.Random(7)
    for _ in range(200):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        with pytest.raises(UIXmlError):
            parse_ui_xml(b"<" + blob)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty input"),
        ("  \n", "empty input"),
        (
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            r"not XML: input starts with b'\x89PNG\r\n\x1a\n'",
        ),
        (
            b"<html><body/></html>",
            "not uiautomator XML: root element is <html>, expected <hierarchy>",
        ),
        (
            dump(node("[0,0][10,10]", node("[0,0][5,5]") + node("[0,0][abc]"))),
            "node 2 (path 0/1): bad bounds '[0,0][abc]'",
        ),
        (dump(node("[0,0][10,10]", node(""))), "node 1 (path 0/0): bad bounds ''"),
        ("<hierarchy><node/></hierarchy>", "node 0 (path 0): missing bounds"),
        (
            "<hierarchy><node bounds='[0,0][1,1]'></hierarchy>",
            "malformed UI XML at line 1, column 50: "
            "Opening and ending tag mismatch: node line 1 and hierarchy",
        ),
        (
            "<hierarchy/>\n<hierarchy/>",
            "malformed UI XML at line 2, column 1: Extra content at the end of the document",
        ),
        ("<hierarchy rotation='up'/>", "<hierarchy>: bad rotation 'up'"),
        (12, "expected bytes or str, got int"),
    ],
)
def test_it_rejects_bad_input_with_a_clear_message(data, message):
    assert error_of(data) == message


def test_it_refuses_entities_and_doctypes():
    secret = (
        b'<!DOCTYPE hierarchy [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b'<hierarchy><node bounds="[0,0][1,1]" text="&x;"/></hierarchy>'
    )
    assert error_of(secret) == (
        "malformed UI XML at line 1, column 109: Attribute references external entity 'x'"
    )
    internal = b'<!DOCTYPE hierarchy [<!ENTITY x "boom">]><hierarchy/>'
    assert error_of(internal) == "not uiautomator XML: a DOCTYPE is not allowed"


@pytest.mark.parametrize("levels", [230, 300, 100_000])
def test_it_rejects_absurdly_deep_trees_without_recursing(levels):
    deep = (
        "<hierarchy>" + '<node bounds="[0,0][1,1]">' * levels + "</node>" * levels + "</hierarchy>"
    )
    assert error_of(deep) == "too deeply nested: more than 200 levels of nodes"


def test_it_parses_bounds():
    assert parse_bounds("[0,63][1080,2337]") == (0, 63, 1080, 2337)
    assert parse_bounds("[-20,5][30,40]") == (-20, 5, 30, 40)
    for bad in ("[0,0][abc]", "0,0,1,1", "[0,0][1,1]x", ""):
        with pytest.raises(UIXmlError) as info:
            parse_bounds(bad)
        assert str(info.value) == f"bad bounds {bad!r}"


# --- characters XML cannot carry -------------------------------------------------------------


def test_a_control_character_in_a_dump_reads_as_a_dot_like_uiautomator_writes_it():
    raw = dump(node("[0,0][10,10]", text="bell\x07 and\x1b[0m") + node("[0,0][5,5]", text="&#7;x"))
    tree = parse_ui_xml(raw.encode())
    assert [el.text for el in tree.elements] == ["bell. and.[0m", ".x"]
    assert parse_ui_xml(raw).elements == tree.elements  # str input too


def test_cleaning_leaves_a_clean_dump_byte_for_byte():
    from trajectories.uixml import clean_ui_xml

    real = zillow_bytes("favoritesScreen")
    assert clean_ui_xml(real) is not None and clean_ui_xml(real) == real
    kept = b'<hierarchy><node text="tab&#9;&#x41;&#128512;" bounds="[0,0][1,1]"/></hierarchy>'
    assert clean_ui_xml(kept) == kept
    assert clean_ui_xml(b'<a b="&#0;&#xFFFE;&#99999999;"/>') == b'<a b="..."/>'
    etree.fromstring(clean_ui_xml(b'<a b="\x00\x01\x08\x0b\x0c\x0e\x1f"/>'))  # strict parse


def test_attributes_are_written_in_double_quotes_as_uiautomator_does():
    from trajectories.uixml import quote_attribute

    assert quote_attribute('say "hi" & <go>') == '"say &quot;hi&quot; &amp; &lt;go&gt;"'
    assert quote_attribute("it's\x07\ud800") == '"it\'s.."'
    assert quote_attribute("two\nlines\t") == '"two&#10;lines&#9;"'
    for value in ('"', "'", "a\nb", "\x00"):
        element = etree.fromstring(f"<node text={quote_attribute(value)}/>")
        assert element.get("text") == ("." if value == "\x00" else value)
