"""Record the reference recordings of the virtual device (see README.md here).

    DEBUG=1 python -m tests.annotate.reference_recordings.record [NAME ...]

Starts a virtual device and a private adb server (as the device tests do), then records each
scenario through Waypoint's own recording services (``do_start_recording`` with a reset to
the scenario's seed, ``record_step``, ``do_finish_recording``), driving the device as a person
does: taps on what the current screen shows (a point inside the element, jittered by a seeded
random generator), swipes, typing, Enter, Back, Home. Values are read off the screen's XML,
never from the app's variables. Each recording is written as a native record without
screenshots (``<name>.json``, UI dumps under ``xml/``); the hand-written labels already in a
file (``subgoals``, ``memory_targets``, ``labelling``) are kept when it is recorded again.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LABELS = ("labelling", "subgoals", "memory_targets")

NOTES, ANSWERS, CHATTER = "com.waypoint.notes", "com.waypoint.answers", "com.waypoint.chatter"
FRESHCART, MEGAMART, SHOPMATE = (
    "com.waypoint.freshcart",
    "com.waypoint.megamart",
    "com.waypoint.shopmate",
)


class Person:
    """Someone holding the phone: looks at the current screen, then acts on what it shows."""

    def __init__(self, trajectory, user, rng: random.Random):
        self.trajectory = trajectory
        self.user = user
        self.rng = rng

    def tree(self):
        from devices.services.recording import ui_tree_of
        from trajectories.models import Trajectory

        screen = Trajectory.objects.select_related("final_screen").get(pk=self.trajectory.pk)
        return ui_tree_of(screen.final_screen)

    def act(self, action: dict[str, Any]) -> None:
        from devices.services import record_step

        record_step(self.trajectory, action, self.user)

    def find(self, **match: str):
        found = [el for el in self.tree().find(**match) if el.area > 0]
        if not found:
            raise LookupError(f"nothing on the screen matches {match}")
        return found[0]

    def tap(self, **match: str) -> None:
        el = self.find(**match)
        self.tap_at(el)

    def tap_below(self, **match: str) -> None:
        """Scroll down until the element shows, then tap it (as in a long list)."""
        for _ in range(4):
            try:
                el = self.find(**match)
            except LookupError:
                self.scroll_down()
            else:
                return self.tap_at(el)
        raise LookupError(f"no {match} however far down")

    def tap_at(self, el) -> None:
        x1, y1, x2, y2 = el.bounds
        cx, cy = el.center
        dx, dy = (x2 - x1) // 6, (y2 - y1) // 6
        x, y = cx + self.rng.randint(-dx, dx), cy + self.rng.randint(-dy, dy)
        self.act({"type": "click", "x": x, "y": y})

    def tap_app(self, label: str) -> None:
        """Tap an app's icon on the home screen or in the app drawer."""
        self.tap(resource_id="com.android.launcher3:id/icon", content_desc=label)

    def swipe(self, x: int, y: int, x2: int, y2: int, ms: int = 350) -> None:
        j = self.rng.randint(-12, 12)
        self.act({"type": "swipe", "x": x + j, "y": y, "x2": x2 + j, "y2": y2, "duration_ms": ms})

    def open_drawer(self) -> None:
        self.swipe(270, 1000, 270, 350)

    def scroll_down(self, by: int = 450) -> None:
        """Move the content up (show what is further down), with the finger mid-screen."""
        self.swipe(270, 850, 270, 850 - by)

    def scroll_up(self, by: int = 450) -> None:
        self.swipe(270, 400, 270, 400 + by)

    def type(self, text: str) -> None:
        self.act({"type": "type", "text": text})

    def enter(self) -> None:
        self.act({"type": "key", "keycode": "KEYCODE_ENTER"})

    def back(self) -> None:
        self.act({"type": "back"})

    def home(self) -> None:
        self.act({"type": "home"})

    def open_app(self, package: str) -> None:
        """The recording console's "open app" button (``monkey -p``)."""
        self.act({"type": "open_app", "package": package})

    def wait(self, ms: int = 1500) -> None:
        self.act({"type": "wait", "duration_ms": ms})

    def read(self, pattern: str) -> str:
        """The first match of ``pattern`` in the texts the screen shows (what a person reads)."""
        for el in self.tree().elements:
            for text in (el.text, el.content_desc):
                m = re.search(pattern, text)
                if m:
                    return m.group(1) if m.groups() else m.group(0)
        raise LookupError(f"the screen shows nothing like {pattern!r}")


