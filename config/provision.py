"""``python -m config.provision [--tests]``: give this machine what Waypoint needs to run.

`make run` and `make test` call it before anything else, so the README's two commands work on a
machine that has only Python and make. It looks for, and where it can installs:

- a Chromium (the virtual device renders its apps in it; browser tests drive it): CHROMIUM_PATH,
  else the system's ``chromium``/``chromium-browser``, else Playwright's own browser (downloaded
  when that download is reachable), else, as root with apt, Debian's ``chromium``;
- fonts covering CJK and emoji, so a screenshot shows the text that was typed (Debian's
  ``fonts-noto-cjk`` and ``fonts-noto-color-emoji``);
- with ``--tests``, Debian's ``adb`` too (the suite checks the virtual device against it).

Where something is missing and nothing can be installed, it stops with one paragraph naming the
command to run. ``WAYPOINT_PROVISION_INSTALL=0`` forbids installing anything (check only).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import textwrap

from core.chromium import find_chromium

FONT_PACKAGES = ("fonts-noto-cjk", "fonts-noto-color-emoji")
PLAYWRIGHT_TIMEOUT_S = 300
APT_TIMEOUT_S = 1200
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


class ProvisionError(Exception):
    """Something Waypoint needs is missing and could not be installed."""


def say(message: str) -> None:
    print(f"provision: {message}", file=sys.stderr, flush=True)


def may_install() -> bool:
    return os.getenv("WAYPOINT_PROVISION_INSTALL", "1").lower() not in {"0", "false", "no", "off"}


def can_apt() -> bool:
    """Debian packages can be installed here: we are root and apt-get exists."""
    return may_install() and os.geteuid() == 0 and shutil.which("apt-get") is not None


class Apt:
    """apt-get, with the package lists refreshed once, before the first install."""

    def __init__(self) -> None:
        self.updated = False

    def install(self, *packages: str) -> bool:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        try:
            if not self.updated:
                say("apt-get update")
                subprocess.run(
                    ["apt-get", "update", "-qq"],
                    env=env,
                    check=True,
                    timeout=APT_TIMEOUT_S,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                )
                self.updated = True
            say(f"apt-get install {' '.join(packages)}")
            subprocess.run(
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
                env=env,
                check=True,
                timeout=APT_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            say(f"apt-get could not install {' '.join(packages)}: {exc}")
            return False
        return True


def chromium_version(path: str) -> str:
    """What ``path --version`` prints; raises ProvisionError when it is not a working Chromium."""
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ProvisionError(f"{path} is not an executable file.")
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProvisionError(f"{path} does not start: {exc}.") from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise ProvisionError(f"{path} does not start: {detail[-1] if detail else 'no output'}.")
    return done.stdout.strip()


def download_playwright_chromium() -> bool:
    """Playwright's own Chromium, where its download is reachable from this machine."""
    say("no Chromium found; trying Playwright's download")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "playwright", "install", "chromium"],
            capture_output=True,
            text=True,
            timeout=PLAYWRIGHT_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        say(f"Playwright's download did not finish: {exc}")
        return False
    output = ANSI_ESCAPE.sub("", done.stdout + done.stderr).strip().splitlines()
    # `playwright install` can exit 0 although the download failed: look at what it said.
    if done.returncode != 0 or any("Failed to download" in line for line in output):
        say(f"Playwright's download failed: {output[0] if output else done.returncode}")
        return False
    return True


