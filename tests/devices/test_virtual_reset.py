"""`waypoint reset --seed N`: every app back to its first launch with the data of seed N.

Through the real adb server, as a recording (or any adb tool) resets the virtual device.
"""

from __future__ import annotations

import json

import pytest

from tests.devices.conftest import adb, tap_node

SESSION_SEED = 7  # the session's virtual device (conftest) starts at seed 7


@pytest.fixture
def resettable(device):
    """The device; back at the session's seed afterwards, for the tests that follow."""
    yield device
    device.shell(["waypoint", "reset", "--seed", str(SESSION_SEED)])


def memory_values(device) -> dict[str, str]:
    return {v["ref"]: v["value"] for v in json.loads(device.shell(["waypoint", "vars"]))}


def open_aerosound(device) -> list[dict]:
    """Open FreshCart's AeroSound X5 page and return the memory variables visible there."""
    device.app_start("com.waypoint.freshcart")
    tap_node(device, resource_id="com.waypoint.freshcart:id/product_aerosound_x5")
    return json.loads(device.shell(["waypoint", "visible-vars"]))


def cart_text(device) -> str:
    from lxml import etree

    root = etree.fromstring(device.dump_hierarchy().encode())
    cart_id = "com.waypoint.freshcart:id/cart_count"
    node = next(n for n in root.iter("node") if n.get("resource-id") == cart_id)
    return node.get("text")


def test_the_same_seed_gives_the_same_memory_variables(resettable):
    device = resettable
    first = json.loads(device.shell(["waypoint", "reset", "--seed", "3"]))
    assert first["seed"] == 3
    values, shown = memory_values(device), open_aerosound(device)

    device.shell(["waypoint", "reset", "--seed", "4"])
    assert memory_values(device) != values  # another seed, other prices and codes

    device.shell(["waypoint", "reset", "--seed", "3"])
    assert memory_values(device) == values
    again = open_aerosound(device)
    assert [(v["ref"], v["value"], v["text"]) for v in again] == [
        (v["ref"], v["value"], v["text"]) for v in shown
    ]
    assert again and again[0]["ref"] == "freshcart.price_aerosound"


def test_a_reset_empties_the_cart_and_closes_every_app(resettable):
    device = resettable
    open_aerosound(device)
    tap_node(device, resource_id="com.waypoint.freshcart:id/add_to_cart")
    assert cart_text(device) == "Cart 1"

    device.shell(["waypoint", "reset"])  # no seed: the current one, state dropped
    assert device.app_current().package == "com.android.launcher3"
    device.app_start("com.waypoint.freshcart")
    assert cart_text(device) == "Cart 0"
    assert json.loads(device.shell(["waypoint", "env"]))["seed"] == SESSION_SEED


def test_env_names_the_seed_and_the_apps(resettable, virtual_device):
    resettable.shell(["waypoint", "reset", "--seed", "12"])
    env = json.loads(resettable.shell(["waypoint", "env"]))
    assert env["seed"] == 12
    assert [a["package"] for a in env["apps"]] == [a.package for a in virtual_device.catalog.apps]
    assert {"slug": "freshcart", "package": "com.waypoint.freshcart"}.items() <= next(
        a for a in env["apps"] if a["slug"] == "freshcart"
    ).items()
    assert virtual_device.catalog.seed == 12  # the in-process API sees the reset too


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--seed", "abc"],
            "waypoint reset: --seed must be a whole number from 0 to 2147483647, got 'abc'\n",
        ),
        (
            ["--seed", "-1"],
            "waypoint reset: --seed must be a whole number from 0 to 2147483647, got '-1'\n",
        ),
        (["7"], "waypoint reset: unexpected arguments: 7\n"),
    ],
)
def test_a_bad_seed_is_refused_and_nothing_is_reset(adb_server, resettable, args, message):
    resettable.app_start("com.waypoint.notes")
    proc = adb(adb_server, resettable.serial, "shell", "waypoint", "reset", *args)
    assert proc.returncode == 2
    assert proc.stderr.decode() == message
    assert resettable.app_current().package == "com.waypoint.notes"
    assert json.loads(resettable.shell(["waypoint", "env"]))["seed"] == SESSION_SEED


def test_the_screen_version_answers_while_the_apps_reset(resettable, adb_server, virtual_device):
    """The live view polls the screen version all the time: a reset must not break an answer."""
    import threading

    answers: list[str] = []
    done = threading.Event()

    def poll() -> None:
        poller = adb_server.client.device(resettable.serial)
        while not done.is_set():
            answers.append(poller.shell(["waypoint", "screen-version"]))

    thread = threading.Thread(target=poll)
    thread.start()
    try:
        for seed in (1, 2, 3, 4):
            resettable.app_start("com.waypoint.freshcart")
            resettable.shell(["waypoint", "reset", "--seed", str(seed)])
    finally:
        done.set()
        thread.join()
    assert answers and all(a.strip().lstrip("-").isdigit() for a in answers), answers