def cheaper(a: str, b: str) -> str:
    return min(a, b, key=lambda price: float(price.lstrip("$")))


# ------------------------------------------------------------------------------ scenarios
# Each returns the answer said at the end (or None); the task is the device's task of that
# name, or a free goal.


def notes_wifi_password(p: Person) -> str:
    p.tap_app("Notes")
    p.tap(resource_id="note_1")
    password = p.read(r"Password: (\S+)")
    p.home()
    p.open_drawer()
    p.tap_app("Answers")
    p.tap_below(resource_id="task_wifi_password")
    p.tap(resource_id="answer")
    p.type(password)
    p.tap(resource_id="submit")
    return password


def chatter_noah_meeting_time(p: Person) -> str:
    p.open_drawer()
    p.swipe(270, 900, 270, 500)  # looking through the drawer (all apps fit: nothing moves)
    p.tap_app("Chatter")
    p.tap(resource_id="chat_noah")
    time = p.read(r"Friday at (\d{1,2}:\d\d)")
    p.back()
    p.home()
    p.tap_app("Answers")
    p.tap_below(resource_id="task_noah_meeting_time")
    p.tap(resource_id="answer")
    p.type(time)
    p.enter()
    return time


def chatter_ava_door_code(p: Person) -> str:
    p.open_app(CHATTER)
    p.tap(resource_id="chat_ava")
    p.scroll_up(600)  # the thread opens at its end; the code is in the first message
    code = p.read(r"door code is (\d{4})")  # the message's time follows it
    p.open_app(ANSWERS)
    p.tap_below(resource_id="task_ava_door_code")
    p.tap(resource_id="answer")
    p.type(code)
    p.tap(resource_id="submit")
    return code


def freshcart_order_number(p: Person) -> str:
    p.tap_app("FreshCart")
    p.tap(resource_id="tab_orders")
    number = p.read(r"^(FC-\d{6})$")
    p.home()
    p.open_drawer()
    p.tap_app("Answers")
    p.tap_below(resource_id="task_freshcart_order_number")
    p.tap(resource_id="answer")
    p.type(number)
    p.tap(resource_id="submit")
    return number


def order_number_to_mia(p: Person) -> str:
    p.tap_app("FreshCart")
    p.tap(resource_id="tab_orders")
    number = p.read(r"^(FC-\d{6})$")
    p.home()
    p.tap_app("Chatter")
    p.tap(resource_id="chat_mia")
    p.tap(resource_id="message_input")
    p.type(f"My last order is {number}")
    p.tap(resource_id="send")
    p.wait(2000)  # Mia answers
    p.home()
    p.open_drawer()
    p.tap_app("Answers")
    p.tap_below(resource_id="task_order_number_to_mia")
    p.tap(resource_id="answer")
    p.type(number)
    p.tap(resource_id="submit")
    return number


def cheaper_aerosound_price(p: Person) -> str:
    p.tap_app("FreshCart")
    p.tap(text="Audio")
    p.tap(resource_id="product_aerosound_x5")
    fresh = p.read(r"^(\$\d+\.\d\d)$")
    p.back()
    p.home()
    p.tap_app("MegaMart")
    p.tap(resource_id="card_aerosound_x5_case")  # the case, by mistake
    p.back()
    p.tap(resource_id="card_aerosound_x5")
    mega = p.read(r"^(\$\d+\.\d\d)$")
    p.home()
    p.tap_app("Answers")
    p.tap_below(resource_id="task_cheaper_aerosound_price")
    p.tap(resource_id="answer")
    p.type(cheaper(fresh, mega))
    p.tap(resource_id="submit")
    return cheaper(fresh, mega)


