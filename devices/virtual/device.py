"""A virtual phone: screen + in-memory filesystem + apps, served over the ADB transport.

``VirtualDevice(...).start()`` runs everything on its own thread and event loop and returns once
the device accepts connections; ``stop()`` tears it down. Several can run in one process.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from devices.virtual import protocol
from devices.virtual.apps import Catalog, ManifestError, load_apps
from devices.virtual.fs import MemoryFS
from devices.virtual.packages import EXTENSION, Package, PackageError, read_archive, read_folder
from devices.virtual.screen import LAUNCHER, Screen
from devices.virtual.services import open_service
from devices.virtual.templates import NATURAL_LEVEL
from devices.virtual.transport import Connection

logger = logging.getLogger(__name__)

SYSTEM_PACKAGES = [
    "android",
    "com.android.systemui",
    "com.android.launcher3",
    "com.android.settings",
    "com.android.shell",
    "com.google.android.inputmethod.latin",
]


def parse_size(size: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in size.lower().split("x"))
    except ValueError as exc:
        raise ValueError(f"screen size must look like 1080x2400, got {size!r}") from exc
    if not (120 <= width <= 4000 and 120 <= height <= 8000):
        raise ValueError(f"screen size {size} out of range")
    return width, height


def default_density(width: int) -> int:
    """A density giving a 360 dp wide screen, as on most phones (1080 px -> 480 dpi)."""
    return round(160 * width / 360)


@dataclass
class DeviceConfig:
    host: str = "127.0.0.1"
    port: int = 6520
    size: str = "1080x2400"
    density: int | None = None
    seed: int = 0
    apps: list[str] = field(default_factory=list)
    chromium_path: str = ""
    model: str = "Waypoint Virtual"
    name: str = "waypoint_virtual"
    # App packages (.wpk files or unpacked folders) installed when the device starts.
    packages: list[str] = field(default_factory=list)

    @property
    def serial(self) -> str:
        """The serial the adb server lists after ``adb connect``."""
        return f"{self.host}:{self.port}"


class Phone:
    """What the shell commands talk to (see commands.py)."""

    system_packages = SYSTEM_PACKAGES

    def __init__(self, config: DeviceConfig, catalog: Catalog):
        self.config = config
        self.catalog = catalog
        self.width, self.height = parse_size(config.size)
        self.density = config.density or default_density(self.width)
        self.fs = MemoryFS()
        self.settings: dict[str, str] = {
            "system/screen_brightness": "128",
            "system/screen_brightness_mode": "0",
            "global/airplane_mode_on": "0",
        }
        self.screen = Screen(catalog, self.width, self.height, self.density, config.chromium_path)
        self._foreground = LAUNCHER
        self.keyboard_shown = False
        self.resets = 0  # `waypoint reset` calls since the device started
        # App packages installed (``pm install``), by slug; unpacked into a folder of the
        # device's own, removed when it stops. A reset keeps them, as a phone keeps its apps.
        self.packages: dict[str, Package] = {}
        self._package_dir = tempfile.TemporaryDirectory(prefix="waypoint-packages-")
        self.properties = {
            "ro.product.model": config.model,
            "ro.product.name": config.name,
            "ro.product.device": "waypoint",
            "ro.product.brand": "Waypoint",
            "ro.product.manufacturer": "Waypoint",
            "ro.product.cpu.abi": "x86_64",
            "ro.build.version.release": "14",
            "ro.build.version.sdk": "34",
            "ro.build.type": "user",
            "ro.build.characteristics": "phone",
            "ro.serialno": f"WPV{config.port}",
            "ro.sf.lcd_density": str(self.density),
            "ro.debuggable": "0",
            "ro.secure": "1",
            "persist.sys.locale": "en-US",
            "sys.boot_completed": "1",
            "init.svc.bootanim": "stopped",
            "ro.kernel.qemu": "0",
        }

    @property
    def banner(self) -> bytes:
        keys = ("ro.product.name", "ro.product.model", "ro.product.device")
        return protocol.device_banner({k: self.properties[k] for k in keys})

    def app(self, package: str):
        return self.catalog.app(package) if "." in package else None

    def installed_apps(self):
        return self.catalog.apps

    def foreground(self) -> tuple[str, str]:
        return self._foreground

    def pid_of(self, package: str) -> int:
        return 1000 + sum(package.encode()) % 20000

    async def refresh(self) -> None:
        self._foreground = await self.screen.foreground()
        self.keyboard_shown = await self.screen.keyboard_shown()

    # --- screen operations used by the commands (each refreshes the foreground mirror)
    async def screencap_png(self) -> bytes:
        return await self.screen.screenshot()

    async def screencap_raw(self) -> bytes:
        """``screencap`` without -p: header (w, h, format RGBA_8888) + raw pixels."""
        import io
        import struct

        from PIL import Image

        image = Image.open(io.BytesIO(await self.screen.screenshot())).convert("RGBA")
        return struct.pack("<III", image.width, image.height, 1) + image.tobytes()

    async def dump_hierarchy(self) -> str | None:
        return await self.screen.dump_xml()

    async def visible_vars(self) -> list[dict]:
        return await self.screen.visible_vars()

    async def route(self) -> dict | None:
        return await self.screen.route()

    async def _after_input(self) -> None:
        self.screen.invalidate()
        await self.refresh()

    async def tap(self, x, y):
        await self.screen.tap(x, y)
        await self._after_input()

    async def swipe(self, x1, y1, x2, y2, ms):
        await self.screen.swipe(x1, y1, x2, y2, ms)
        await self._after_input()

    async def drag(self, x1, y1, x2, y2, ms):
        await self.screen.drag(x1, y1, x2, y2, ms)
        await self._after_input()

    async def type_text(self, text):
        await self.screen.type_text(text)
        await self._after_input()

    async def clear_text(self):
        await self.screen.clear_text()
        await self._after_input()

    async def keyevent(self, code, long_press=False):
        await self.screen.keyevent(code, long_press)
        await self._after_input()

    async def start_app(self, package, extras):
        await self.screen.start_app(package, extras)
        await self._after_input()

    async def force_stop(self, package):
        await self.screen.force_stop(package)
        await self._after_input()

    async def reset(self, seed: int, level: int = NATURAL_LEVEL) -> None:
        """Every app back to its first launch with the memory variables of ``seed``, its tasks
        posed at difficulty ``level`` (templates.py)."""
        catalog = self.load(seed, level, self.packages)
        await self.screen.reload(catalog)
        self.catalog = catalog
        self.resets += 1
        await self._after_input()

    # --- app packages -----------------------------------------------------------------------

    def package_folder(self, package: Package) -> Path:
        """Where the package is unpacked: a folder named by its slug (the app's name in the
        catalog), inside one of its hash (two versions never share a folder)."""
        return Path(self._package_dir.name) / package.sha256[:16] / package.slug

    def load(self, seed: int, level: int, packages: dict[str, Package]) -> Catalog:
        return load_apps(
            seed,
            self.config.apps,
            level=level,
            packages=[(self.package_folder(p), p.manifest) for p in packages.values()],
        )

    def with_package(self, package: Package) -> Catalog:
        """The catalog with ``package`` installed (another version of it replaced); a package
        that takes a built-in app's name, or whose manifest does not load, is refused."""
        for app in self.catalog.apps:
            if app.slug in self.packages:
                continue
            if package.slug == app.slug or package.package == app.package:
                raise PackageError(f"{package.package} would replace the built-in app {app.label}")
        for other in self.packages.values():
            if other.slug != package.slug and other.package == package.package:
                raise PackageError(f"{package.package} is installed as {other.slug} already")
        package.write(self.package_folder(package))
        try:
            return self.load(
                self.catalog.seed, self.catalog.level, {**self.packages, package.slug: package}
            )
        except (ManifestError, KeyError, TypeError, ValueError) as exc:
            raise PackageError(f"{package.slug}: its manifest does not load ({exc})") from None

    async def install(self, package: Package) -> None:
        """Install (or update) an app package: every app restarts, at the same seed."""
        catalog = self.with_package(package)
        self.packages[package.slug] = package
        await self.screen.reload(catalog)
        self.catalog = catalog
        await self._after_input()

    def forget_packages(self) -> None:
        """Remove the unpacked packages from the host's disk (the device stops)."""
        self._package_dir.cleanup()

    async def uninstall(self, package_name: str) -> bool:
        """Remove an installed package (not a built-in app); False when none is called so."""
        slug = next((s for s, p in self.packages.items() if p.package == package_name), None)
        if slug is None:
            return False
        kept = {s: p for s, p in self.packages.items() if s != slug}
        catalog = self.load(self.catalog.seed, self.catalog.level, kept)
        self.packages = kept
        await self.screen.reload(catalog)
        self.catalog = catalog
        await self._after_input()
        return True

    def environment(self) -> dict:
        """What reproduces the apps' data and its tasks: the seed, the level its tasks are
        posed at and the apps (``waypoint env``)."""
        return {
            "seed": self.catalog.seed,
            "level": self.catalog.level,
            "apps": [
                {"slug": a.slug, "package": a.package, "label": a.label, "version": a.version}
                | ({"sha256": self.packages[a.slug].sha256} if a.slug in self.packages else {})
                for a in self.catalog.apps
            ],
            "resets": self.resets,
        }


