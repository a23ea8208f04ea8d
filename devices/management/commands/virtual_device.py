"""``manage.py virtual_device``: run a virtual phone until interrupted.

Defaults come from the WAYPOINT_VIRTUAL_* settings; ``--connect`` also asks the adb server to
``adb connect`` to it (and again after the adb server restarts). That adb server is the one
Waypoint watches: the first local one of ``ADB_SERVERS`` (whose default follows adb's own
``ANDROID_ADB_SERVER_PORT``), started on its port when none answers there. A machine shared by
several people has several adb servers; the device must land on this Waypoint's.
"""

import logging
import os
import signal
import threading
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from devices.services.adb import AdbServerError, local_adb_port, start_adb_server
from devices.services.packages import installed_manifests
from devices.virtual import VirtualDevice
from devices.virtual.apps import ManifestError
from devices.virtual.device import DeviceConfig, parse_size
from devices.virtual.screen import MISSING_EXTRA, has_playwright
from devices.virtual.status import FAILED, READY, STARTING, STOPPED, write_status


def keep_connected(serial: str, adb_port: int, stop: threading.Event) -> None:
    """Ask the adb server to connect to the device, and again whenever it lost it."""
    import adbutils

    client = adbutils.AdbClient(port=adb_port)
    while not stop.is_set():
        try:
            if serial not in {d.serial for d in client.device_list()}:
                client.connect(serial, timeout=5)
        except Exception as exc:  # noqa: BLE001 - the adb server may be restarting
            logging.getLogger(__name__).debug("adb connect %s failed: %s", serial, exc)
        stop.wait(5)


def package_folders(asked: str) -> list[str]:
    """The folders of the installed packages asked for (``all``: every one)."""
    names = [name.strip() for name in asked.split(",") if name.strip()]
    installed = {folder.name: str(folder) for folder, _ in installed_manifests()}
    if names == ["all"]:
        return list(installed.values())
    unknown = [name for name in names if name not in installed]
    if unknown:
        raise CommandError(f"--packages: no installed package {unknown[0]!r}")
    return [installed[name] for name in names]


def _interrupt(signum, frame):
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = "Run a virtual Android device speaking the ADB protocol (see devices/virtual/)."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=settings.WAYPOINT_VIRTUAL_DEVICE_HOST)
        parser.add_argument("--port", type=int, default=settings.WAYPOINT_VIRTUAL_DEVICE_PORT)
        parser.add_argument("--size", default=settings.WAYPOINT_VIRTUAL_SIZE, help="e.g. 1080x2400")
        parser.add_argument("--density", type=int, default=None, help="dpi (default: 360 dp wide)")
        parser.add_argument("--seed", type=int, default=settings.WAYPOINT_VIRTUAL_SEED)
        parser.add_argument(
            "--apps",
            default=",".join(settings.WAYPOINT_VIRTUAL_APPS),
            help="comma-separated app slugs or packages (default: all demo apps)",
        )
        parser.add_argument(
            "--packages",
            default="",
            help="installed app packages (generated environments) to install on the device too: "
            "slugs, comma-separated, or 'all' (see manage.py app_packages list)",
        )
        parser.add_argument(
            "--connect",
            action="store_true",
            help="make the local adb server connect to the device (and reconnect)",
        )
        parser.add_argument(
            "--adb-port",
            type=int,
            default=None,
            help="the adb server's port (default: the first local server of ADB_SERVERS)",
        )
        parser.add_argument(
            "--status-file",
            type=Path,
            default=settings.WAYPOINT_VIRTUAL_DEVICE_STATUS,
            help="where to say whether the device came up (read by the devices page)",
        )

    def handle(self, *args, **options):
        status_file = options["status_file"]
        write_status(status_file, STARTING)
        try:
            self.start_and_run(options, status_file)
            write_status(status_file, STOPPED)
        except CommandError as exc:
            write_status(status_file, FAILED, detail=str(exc))
            raise
        except KeyboardInterrupt:
            write_status(status_file, STOPPED)
        except Exception as exc:
            first_line = (str(exc).strip().splitlines() or [""])[0][:300]
            write_status(status_file, FAILED, detail=f"{type(exc).__name__}: {first_line}")
            raise

    def start_and_run(self, options, status_file: Path) -> None:
        if not has_playwright():
            raise CommandError(MISSING_EXTRA)
        if not settings.CHROMIUM_PATH:
            raise CommandError(
                "no Chromium to render its apps; `make run` installs one "
                "(python -m config.provision), or set CHROMIUM_PATH"
            )
        try:
            parse_size(options["size"])
            device = VirtualDevice(
                DeviceConfig(
                    host=options["host"],
                    port=options["port"],
                    size=options["size"],
                    density=options["density"],
                    seed=options["seed"],
                    apps=[a.strip() for a in options["apps"].split(",") if a.strip()],
                    chromium_path=settings.CHROMIUM_PATH,
                    packages=package_folders(options["packages"]),
                )
            )
        except (ValueError, ManifestError) as exc:
            raise CommandError(str(exc)) from exc
        try:
            device.start()
        except (RuntimeError, TimeoutError) as exc:
            raise CommandError(str(exc)) from exc
        apps = ", ".join(app.label for app in device.catalog.apps)
        write_status(status_file, READY, serial=device.serial, detail=apps)
        self.stdout.write(
            f"Virtual device {device.serial} ({options['size']}, seed {options['seed']}): {apps}\n"
            f"Connect with: adb connect {device.serial}"
        )
        # `kill` / docker stop: shut Chromium down cleanly, like Ctrl-C.
        signal.signal(signal.SIGTERM, _interrupt)
        stop = threading.Event()
        if options["connect"]:
            adb_port = options["adb_port"] or local_adb_port()
            if adb_port is None:
                adb_port = int(os.environ.get("ANDROID_ADB_SERVER_PORT") or 5037)
                self.stderr.write(
                    f"ADB_SERVERS names no adb server on this machine: the device joins "
                    f"127.0.0.1:{adb_port}, which Waypoint does not watch."
                )
            # adbutils starts `adb start-server` itself when its server does not answer: on
            # this port, not adb's default.
            os.environ["ANDROID_ADB_SERVER_PORT"] = str(adb_port)
            try:
                started = start_adb_server(adb_port)
            except AdbServerError as exc:
                self.stderr.write(str(exc))
            else:
                how = "started" if started else "running"
                self.stdout.write(f"The device joins the adb server 127.0.0.1:{adb_port} ({how}).")
            threading.Thread(
                target=keep_connected, args=(device.serial, adb_port, stop), daemon=True
            ).start()
        try:
            device.run_forever()
        finally:
            stop.set()