def cheaper_kettle_shop(p: Person) -> str:
    p.open_drawer()
    p.tap_app("FreshCart")
    p.tap(resource_id="search")
    p.type("kettle")
    p.tap(resource_id="product_kettle")
    fresh = p.read(r"^(\$\d+\.\d\d)$")
    p.home()
    p.tap_app("MegaMart")
    p.scroll_down(550)
    p.tap(resource_id="card_kettle")
    mega = p.read(r"^(\$\d+\.\d\d)$")
    shop = "FreshCart" if cheaper(fresh, mega) == fresh else "MegaMart"
    p.home()
    p.open_drawer()
    p.tap_app("Answers")
    p.tap_below(resource_id="task_cheaper_kettle_shop")
    p.tap(resource_id="answer")
    p.type(shop)
    p.tap(resource_id="submit")
    return shop


def megamart_coupon(p: Person) -> str:
    p.tap_app("MegaMart")
    banner = p.find(resource_id="promo_banner")
    y = (banner.bounds[1] + banner.bounds[3]) // 2
    p.swipe(450, y, 90, y)  # the second slide of the banner
    code = p.read(r"code (MEGA\w+)")
    p.open_app(ANSWERS)
    p.tap_below(resource_id="task_megamart_coupon")
    p.tap(resource_id="answer")
    p.type(code)
    p.tap(resource_id="submit")
    return code


def shopmate_cheapest_keyboard(p: Person) -> str:
    p.open_drawer()
    p.swipe(270, 900, 270, 450)  # looking through the drawer
    p.tap_app("ShopMate")
    p.tap(resource_id="search_box")
    p.type("keyboard")
    p.enter()
    p.tap(resource_id="product_lumen_keyboard")
    lumen = p.read(r"^(\$\d+\.\d\d)$")
    p.back()
    p.scroll_down(400)
    p.tap(resource_id="product_harbor_keyboard")
    harbor = p.read(r"^(\$\d+\.\d\d)$")
    p.home()
    p.tap_app("Notes")
    p.tap(resource_id="new_note")
    p.tap(resource_id="note_title")
    p.type("Keyboards")
    p.tap(resource_id="note_body")
    p.type(f"Lumen {lumen}, Harbor {harbor}")
    p.tap(resource_id="save_note")
    name, price = min((("Lumen", lumen), ("Harbor", harbor)), key=lambda np: float(np[1][1:]))
    return f"The {name} Keyboard is cheapest at {price}."


def kettle_price_note(p: Person) -> None:
    p.tap_app("FreshCart")
    p.tap(text="Kitchen")
    p.tap(resource_id="product_kettle")
    price = p.read(r"^(\$\d+\.\d\d)$")
    p.back()
    p.home()
    p.open_drawer()
    p.tap_app("Notes")
    p.tap(resource_id="new_note")
    p.tap(resource_id="note_title")
    p.type("Kettle")
    p.tap(resource_id="note_body")
    p.type(f"Brew Pro kettle {price} at FreshCart")
    p.back()  # the first Back hides the keyboard
    p.back()  # the second saves the note and leaves it, as on a phone
    return None


def cheaper_aerosound_note_to_mia(p: Person) -> str:
    p.tap_app("FreshCart")
    p.tap(resource_id="search")
    p.type("AeroSound")
    p.tap(resource_id="product_aerosound_x5")
    fresh = p.read(r"^(\$\d+\.\d\d)$")
    p.home()
    p.tap_app("MegaMart")
    p.tap(resource_id="card_aerosound_x5")
    mega = p.read(r"^(\$\d+\.\d\d)$")
    low = cheaper(fresh, mega)
    p.home()
    p.tap_app("Notes")
    p.tap(resource_id="new_note")
    p.tap(resource_id="note_title")
    p.type("Headphones")
    p.tap(resource_id="note_body")
    p.type(f"AeroSound X5 {low}")
    p.tap(resource_id="save_note")
    p.home()
    p.open_drawer()
    p.tap_app("Chatter")
    p.tap(resource_id="chat_mia")
    p.tap(resource_id="message_input")
    p.type(f"The AeroSound X5 is {low}")
    p.enter()
    p.home()
    p.tap_app("Answers")
    p.tap_below(resource_id="task_cheaper_aerosound_note_to_mia")
    p.tap(resource_id="answer")
    p.type(low)
    p.tap(resource_id="submit")
    return low


