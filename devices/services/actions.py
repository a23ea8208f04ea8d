"""Canonical actions (``trajectories.validation``) executed on a device through adbutils.

Nothing a user typed reaches a device shell unquoted: every command is built as an argument
list that adbutils joins with ``shlex.quote``, and typed text travels base64-encoded where the
device takes it (the virtual device, phones with ADBKeyboard).
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Iterator
from typing import Any

import adbutils

from trajectories.models import ActionType
from trajectories.validation import InvalidData

from .adb import DeviceFacts, run_shell

DEFAULT_LONG_PRESS_MS = 800
DEFAULT_SWIPE_MS = 300
MAX_WAIT_MS = 60_000
KEYCODE_RE = re.compile(r"(KEYCODE_)?[A-Z0-9_]{1,40}|\d{1,3}")
PACKAGE_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")
# What `input text` carries: printable ASCII. It turns "%s" into a space, so a "%" followed
# by "s" goes in two calls; newlines and tabs are key presses.
_INPUT_TEXT_CHARS = re.compile(r"[\x20-\x7e]+")
_KEYS_FOR_CHARS = {"\n": "KEYCODE_ENTER", "\t": "KEYCODE_TAB"}


class CannotType(InvalidData):
    """The device has no way to receive some character of the text."""


def shell(device: adbutils.AdbDevice, args: list[str], timeout: float = 30) -> str:
    return run_shell(device, args, timeout=timeout)


def input_text_calls(text: str) -> Iterator[list[str]]:
    """`input text` / `input keyevent` argument lists that type ``text`` on a stock phone."""
    position = 0
    while position < len(text):
        char = text[position]
        if char in _KEYS_FOR_CHARS:
            yield ["input", "keyevent", _KEYS_FOR_CHARS[char]]
            position += 1
            continue
        match = _INPUT_TEXT_CHARS.match(text, position)
        if match is None:
            raise CannotType(
                f"action.text: this device cannot type {char!r} (U+{ord(char):04X}) with "
                "`input text`; install ADBKeyboard on it to type any Unicode text"
            )
        chunk = match.group()
        # Split "%s" so the device never reads it as an escaped space.
        pieces = re.split(r"(?<=%)(?=s)", chunk)
        for piece in pieces:
            yield ["input", "text", piece.replace(" ", "%s")]
        position = match.end()


def type_text(device: adbutils.AdbDevice, text: str, facts: DeviceFacts) -> str:
    """Type into the focused field; returns the method used (recorded with the step)."""
    if facts.virtual or facts.adb_keyboard:
        encoded = base64.b64encode(text.encode()).decode()
        shell(device, ["am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", encoded])
        return "adb_input_b64"
    calls = list(input_text_calls(text))  # refuse before typing half of it
    for args in calls:
        shell(device, args)
    return "input_text"


def keycode(value: str) -> str:
    if not KEYCODE_RE.fullmatch(value):
        raise InvalidData(f"action.keycode: not a key code: {value!r}")
    return value if value.isdigit() or value.startswith("KEYCODE_") else f"KEYCODE_{value}"


def execute_action(
    device: adbutils.AdbDevice, action_type: str, fields: dict[str, Any], facts: DeviceFacts
) -> dict[str, Any]:
    """Perform a validated action on the device; returns notes on how it was done."""
    notes: dict[str, Any] = {}
    if action_type == ActionType.CLICK:
        shell(device, ["input", "tap", str(fields["x"]), str(fields["y"])])
    elif action_type == ActionType.LONG_PRESS:
        ms = fields.get("duration_ms") or DEFAULT_LONG_PRESS_MS
        x, y = str(fields["x"]), str(fields["y"])
        shell(device, ["input", "swipe", x, y, x, y, str(ms)])
    elif action_type == ActionType.SWIPE:
        ms = fields.get("duration_ms") or DEFAULT_SWIPE_MS
        points = [str(fields[k]) for k in ("x", "y", "x2", "y2")]
        shell(device, ["input", "swipe", *points, str(ms)])
    elif action_type == ActionType.TYPE:
        notes["input_method"] = type_text(device, fields["text"], facts)
    elif action_type == ActionType.KEY:
        shell(device, ["input", "keyevent", keycode(fields["keycode"])])
    elif action_type == ActionType.BACK:
        shell(device, ["input", "keyevent", "KEYCODE_BACK"])
    elif action_type == ActionType.HOME:
        shell(device, ["input", "keyevent", "KEYCODE_HOME"])
    elif action_type == ActionType.ENTER:
        shell(device, ["input", "keyevent", "KEYCODE_ENTER"])
    elif action_type == ActionType.OPEN_APP:
        package = fields["package"]
        if not PACKAGE_RE.fullmatch(package):
            raise InvalidData(f"action.package: not a package name: {package!r}")
        out = shell(
            device, ["monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1"]
        )
        if "No activities found" in out or "monkey aborted" in out:
            raise InvalidData(f"action.package: {package} has no launcher activity on the device")
    elif action_type == ActionType.WAIT:
        time.sleep(min(fields["duration_ms"], MAX_WAIT_MS) / 1000)
    # answer and terminate are said to the user, not done on the device.
    return notes
