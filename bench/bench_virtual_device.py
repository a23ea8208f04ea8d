"""Speed of the virtual device through a real adb server, at 1080x2400.

    .venv/bin/python bench/bench_virtual_device.py [--calls 20] [--size 1080x2400]

Prints the median and p90 (ms) of adbutils' screenshot(), dump_hierarchy() and click() on an
unchanged screen (what a recorder polling for a settled screen sees), and of screenshot() and
dump_hierarchy() right after an input (the screen re-rendered and re-encoded every time).
Phones commonly take 0.3-2 s for `adb exec-out screencap -p` and 1-3 s for `uiautomator dump`.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import adbutils  # noqa: E402

from devices.virtual import VirtualDevice  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(fn, calls: int, before=None) -> list[float]:
    out = []
    for _ in range(calls):
        if before is not None:
            before()
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def report(name: str, samples: list[float], budget: float | None = None) -> None:
    median = statistics.median(samples)
    p90 = sorted(samples)[int(len(samples) * 0.9) - 1]
    verdict = "" if budget is None else ("  ok" if median <= budget else f"  OVER {budget:.0f} ms")
    print(f"{name:<44} median {median:7.1f} ms   p90 {p90:7.1f} ms{verdict}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--size", default="1080x2400")
    args = parser.parse_args()

    adb_port = free_port()
    env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(adb_port)}
    adb = [adbutils.adb_path(), "-P", str(adb_port)]
    device = VirtualDevice(port=free_port(), size=args.size).start()
    try:
        subprocess.run([*adb, "start-server"], env=env, check=True, capture_output=True)
        subprocess.run([*adb, "connect", device.serial], env=env, check=True, capture_output=True)
        d = adbutils.AdbClient(port=adb_port).device(device.serial)
        d.app_start("com.waypoint.freshcart")
        w, h = d.window_size()
        d.screenshot(), d.dump_hierarchy()  # warm up
        print(f"virtual device {device.serial} at {w}x{h}, {args.calls} calls each\n")

        report("screenshot() unchanged screen", timed(d.screenshot, args.calls), 150)
        report("dump_hierarchy() unchanged screen", timed(d.dump_hierarchy, args.calls), 150)
        # Taps on an empty strip of the promo banner: real input, no navigation.
        report("click()", timed(lambda: d.click(w // 2, int(h * 0.14)), args.calls), 50)

        def poke():
            d.click(w // 2, int(h * 0.14))

        report("screenshot() after an input", timed(d.screenshot, args.calls, poke))
        report("dump_hierarchy() after an input", timed(d.dump_hierarchy, args.calls, poke))
        report("shell('echo hi')", timed(lambda: d.shell("echo hi"), args.calls))
        report(
            "adb exec-out screencap -p (CLI)",
            timed(
                lambda: subprocess.run(
                    [*adb, "-s", device.serial, "exec-out", "screencap", "-p"],
                    env=env,
                    capture_output=True,
                    check=True,
                ),  # fmt: skip
                args.calls,
            ),
        )
        png = d.shell("screencap -p", encoding=None)
        print(f"\nPNG size at {w}x{h}: {len(png) / 1024:.0f} KiB")
    finally:
        subprocess.run([*adb, "kill-server"], env=env, capture_output=True)
        device.stop()


if __name__ == "__main__":
    main()