class VirtualDevice:
    """One virtual phone listening on ``config.host:config.port``."""

    def __init__(self, config: DeviceConfig | None = None, **overrides):
        self.config = config or DeviceConfig(**overrides)
        self.phone = Phone(self.config, load_apps(self.config.seed, self.config.apps))
        for path in self.config.packages:
            source = Path(path)
            package = (
                read_archive(source.read_bytes(), f"{source.name}: ")
                if source.suffix == EXTENSION
                else read_folder(source)
            )
            self.phone.catalog = self.phone.with_package(package)
            self.phone.packages[package.slug] = package
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._ready = threading.Event()
        self._stopped: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._connections: set[Connection] = set()

    @property
    def serial(self) -> str:
        return self.config.serial

    @property
    def catalog(self) -> Catalog:
        """The apps and the memory variables of the device's current seed."""
        return self.phone.catalog

    def start(self, timeout: float = 60) -> VirtualDevice:
        self._thread = threading.Thread(
            target=self._run, name=f"virtual-device-{self.config.port}", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("the virtual device did not start in time")
        if self._error is not None:
            raise RuntimeError(
                f"the virtual device failed to start: {self._error}"
            ) from self._error
        return self

    def stop(self, timeout: float = 20) -> None:
        if self.loop is not None and self._stopped is not None and self.loop.is_running():
            self.loop.call_soon_threadsafe(self._stopped.set)
        if self._thread is not None:
            self._thread.join(timeout)
        self.phone.forget_packages()

    def __enter__(self) -> VirtualDevice:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def run_forever(self) -> None:
        """Start (unless started) and block until interrupted (for the management command)."""
        if self._thread is None:
            self.start()
        try:
            while self._thread.is_alive():
                self._thread.join(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def call(self, coro_fn, *args, timeout: float = 30):
        """Run ``coro_fn(*args)`` on the device loop from another thread and return its result."""
        return asyncio.run_coroutine_threadsafe(coro_fn(*args), self.loop).result(timeout)

    def visible_vars(self) -> list[dict]:
        return self.call(self.phone.visible_vars)

    def _run(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._main())
        finally:
            self._ready.set()
            self.loop.close()

    async def _main(self) -> None:
        self._stopped = asyncio.Event()
        try:
            await self.phone.screen.start()
            self._server = await asyncio.start_server(
                self._accept, self.config.host, self.config.port, reuse_address=True
            )
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
            await self.phone.screen.close()
            return
        self._ready.set()
        logger.info("virtual device listening on %s", self.serial)
        await self._stopped.wait()
        self._server.close()
        for connection in list(self._connections):
            await connection.shutdown()
        await self.phone.screen.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:  # small OKAY/CLSE messages must not wait for Nagle
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = Connection(
            reader, writer, self.phone.banner, lambda s, svc: open_service(self.phone, s, svc)
        )
        self._connections.add(connection)
        try:
            await connection.run()
        finally:
            self._connections.discard(connection)
