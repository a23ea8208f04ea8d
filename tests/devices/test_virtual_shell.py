"""The virtual device's shell: parsing, and the commands phones answer, through the adb server."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from devices.virtual.commands import COMMANDS
from devices.virtual.fs import MemoryFS
from devices.virtual.shell import Shell, parse
from tests.devices.conftest import adb


def run(line: str) -> tuple[str, str, int]:
    shell = Shell(MemoryFS(), COMMANDS, {"HOME": "/"})
    result = asyncio.run(shell.run(line))
    return result.stdout.decode(), result.stderr.decode(), result.code


def test_it_parses_quotes_and_operators():
    program = parse("""echo 'a b' "c $HOME" d\\ e; false && echo no || echo yes""")
    assert [c for c, _ in program] == [";", ";", "&&", "||"]
    assert run("""echo 'a b' "c $HOME" d\\ e""")[0] == "a b c / d e\n"
    assert run("false && echo no || echo yes")[0] == "yes\n"


def test_it_expands_the_last_exit_code():
    assert run("false; echo $?; true; echo $?")[0] == "1\n0\n"
    assert run("nope; echo $?")[0] == "127\n"


def test_it_answers_unknown_commands_like_android():
    out, err, code = run("foo --bar")
    assert (out, err, code) == ("", "/system/bin/sh: foo: inaccessible or not found\n", 127)


def test_it_redirects_to_files_and_dev_null():
    out, _, _ = run("echo hi > /sdcard/a.txt; echo there >> /sdcard/a.txt; cat /sdcard/a.txt")
    assert out == "hi\nthere\n"
    assert run("foo 2>/dev/null; echo done") == ("done\n", "", 0)
    assert run("foo 2>&1")[0] == "/system/bin/sh: foo: inaccessible or not found\n"


def test_it_reports_syntax_errors():
    _, err, code = run("echo 'open")
    assert code == 2 and "unterminated" in err


def test_shell_through_adb(adb_server, device):
    assert device.shell("echo hello; getprop ro.product.model") == "hello\nWaypoint Virtual"
    result = device.shell2("nope")
    assert result.returncode == 127
    assert "nope: inaccessible or not found" in result.output


def test_shell_v2_exit_code_and_stderr(adb_server, device):
    proc = adb(adb_server, device.serial, "shell", "echo out; echo err >&2; exit 3")
    assert proc.returncode == 3
    assert proc.stdout == b"out\n"
    assert proc.stderr == b"err\n"
    result = device.shell2("ls /nowhere", v2=True)
    assert result.returncode == 1 and "No such file or directory" in result.stderr


def test_window_size_rotation_and_density(device):
    assert tuple(device.window_size()) == (540, 1200)
    assert device.rotation() == 0
    assert device.shell("wm density") == "Physical density: 240"


def test_packages_and_props(device):
    packages = device.list_packages()
    for package in (
        "com.waypoint.freshcart",
        "com.waypoint.megamart",
        "com.waypoint.notes",
        "com.waypoint.chatter",
        "com.waypoint.answers",
        "com.android.launcher3",
    ):
        assert package in packages
    assert device.getprop("ro.build.version.sdk") == "34"
    assert device.prop.model == "Waypoint Virtual"


def test_files_in_the_memory_filesystem(adb_server, device):
    device.shell("mkdir -p /sdcard/wp/x && echo 'a;b' > /sdcard/wp/x/f.txt")
    assert device.shell("cat /storage/emulated/0/wp/x/f.txt") == "a;b"
    assert "f.txt" in device.shell("ls /sdcard/wp/x")
    device.shell("rm -r /sdcard/wp")
    assert device.shell("ls /sdcard/wp; echo $?").endswith("1")


def test_app_start_and_current_through_monkey_and_am(device):
    device.app_start("com.waypoint.notes")
    assert device.app_current().package == "com.waypoint.notes"
    assert device.app_current().activity == ".NotesListActivity"
    device.app_start("com.waypoint.megamart", ".ui.StoreActivity")
    assert device.app_current().package == "com.waypoint.megamart"
    out = device.shell("am start -n com.nope/.Main")
    assert "Error type 3" in out
    device.app_stop("com.waypoint.megamart")
    assert device.app_current().package == "com.waypoint.notes"


def test_dumpsys_formats(device):
    assert re.search(r"mCurrentFocus=Window\{\w+ u0 com.android.launcher3/.Launcher\}",
                     device.shell("dumpsys window windows"))  # fmt: skip
    assert "ACTIVITY com.android.launcher3/.Launcher" in device.shell("dumpsys activity top")
    assert device.is_screen_on()


def test_waypoint_tasks_and_variables(device, virtual_device):
    tasks = json.loads(device.shell("waypoint tasks"))
    by_id = {t["id"]: t for t in tasks}
    task = by_id["cheaper-aerosound-price"]
    prices = [virtual_device.catalog.variable(r).value for r in task["variables"]]
    assert task["gold"] == min(prices, key=lambda p: float(p[1:]))
    assert task["rule"] == "number"
    assert device.shell(["waypoint", "grade", "cheaper-aerosound-price", task["gold"]]) == "success"
    assert device.shell("waypoint grade cheaper-aerosound-price 1.00") == "failure"


@pytest.mark.parametrize("command", ["input", "input tap 1", "input keyevent NOPE"])
def test_input_errors(device, command):
    assert device.shell2(command).returncode != 0


def test_interactive_adb_shell_reads_commands_from_stdin(adb_server, device):
    proc = adb(adb_server, device.serial, "shell", input=b"echo one\ncd /sdcard; pwd\nexit 5\n")
    assert b"one\n" in proc.stdout
    assert b"/storage/emulated/0\n" in proc.stdout
    assert proc.returncode == 5