def provide_chromium(apt: Apt) -> str:
    path, origin = find_chromium()
    if origin == "CHROMIUM_PATH":
        try:
            version = chromium_version(path)
        except ProvisionError as exc:
            raise ProvisionError(
                f"CHROMIUM_PATH={path} cannot be used: {exc} Point CHROMIUM_PATH at a Chromium "
                "executable, or unset it to let Waypoint find or install one."
            ) from exc
        say(f"Chromium: {path} ({version}; from CHROMIUM_PATH)")
        return path
    if not path and may_install() and download_playwright_chromium():
        path, origin = find_chromium()
    if not path and can_apt() and apt.install("chromium"):
        path, origin = find_chromium()
    if not path:
        raise ProvisionError(
            "Waypoint needs a Chromium: its virtual device renders its apps in one, and the "
            "browser tests drive one. None was found (CHROMIUM_PATH is unset, there is no "
            "`chromium` or `chromium-browser` on PATH, and no Playwright browser) and none "
            + (
                "was installed: WAYPOINT_PROVISION_INSTALL=0 turns installing off."
                if not may_install()
                else "could be installed here (Playwright's download was not reachable, and "
                "Debian's package needs root and apt-get)."
            )
            + " Install one with `sudo apt-get install chromium` (Debian, Ubuntu: "
            "`chromium-browser`), or `.venv/bin/python -m playwright install --with-deps "
            "chromium` where its download is reachable, or set CHROMIUM_PATH to a Chromium "
            "executable; then run the command again."
        )
    try:
        version = chromium_version(path)
    except ProvisionError as exc:
        raise ProvisionError(
            f"The Chromium found at {path} ({origin}) cannot be used: {exc} Reinstall it (for "
            "Playwright's browser: `.venv/bin/python -m playwright install --with-deps chromium`),"
            " or set CHROMIUM_PATH to a working Chromium; then run the command again."
        ) from exc
    say(f"Chromium: {path} ({version}; {origin})")
    return path


def installed_fonts() -> dict[str, str]:
    """The first font family that covers each of CJK and emoji, by fontconfig ("" if none)."""
    if not shutil.which("fc-list"):
        return {"CJK": "", "emoji": ""}

    def first_family(*pattern: str) -> str:
        done = subprocess.run(
            ["fc-list", *pattern, "family"], capture_output=True, text=True, check=False
        )
        families = sorted({line.split(",")[0].strip() for line in done.stdout.splitlines()})
        return families[0] if families else ""

    return {"CJK": first_family(":lang=zh"), "emoji": first_family(":lang=und-zsye")}


def provide_fonts(apt: Apt) -> None:
    fonts = installed_fonts()
    if not all(fonts.values()) and can_apt():
        apt.install(*FONT_PACKAGES)
        fonts = installed_fonts()
    missing = [kind for kind, family in fonts.items() if not family]
    if missing:
        raise ProvisionError(
            f"Waypoint needs fonts that cover {' and '.join(missing)}: without them the virtual "
            "device's screenshots show empty boxes where such text was typed, and a label made "
            "from a screenshot would not match what the device holds. None could be installed "
            "here"
            + (
                " (installing is turned off by WAYPOINT_PROVISION_INSTALL=0)."
                if not may_install()
                else " (that needs root and apt-get)."
            )
            + f" Install them with `sudo apt-get install {' '.join(FONT_PACKAGES)}` (or your "
            "system's Noto CJK and Noto Color Emoji fonts); then run the command again."
        )
    say(f"fonts: {fonts['CJK']} (CJK), {fonts['emoji']} (emoji)")


def provide_debian_adb(apt: Apt) -> None:
    """The suite also checks the virtual device against Debian's adb; nothing else needs it."""
    if shutil.which("adb"):
        say(f"adb: {shutil.which('adb')}")
        return
    if can_apt() and apt.install("adb") and shutil.which("adb"):
        say(f"adb: {shutil.which('adb')}")
        return
    say(
        "adb: none on PATH; the test against Debian's adb is skipped (it fails in CI). "
        "Install it with `sudo apt-get install adb`."
    )


def provision(for_tests: bool = False) -> str:
    """Make sure Chromium and the fonts are here; returns the Chromium's path."""
    apt = Apt()
    path = provide_chromium(apt)
    provide_fonts(apt)
    if for_tests:
        provide_debian_adb(apt)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", action="store_true", help="also what the test suite needs")
    args = parser.parse_args(argv)
    try:
        provision(for_tests=args.tests)
    except ProvisionError as exc:
        print(file=sys.stderr)
        print(
            textwrap.fill(str(exc), width=100, break_on_hyphens=False, break_long_words=False),
            file=sys.stderr,
        )
        print(file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