def notes_parking_spot(p: Person) -> str:
    p.open_drawer()
    p.tap_app("Notes")
    p.tap(resource_id="search_notes")
    p.type("airport")
    p.back()  # the keyboard goes away
    p.tap(resource_id="note_3")
    spot = p.read(r"Parked at (P2-\w+)")
    p.back()
    return f"The car is parked at {spot}."


# name -> (scenario, seed, task: a virtual task id or a free goal)
SCENARIOS: dict[str, tuple[Callable[[Person], str | None], int, str]] = {
    "notes-wifi-password": (notes_wifi_password, 3, "wifi-password"),
    "chatter-noah-meeting-time": (chatter_noah_meeting_time, 4, "noah-meeting-time"),
    "chatter-ava-door-code": (chatter_ava_door_code, 5, "ava-door-code"),
    "freshcart-order-number": (freshcart_order_number, 6, "freshcart-order-number"),
    "order-number-to-mia": (order_number_to_mia, 8, "order-number-to-mia"),
    "cheaper-aerosound-price": (cheaper_aerosound_price, 9, "cheaper-aerosound-price"),
    "cheaper-kettle-shop": (cheaper_kettle_shop, 10, "cheaper-kettle-shop"),
    "megamart-coupon": (megamart_coupon, 12, "megamart-coupon"),
    "shopmate-cheapest-keyboard": (
        shopmate_cheapest_keyboard,
        7,
        "In ShopMate, compare the prices of the Lumen Keyboard and the Harbor Keyboard, write "
        "them down in Notes and tell me which is cheapest.",
    ),
    "kettle-price-note": (
        kettle_price_note,
        13,
        "Look up the price of the Brew Pro Electric Kettle 1.7L in FreshCart and write it in a "
        "new note titled 'Kettle'.",
    ),
    "cheaper-aerosound-note-to-mia": (
        cheaper_aerosound_note_to_mia,
        14,
        "cheaper-aerosound-note-to-mia",
    ),
    "notes-parking-spot": (
        notes_parking_spot,
        15,
        "Where did I park at the airport? It is in my notes.",
    ),
}


# ------------------------------------------------------------------------------ writing


def xml_file(xml: bytes) -> str:
    """Where the dump is kept: gzipped (a tenth of the size), named by the dump's sha256."""
    name = f"xml/{hashlib.sha256(xml).hexdigest()}.xml.gz"
    path = HERE / name
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(gzip.compress(xml, mtime=0))
    return name


def reference_record(trajectory) -> dict[str, Any]:
    """The native record of the trajectory, without screenshots, times or machine labels."""
    from formats.waypoint import iter_records
    from trajectories.blobs import read_blob
    from trajectories.models import Screen, Trajectory

    [record] = iter_records(Trajectory.objects.filter(pk=trajectory.pk))
    screens = Screen.objects.filter(trajectory=trajectory).select_related("ui_xml").order_by("id")
    for screen, stored in zip(record["screens"], screens, strict=True):
        screen["screenshot"] = None
        screen["ui_xml"] = xml_file(read_blob(stored.ui_xml)) if stored.ui_xml else None
        screen["captured_at"] = None
        screen["features"] = {}
    for step in record["steps"]:
        step["action_sent_at"] = step["settled_at"] = None
        step["memory"] = ""  # written by the environment's labels, not by the recorder
    record["recorded_at"] = record["recorded_by"] = None
    record["device"]["serial"] = "virtual"
    record["metadata"].pop("recording", None)
    # The environment's own memory labels are not the reference: a person labels these files.
    record["environment_memory_targets"] = record.pop("memory_targets")
    record["anchors"], record["anchor_links"] = [], []
    del record["subgoals"]
    return record


