"""The virtual screen: a headless Chromium page holding the system UI and one iframe per app.

All methods are coroutines on the device's event loop. Captures are cached per screen state: the
page bumps a version on every DOM mutation, scroll, focus change and input, and reports -1 while
an animation runs; an unchanged version means the cached PNG / XML are still the screen.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import shutil
import time
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from core.chromium import CHROMIUM_ARGS
from devices.virtual import hierarchy
from devices.virtual.apps import Catalog
from devices.virtual.keys import APP_SWITCH, BACK, HOME, NO_OP, PAGE_KEYS

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
ORIGIN = "http://device.waypoint.test"
# Without scroll resampling a touch scroll moves the page by the distance the finger moved: with
# it, Chromium scrolls ahead of a fast finger (predicting where it will be) and stays there.
SCREEN_ARGS = [
    *CHROMIUM_ARGS,
    "--headless",
    "--disable-smooth-scrolling",
    "--hide-scrollbars",
    "--disable-features=ResamplingScrollEvents",
]
LAUNCHER = ("com.android.launcher3", ".Launcher")
# A finger that lifts 80 ms or more after its last move has stopped: no fling follows
# (kAssumePointerUpStoppedTime of Chromium's ui/events/velocity_tracker).
SWIPE_REST_S = 0.1
SWIPE_MOVE_S = 0.016  # a touch move per frame, as a finger on a 60 Hz screen reports them
# Playwright drives the screen's Chromium; it is the ``virtual`` extra.
MISSING_EXTRA = "The virtual device needs the virtual extra: pip install 'waypoint[virtual]'"


def has_playwright() -> bool:
    return find_spec("playwright") is not None


@dataclass
class Capture:
    token: int
    png: bytes | None = None
    walk: dict | None = None


class Screen:
    def __init__(
        self, catalog: Catalog, width: int, height: int, density: int, chromium_path: str = ""
    ):
        self.catalog = catalog
        self.width = width
        self.height = height
        self.density = density
        self.scale = density / 160
        self.css_width = round(width / self.scale)
        self.css_height = round(height / self.scale)
        # "" means: the system's Chromium when there is one, else Playwright's own.
        self.chromium_path = (
            chromium_path or shutil.which("chromium") or shutil.which("chromium-browser") or ""
        )
        self.idle_timeout = 2.0
        self.lock = asyncio.Lock()  # one command to the page at a time (captures, input)
        self.input_lock = asyncio.Lock()  # one gesture at a time, all of it
        self._capture = Capture(token=0)
        self._reloading = False  # reload(): the page is being replaced
        self._pw = self._browser = self._page = self._cdp = None
        self._walker = (HERE / "hierarchy.js").read_text()
        self._page_data = (HERE / "page_data.js").read_text()
        self._given = None  # the init script giving the pages their data (_give_data)
        # Headless Chromium captures at 1x unless the clip asks for the device scale.
        self._clip = {
            "x": 0,
            "y": 0,
            "width": width / self.scale,
            "height": height / self.scale,
            "scale": self.scale,
        }

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        if not has_playwright():
            raise RuntimeError(MISSING_EXTRA)
        from playwright.async_api import async_playwright

        self._pw = await async_playwright().start()
        launch = {"args": SCREEN_ARGS, "headless": True}
        if self.chromium_path:
            launch["executable_path"] = self.chromium_path
        self._browser = await self._pw.chromium.launch(**launch)
        context = await self._browser.new_context(
            viewport={"width": self.css_width, "height": self.css_height},
            device_scale_factor=self.scale,
            is_mobile=True,
            has_touch=True,
            locale="en-US",
            timezone_id="UTC",
            user_agent=(
                "Mozilla/5.0 (Linux; Android 14; Waypoint Virtual) AppleWebKit/537.36 "
                "(KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36"
            ),
        )
        await context.route("**/*", self._serve)
        self._page = await context.new_page()
        self._cdp = await context.new_cdp_session(self._page)
        await self._give_data()
        await self._page.goto(f"{ORIGIN}/system.html")

    async def reload(self, catalog: Catalog) -> None:
        """Serve ``catalog``'s apps from now on, on a freshly booted screen: every app closed
        (its state gone: carts, notes, open chats), the launcher in front. The screen version
        goes on from where it was, so no client mistakes the new screen for an old capture."""
        async with self.lock:
            version = await self._eval("wpSystem.version")
            self.catalog = catalog
            self.invalidate()
            self._reloading = True
            try:
                await self._give_data()
                await self._page.goto(f"{ORIGIN}/system.html")
                await self._eval("(v) => { wpSystem.version = v; }", version + 1)
            finally:
                self._reloading = False

    async def close(self) -> None:
        for closer in (self._browser, self._pw):
            if closer is not None:
                try:
                    await (closer.close() if closer is self._browser else closer.stop())
                except Exception:  # noqa: BLE001 - best effort on shutdown
                    logger.debug("error closing the screen", exc_info=True)

    async def _serve(self, route) -> None:
        url = route.request.url
        if not url.startswith(ORIGIN + "/"):
            await route.abort("internetdisconnected")  # apps have no network, like STAMP's
            return
        path = url[len(ORIGIN) + 1 :].split("?", 1)[0]
        if path == "system.html":
            await route.fulfill(path=HERE / "system.html", content_type="text/html; charset=utf-8")
            return
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "apps" and parts[2] == "index.html":
            app = self.catalog.app(parts[1])
            if app is not None:
                await route.fulfill(path=app.html_path, content_type="text/html; charset=utf-8")
                return
        await route.fulfill(status=404, body="not found")

    async def _give_data(self) -> None:
        """Give the pages what they read of the catalog (page_data.js), in place of what was
        given before: the launcher its apps, each app its ``window.WP`` (seed and variables)."""
        data = {
            "origin": ORIGIN,
            "system": {
                "apps": [
                    {
                        "package": a.package,
                        "label": a.label,
                        "activity": a.activity,
                        "color": a.color,
                        "url": f"{ORIGIN}/apps/{a.slug}/index.html",
                    }
                    for a in self.catalog.apps
                ],
                "density": self.density,
                "dpr": self.scale,
            },
            "apps": {a.slug: a.page_data(self.catalog) for a in self.catalog.apps},
        }
        script = self._page_data.replace("WP_DATA", json.dumps(data, ensure_ascii=False), 1)
        given, self._given = self._given, await self._page.add_init_script(script=script)
        if given is not None:
            await given.close()

    # --- state ----------------------------------------------------------------------------------

    async def _eval(self, expression: str, arg=None):
        return await self._page.evaluate(expression, arg)

    async def _read(self, expression: str, while_reloading):
        """A read that takes no lock (pollers ask all the time); while the page reloads (a
        reset) it answers as a phone would while its screen is changing."""
        if self._reloading:
            return while_reloading
        try:
            return await self._eval(expression)
        except Exception:  # Playwright's "execution context was destroyed", during a reload
            if self._reloading:  # the reload started while the read was on its way
                return while_reloading
            raise

    async def token(self) -> int:
        return await self._read("wpSystem.token()", -1)

    async def foreground(self) -> tuple[str, str]:
        fg = await self._read("wpSystem.foreground()", None)
        return (fg["package"], fg["activity"]) if fg else LAUNCHER

    async def route(self) -> dict | None:
        """The foreground app and its page (``wpRoute``), for scoring explorations."""
        return await self._read("wpSystem.route()", None)

    async def keyboard_shown(self) -> bool:
        return await self._read("wpSystem.keyboardShown", False)

    def invalidate(self) -> None:
        self._capture = Capture(token=0)

    # --- captures -----------------------------------------------------------------------------

    async def screenshot(self) -> bytes:
        async with self.lock:
            token = await self.token()
            if token > 0 and token == self._capture.token and self._capture.png is not None:
                return self._capture.png
            result = await self._cdp.send(
                "Page.captureScreenshot",
                {"format": "png", "optimizeForSpeed": True, "clip": self._clip},
            )
            png = base64.b64decode(result["data"])
            if token > 0 and token == await self.token():
                if self._capture.token != token:
                    self._capture = Capture(token=token)
                self._capture.png = png
            return png

    async def walk(self, wait_idle: bool = True) -> dict | None:
        """The walked DOM, or None when the screen never stopped animating (``wait_idle``)."""
        deadline = time.monotonic() + self.idle_timeout
        while True:
            async with self.lock:
                token = await self.token()
                if token > 0 or not wait_idle:
                    if token > 0 and token == self._capture.token and self._capture.walk:
                        return self._capture.walk
                    walked = await self._eval(self._walker)
                    if token > 0 and token == await self.token():
                        if self._capture.token != token:
                            self._capture = Capture(token=token)
                        self._capture.walk = walked
                    return walked
            if time.monotonic() > deadline:
                return None
            await asyncio.sleep(0.03)

    async def dump_xml(self) -> str | None:
        walked = await self.walk(wait_idle=True)
        if walked is None:
            return None
        return hierarchy.to_xml(walked["windows"], self.scale, self.width, self.height)

    async def visible_vars(self) -> list[dict]:
        walked = await self.walk(wait_idle=False)
        out = []
        for item in walked["vars"]:
            app = self.catalog.app(item["package"])
            variable = self.catalog.variable(f"{app.slug}.{item['name']}") if app else None
            if variable is None:
                continue
            out.append(
                {
                    "app": app.slug,
                    "package": app.package,
                    "name": variable.name,
                    "ref": variable.ref,
                    "value": variable.value,
                    "text": item["text"],
                    "bounds": list(
                        hierarchy.device_bounds(item["bounds"], self.scale, self.width, self.height)
                    ),
                }
            )
        return out

    # --- input ----------------------------------------------------------------------------------

    def _css(self, x: float, y: float) -> tuple[float, float]:
        return x / self.scale, y / self.scale

    @contextlib.asynccontextmanager
    async def _input(self):
        async with self.input_lock, self.lock:
            yield

    async def tap(self, x: int, y: int) -> None:
        async with self._input():
            await self._page.mouse.click(*self._css(x, y))

    async def long_press(self, x: int, y: int, ms: int) -> None:
        async with self._input():
            cx, cy = self._css(x, y)
            await self._page.mouse.move(cx, cy)
            await self._page.mouse.down()
            await asyncio.sleep(ms / 1000)
            await self._page.mouse.up()
            await self._eval(
                "([x, y]) => { const el = document.elementFromPoint(x, y); if (el) "
                "el.dispatchEvent("
                "new MouseEvent('contextmenu', {bubbles: true, clientX: x, clientY: y})); }",
                [cx, cy],
            )

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, ms: int) -> None:
        if abs(x2 - x1) < 8 and abs(y2 - y1) < 8:
            if ms >= 400:
                await self.long_press(x1, y1, ms)
            else:
                await self.tap(x1, y1)
            return
        (cx1, cy1), (cx2, cy2) = self._css(x1, y1), self._css(x2, y2)
        # The gesture takes the duration asked, as `input swipe` does on a phone; its last
        # SWIPE_REST_S the finger rests at the end before it lifts (at least half of it moves).
        moving = max(ms / 1000 - SWIPE_REST_S, ms / 2000, 0.001)
        touch = "Input.dispatchTouchEvent"
        async with self.input_lock:
            async with self.lock:
                await self._cdp.send(
                    touch, {"type": "touchStart", "touchPoints": [{"x": cx1, "y": cy1}]}
                )
                # The finger follows the clock: each move goes where the finger is by now. A
                # move is a round trip to the renderer (~17 ms, a frame; more on a busy
                # machine): a fixed number of moves, each followed by a sleep, took two to three
                # times the duration.
                loop = asyncio.get_running_loop()
                start = loop.time()
                done = 0.0
                while done < 1:
                    left = start + moving - loop.time()
                    await asyncio.sleep(min(SWIPE_MOVE_S, max(0.0, left)))
                    done = min(1.0, (loop.time() - start) / moving)
                    x, y = cx1 + (cx2 - cx1) * done, cy1 + (cy2 - cy1) * done
                    await self._cdp.send(
                        touch, {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]}
                    )
            # The rest: the page scrolls by the distance swiped and no fling follows (a fling
            # would scroll on for up to a second, by an amount the recorded action does not
            # say, and hold up the settle). The screen already shows where the swipe ends:
            # captures (the live view's) may be taken meanwhile; other input waits.
            await asyncio.sleep(SWIPE_REST_S)
            async with self.lock:
                await self._cdp.send(touch, {"type": "touchEnd", "touchPoints": []})

    async def drag(self, x1: int, y1: int, x2: int, y2: int, ms: int) -> None:
        (cx1, cy1), (cx2, cy2) = self._css(x1, y1), self._css(x2, y2)
        async with self._input():
            mouse = self._page.mouse
            await mouse.move(cx1, cy1)
            await mouse.down()
            await asyncio.sleep(min(ms, 2000) / 2000)
            await mouse.move(cx2, cy2, steps=10)
            await mouse.up()

    async def type_text(self, text: str) -> None:
        async with self._input():
            await self._page.keyboard.insert_text(text)

    async def clear_text(self) -> None:
        async with self._input():
            await self._eval(
                "(() => { const d = wpSystem.frontDoc(); const el = d && d.activeElement;"
                " if (el && 'value' in el) { el.select(); d.execCommand('delete'); } })()"
            )

    async def keyevent(self, code: int, long_press: bool = False) -> None:
        if code in NO_OP:
            return
        async with self._input():
            if code == HOME:
                await self._eval("wpSystem.home()")
            elif code == BACK:
                await self._eval("wpSystem.back()")
            elif code == APP_SWITCH:
                await self._eval("wpSystem.recents()")
            elif code in PAGE_KEYS:
                await self._page.keyboard.press(PAGE_KEYS[code], delay=500 if long_press else 0)

    async def start_app(self, package: str, extras: dict) -> bool:
        async with self._input():
            return await self._eval("([p, e]) => wpSystem.start(p, e)", [package, extras])

    async def force_stop(self, package: str) -> None:
        async with self._input():
            await self._eval("(p) => wpSystem.stop(p)", package)
