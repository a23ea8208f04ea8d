"""Recording speed on the virtual device (540x1200 unless --size), through a real adb server.

    .venv/bin/python bench/bench_recording.py [--steps 20] [--size 540x1200]

1. A recorded step (action + capture + store, the settle wait excluded) against the bare adbutils
   calls it needs, one after another: input swipe + screencap -p + uiautomator dump.
2. From a step stored to the step visible in the console (Chromium): the panel rendered, sent
   and swapped in (the step's own durations come back in a Server-Timing header).
3. From the release of a click, a drag (~400 ms, as a person scrolls) or a flick (~80 ms) on
   the live view to the new screen there, as a person records: the action, the settle wait,
   the capture and the live view's frame all counted. "first new frame" is the first frame
   drawn after the release that differs from the one shown at the release; "result" the moment
   the live view shows the screen the step recorded as its result; "in the filmstrip" the
   moment the step's panel is swapped in.
4. The live view's frames per second on an idle and on a changing screen, polling as the
   console does (fast after a change, backing off while unchanged).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
TMP = tempfile.mkdtemp(prefix="bench-recording-")
os.environ.setdefault("DEBUG", "1")
os.environ["DATABASE_URL"] = f"sqlite:///{TMP}/db.sqlite3"
os.environ["MEDIA_ROOT"] = f"{TMP}/media"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

import django  # noqa: E402

django.setup()

import adbutils  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from devices.virtual import VirtualDevice  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stats(samples: list[float]) -> str:
    p90 = sorted(samples)[max(0, int(len(samples) * 0.9) - 1)]
    return f"median {statistics.median(samples):7.1f} ms   p90 {p90:7.1f} ms"


SWIPES = [("270", "900", "270", "600", "60"), ("270", "600", "270", "900", "60")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--size", default="540x1200")
    parser.add_argument("--rounds", type=int, default=8, help="rounds of gestures in section 3")
    parser.add_argument(
        "--gestures-only", action="store_true", help="section 3 alone (taps, drags, flicks)"
    )
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))

    adb_port = free_port()
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(adb_port)}
    adb = adbutils.adb_path()
    subprocess.run([adb, "-P", str(adb_port), "start-server"], env=env, capture_output=True)
    phone = VirtualDevice(
        port=free_port(), size=args.size, seed=1, chromium_path=settings.CHROMIUM_PATH
    ).start()
    try:
        subprocess.run([adb, "-P", str(adb_port), "connect", phone.serial], env=env, check=True,
                       capture_output=True)  # fmt: skip
        time.sleep(0.5)
        settings.ADB_SERVERS = [f"127.0.0.1:{adb_port}"]
        run(phone.serial, adb_port, args, width, height)
    finally:
        phone.stop()
        subprocess.run([adb, "-P", str(adb_port), "kill-server"], env=env, capture_output=True)


def run(serial: str, adb_port: int, args: argparse.Namespace, width: int, height: int) -> None:
    from django.contrib.auth import get_user_model

    from trajectories.records import TaskRecord
    from trajectories.services import do_create_project, get_or_create_task

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user("bench", password="bench-password")
    project = do_create_project("Bench", user)
    task = get_or_create_task(project, TaskRecord(uid="bench", goal="Scroll the shop"))
    from devices.models import Device

    Device.objects.get_or_create(serial=serial)[0].projects.add(project)  # as a site admin does
    device = adbutils.AdbClient(port=adb_port).device(serial)
    device.app_start("com.waypoint.freshcart")
    time.sleep(1)

    if not args.gestures_only:
        step_figures(serial, user, task, device, args.steps, width, height)
    print(f"Console gestures on the virtual device at {width}x{height}, {args.rounds} rounds")
    browser_figures(serial, user, task, args)


def step_figures(serial: str, user, task, device, steps: int, width: int, height: int) -> None:
    """1. bare adbutils calls vs a recorded step"""
    from devices.services import do_start_recording, do_take_device, record_step

    bare = []
    for i in range(steps):
        start = time.perf_counter()
        device.shell(["input", "swipe", *SWIPES[i % 2]])
        device.shell(["screencap", "-p"], encoding=None)
        device.dump_hierarchy()
        bare.append((time.perf_counter() - start) * 1000)
        time.sleep(0.3)
    lease = do_take_device(serial, settings.ADB_SERVERS[0], user, seconds=3600)
    trajectory = do_start_recording(lease, task, user)
    recorded, settle = [], []
    for i in range(steps):
        x, y, x2, y2, ms = (int(v) for v in SWIPES[i % 2])
        step = record_step(
            trajectory, {"type": "swipe", "x": x, "y": y, "x2": x2, "y2": y2, "duration_ms": ms},
            user,
        )  # fmt: skip
        t = step.timings
        recorded.append(t["action_ms"] + t["capture_ms"] + t["store_ms"])
        settle.append(t["settle_ms"])
    ratio = statistics.median(recorded) / statistics.median(bare)
    print(f"Recording on the virtual device at {width}x{height}, {steps} swipes")
    print(f"  bare adbutils: swipe + screencap + dump      {stats(bare)}")
    print(f"  recorded step without the settle wait        {stats(recorded)}")
    print(f"  ratio of medians {ratio:.2f} (budget 1.10){'  ok' if ratio <= 1.1 else '  OVER'}")
    print(f"  settle wait (not counted)                    {stats(settle)}")


def browser_figures(serial: str, user, task, args: argparse.Namespace) -> None:
    from django.test.testcases import LiveServerThread
    from playwright.sync_api import sync_playwright

    from devices.models import Lease

    Lease.objects.all().delete()
    from django.contrib.staticfiles.handlers import StaticFilesHandler

    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=free_port())
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    url = f"http://127.0.0.1:{server.port}"
    from core.chromium import CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=settings.CHROMIUM_PATH, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.goto(f"{url}/login/")
        page.fill("input[name=username]", "bench")
        page.fill("input[name=password]", "bench-password")
        page.click("button[type=submit]")
        page.goto(f"{url}/devices/")
        page.locator("tr", has_text=serial).locator("button", has_text="Take").click()
        page.select_option("#task", str(task.pk))
        page.click("text=Start recording")
        page.wait_for_function("document.querySelector('#screen').naturalWidth > 0")

        if not args.gestures_only:
            stored_to_visible(page)
        click_to_visible(page, serial, args.rounds)
        if not args.gestures_only:
            frame_rates(page, serial)
        browser.close()
    server.terminate()


def stored_to_visible(page) -> None:
    """2. stored → visible: time in the browser from request to swap, less the step itself."""
    visible = []
    for i in range(10):
        x, y, x2, y2, ms = SWIPES[i % 2]
        took = page.evaluate(
            """async ([x, y, x2, y2, ms]) => {
                const t0 = performance.now();
                const body = new URLSearchParams(
                    {type: "swipe", x, y, x2, y2, duration_ms: ms});
                const csrf = JSON.parse(
                    document.body.getAttribute("hx-headers"))["X-CSRFToken"];
                const r = await fetch(document.getElementById("console").dataset.actUrl, {
                    method: "POST", body,
                    headers: {"X-CSRFToken": csrf, "HX-Request": "true"}});
                const html = await r.text();
                document.getElementById("recording").innerHTML = html;
                await new Promise(requestAnimationFrame);
                const t1 = performance.now();
                const timing = r.headers.get("Server-Timing") || "";
                const step = [...timing.matchAll(/dur=([\\d.]+)/g)]
                    .reduce((a, m) => a + Number(m[1]), 0);
                return [t1 - t0, step];
            }""",
            [x, y, x2, y2, ms],
        )
        visible.append(took[0] - took[1])
    print(f"  step stored → visible in the browser         {stats(visible)}  (budget 300 ms)")


def frame_rates(page, serial: str) -> None:
    """4. live view frame rate: idle, then with the screen changing all the time."""

    def count(seconds: float) -> tuple[float, float]:
        page.evaluate("window.__f = 0; window.__p = 0")
        page.evaluate(
            """() => { const img = document.getElementById('screen');
                new MutationObserver(() => window.__f++).observe(img, {attributes: true});
                const orig = window.fetch; window.fetch = (...a) => {
                  if (String(a[0]).includes('/frame/')) window.__p++; return orig(...a); }; }"""
        )
        time.sleep(seconds)
        frames, polls = page.evaluate("[window.__f, window.__p]")
        return frames / seconds, polls / seconds

    time.sleep(3)
    idle = count(6)
    stop = threading.Event()
    device = adbutils.AdbClient(port=int(settings.ADB_SERVERS[0].split(":")[1])).device(serial)

    def keep_scrolling():
        i = 0
        while not stop.is_set():
            device.shell(["input", "swipe", *SWIPES[i % 2][:4], "40"])
            i += 1

    thread = threading.Thread(target=keep_scrolling)
    thread.start()
    changing = count(6)
    stop.set()
    thread.join()
    print(f"  live view, idle screen:     {idle[0]:4.1f} frames/s ({idle[1]:.1f} polls/s, 304s)")
    print(f"  live view, changing screen: {changing[0]:4.1f} frames/s ({changing[1]:.1f} polls/s)")


def _live_point(page, x: int, y: int) -> tuple[float, float]:
    """Where device pixel (x, y) is drawn in the live view (the picture is fitted, contain)."""
    box = page.locator("#screen").bounding_box()
    img = "document.getElementById('screen')"
    w, h = page.evaluate(f"[{img}.naturalWidth, {img}.naturalHeight]")
    scale = min(box["width"] / w, box["height"] / h)
    left = box["x"] + (box["width"] - w * scale) / 2
    top = box["y"] + (box["height"] - h * scale) / 2
    return left + (x + 0.5) * scale, top + (y + 0.5) * scale


def click_to_visible(page, serial: str, rounds: int = 8) -> None:
    """3. Taps, drags and flicks on the live view, timed in the page from the release
    (``pointerup``) to the first new frame drawn, to the frame showing the recorded result,
    and to the step's panel swapped in."""
    import adbutils

    from trajectories.models import Trajectory
    from trajectories.uixml import parse_ui_xml

    device = adbutils.AdbClient(port=int(settings.ADB_SERVERS[0].split(":")[1])).device(serial)
    page.evaluate(
        """() => {
            window.__marks = {down: 0, up: 0, upEtag: '', frames: [], swaps: []};
            const live = document.getElementById('live');
            live.addEventListener('pointerdown', () => {
                window.__marks = {down: performance.now(), up: 0, upEtag: '', frames: [],
                                  swaps: []}; }, true);
            live.addEventListener('pointerup', () => {
                window.__marks.up = performance.now();
                window.__marks.upEtag = live.dataset.etag; }, true);
            new MutationObserver(() => {
                // The frame counts when it is drawn, not when its URL is set.
                const etag = live.dataset.etag, img = document.getElementById('screen');
                img.decode().catch(() => {}).then(() => requestAnimationFrame(() =>
                    window.__marks.frames.push([performance.now(), etag])));
            }).observe(live, {attributes: true, attributeFilter: ['data-etag']});
            document.body.addEventListener('htmx:afterSwap', () => requestAnimationFrame(() =>
                window.__marks.swaps.push(performance.now())));
        }"""
    )

    def steps_shown() -> int:
        return int(page.evaluate("document.querySelector('#live').dataset.steps || '0'"))

    def one(gesture) -> tuple[float, float, float]:
        before = steps_shown()
        gesture()
        page.wait_for_function(
            f"Number(document.querySelector('#live').dataset.steps) > {before}", timeout=20_000
        )
        trajectory = Trajectory.objects.filter(device_serial=serial).latest("pk")
        etag = f'"{trajectory.final_screen.screenshot.sha256}"'
        page.wait_for_function(
            "(etag) => window.__marks.frames.some(([t, e]) => e === etag)", arg=etag,
            timeout=20_000,
        )  # fmt: skip
        marks = page.evaluate("window.__marks")
        up = marks["up"]
        first = min(t for t, e in marks["frames"] if t >= up and e != marks["upEtag"]) - up
        result = min(t for t, e in marks["frames"] if e == etag) - up
        swapped = marks["swaps"][0] - up
        held.append(up - marks["down"])
        time.sleep(0.4)  # let the live view back off, as between a person's actions
        return first, result, swapped

    def tap_home() -> None:
        page.mouse.click(*_live_point(page, 270, 1176))  # the navigation bar's Home

    def tap_shop() -> None:  # FreshCart's icon on the launcher: the shop comes back
        icon = next(
            el for el in parse_ui_xml(device.dump_hierarchy()).elements
            if el.resource_id.endswith(":id/icon") and el.content_desc == "FreshCart"
        )  # fmt: skip
        page.mouse.click(*_live_point(page, *icon.center))

    def drag(y1: int, y2: int, ms: int):
        """The pointer moves from y1 to y2 in ``ms`` and lifts at once (a move every ~40 ms:
        each is a round trip to Chromium, and more of them made the drag last longer)."""

        def go() -> None:
            moves = max(3, ms // 40)
            page.mouse.move(*_live_point(page, 270, y1))
            page.mouse.down()
            start = time.perf_counter()
            for i in range(1, moves + 1):
                wait = start + ms / 1000 * i / moves - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                page.mouse.move(*_live_point(page, 270, round(y1 + (y2 - y1) * i / moves)))
            page.mouse.up()

        return go

    held: list[float] = []  # pointerdown → pointerup: a drag's length is replayed on the device
    one(tap_shop)  # the shop's first launch (it loads), and back: not counted
    one(tap_home)
    figures: dict[str, list[tuple[float, float, float]]] = {"tap": [], "drag": [], "flick": []}
    lengths: dict[str, list[float]] = {"drag": [], "flick": []}
    for _ in range(rounds):
        for kind, gesture in (
            ("tap", tap_shop),
            ("drag", drag(900, 500, 400)),
            ("drag", drag(500, 900, 400)),
            ("flick", drag(900, 600, 80)),
            ("flick", drag(600, 900, 80)),
            ("tap", tap_home),
        ):
            figures[kind].append(one(gesture))
            if kind in lengths:
                lengths[kind].append(held[-1])
    aims = {"tap": 400, "drag": 800, "flick": 800}
    print("  from the release (pointerup) of a gesture on the live view:")
    for kind, rows in figures.items():
        first, result, swapped = (list(column) for column in zip(*rows, strict=True))
        aim = aims[kind]
        print(f"  {kind:5} → first new frame drawn              {stats(first)}  (aim {aim} ms)")
        print(f"  {kind:5} → recorded result visible           {stats(result)}")
        print(f"  {kind:5} → step in the filmstrip             {stats(swapped)}")
    for kind, values in lengths.items():
        print(f"  the {kind} itself (down → up)                {stats(values)}")


if __name__ == "__main__":
    main()