def dump(record: dict[str, Any]) -> str:
    """JSON with one line per screen, step and label, so a person can read and label it."""
    lines = ["{"]
    items = list(record.items())
    for n, (key, value) in enumerate(items):
        comma = "," if n + 1 < len(items) else ""
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            rows = [json.dumps(v, ensure_ascii=False) for v in value]
            body = ",\n".join(f"  {row}" for row in rows)
            lines.append(f" {json.dumps(key)}: [\n{body}\n ]{comma}")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    return "\n".join(lines) + "\n}\n"


def write(name: str, record: dict[str, Any]) -> None:
    path = HERE / f"{name}.json"
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if [s["action"] for s in old["steps"]] != [s["action"] for s in record["steps"]]:
            print(f"{name}: the actions changed; check its labels", file=sys.stderr)
        for key in LABELS:
            if key in old:
                record[key] = old[key]
    record.setdefault("labelling", {"by": "", "notes": []})
    record.setdefault("subgoals", [])
    record.setdefault("memory_targets", [])
    ordered = {k: v for k, v in record.items() if k not in LABELS}
    ordered.update({k: record[k] for k in LABELS})
    path.write_text(dump(ordered), encoding="utf-8")


def prune_xml() -> None:
    """Remove the dumps no recording names any more (from an earlier run of a scenario)."""
    named = {
        screen["ui_xml"]
        for path in HERE.glob("*.json")
        for screen in json.loads(path.read_text(encoding="utf-8"))["screens"]
    }
    for path in (HERE / "xml").glob("*.xml.gz"):
        if f"xml/{path.name}" not in named:
            path.unlink()


# ------------------------------------------------------------------------------ main


def record_all(names: list[str]) -> None:
    import adbutils
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test.utils import override_settings

    from devices.services import (
        connect,
        do_finish_recording,
        do_import_virtual_tasks,
        do_release_device,
        do_start_recording,
        do_take_device,
    )
    from devices.virtual import VirtualDevice
    from tests.devices.conftest import AdbServer, free_port
    from trajectories.records import TaskRecord
    from trajectories.services import do_create_project, get_or_create_task

    call_command("migrate", verbosity=0)
    device = VirtualDevice(
        port=free_port(), size="540x1200", seed=7, chromium_path=settings.CHROMIUM_PATH
    ).start()
    server = AdbServer(adbutils.adb_path(), free_port()).start()
    try:
        server.connect(device.serial)
        adb = f"127.0.0.1:{server.port}"
        with override_settings(ADB_SERVERS=[adb]):
            user = get_user_model().objects.create_user("recorder")
            project = do_create_project("Reference recordings", user)
            virtual = {
                t.uid.split(":")[1]: t
                for t in do_import_virtual_tasks(project, connect(device.serial))
            }
            for name in names:
                scenario, seed, task_name = SCENARIOS[name]
                task = virtual.get(task_name) or get_or_create_task(
                    project, TaskRecord(uid=name, goal=task_name)
                )
                lease = do_take_device(device.serial, adb, user)
                trajectory = do_start_recording(lease, task, user, reset_seed=seed)
                person = Person(trajectory, user, random.Random(seed))
                answer = scenario(person)
                do_finish_recording(trajectory, user, answer=answer)
                do_release_device(device.serial, user)
                trajectory.refresh_from_db()
                record = reference_record(trajectory)
                record["id"] = name
                write(name, record)
                print(f"{name}: {len(record['steps'])} steps, outcome {trajectory.outcome}")
            prune_xml()
    finally:
        server.kill()
        device.stop()


def main(argv: list[str]) -> None:
    names = argv or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise SystemExit(f"unknown scenario(s): {', '.join(unknown)}")
    work = Path(tempfile.mkdtemp(prefix="waypoint-reference-"))
    os.environ["DATABASE_URL"] = f"sqlite:///{work / 'db.sqlite3'}"
    os.environ["MEDIA_ROOT"] = str(work / "blobs")
    os.environ["WAYPOINT_VAR_DIR"] = str(work)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    try:
        record_all(names)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
