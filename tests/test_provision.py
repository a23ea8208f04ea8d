"""`make run` and `make test` provision Chromium and fonts, or say in one paragraph what to run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.chromium import find_chromium

REPO = Path(__file__).resolve().parent.parent


def provision(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`python -m config.provision` on a machine with nothing on PATH but what `env` adds."""
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir(exist_ok=True)
    base = {
        "PATH": str(empty_bin),
        "HOME": str(tmp_path / "home"),
        "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "playwright"),
        "WAYPOINT_PROVISION_INSTALL": "0",
    }
    return subprocess.run(
        [sys.executable, "-m", "config.provision", *args],
        cwd=REPO,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def fake_executable(path: Path, output: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{output}'\n")
    path.chmod(0o755)
    return path


def test_it_stops_with_one_paragraph_naming_the_command_when_there_is_no_chromium(tmp_path):
    done = provision(tmp_path)
    assert done.returncode == 2
    paragraph = " ".join(done.stderr.split())
    assert paragraph.startswith("Waypoint needs a Chromium:")
    assert "sudo apt-get install chromium" in paragraph
    assert "set CHROMIUM_PATH to a Chromium executable" in paragraph
    assert "WAYPOINT_PROVISION_INSTALL=0 turns installing off" in paragraph


def test_it_names_a_chromium_path_that_is_no_executable(tmp_path):
    done = provision(tmp_path, CHROMIUM_PATH=str(tmp_path / "nowhere" / "chrome"))
    assert done.returncode == 2
    assert (
        f"CHROMIUM_PATH={tmp_path}/nowhere/chrome cannot be used: {tmp_path}/nowhere/chrome is "
        "not an executable file."
    ) in " ".join(done.stderr.split())


def test_it_stops_when_the_fonts_for_cjk_and_emoji_are_missing(tmp_path):
    chrome = fake_executable(tmp_path / "chrome", "Chromium 1.2.3")
    done = provision(tmp_path, CHROMIUM_PATH=str(chrome))
    assert done.returncode == 2
    assert f"Chromium: {chrome} (Chromium 1.2.3; from CHROMIUM_PATH)" in done.stderr
    paragraph = " ".join(done.stderr.split())
    assert "Waypoint needs fonts that cover CJK and emoji" in paragraph
    assert "sudo apt-get install fonts-noto-cjk fonts-noto-color-emoji" in paragraph


def test_it_takes_playwrights_own_browser_when_there_is_no_system_one(tmp_path, monkeypatch):
    chrome = fake_executable(
        tmp_path / "playwright" / "chromium-1255" / "chrome-linux64" / "chrome", "Chromium 159"
    )
    fake_executable(tmp_path / "playwright" / "chromium-1200" / "chrome-linux" / "chrome", "old")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "playwright"))
    monkeypatch.delenv("CHROMIUM_PATH", raising=False)
    assert find_chromium() == (str(chrome), "Playwright")


def test_the_system_chromium_comes_before_playwrights(tmp_path, monkeypatch):
    system = fake_executable(tmp_path / "bin" / "chromium", "Chromium 156")
    fake_executable(tmp_path / "playwright" / "chromium-1255" / "chrome-linux64" / "chrome", "x")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "playwright"))
    monkeypatch.delenv("CHROMIUM_PATH", raising=False)
    assert find_chromium() == (str(system), "system")


def test_this_machine_is_provisioned_for_the_tests(tmp_path):
    """What `make test` ran before the suite: a working Chromium, CJK and emoji fonts."""
    done = subprocess.run(
        [sys.executable, "-m", "config.provision", "--tests"],
        cwd=REPO,
        env={**os.environ, "WAYPOINT_PROVISION_INSTALL": "0"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "provision: Chromium: " in done.stderr
    assert "(CJK)" in done.stderr and "(emoji)" in done.stderr


def test_ci_installs_no_browser_fonts_or_adb_of_its_own():
    """`.ci/run` relies on `make test`'s provisioning instead of a copy of it."""
    script = (REPO / ".ci" / "run").read_text()
    commands = [line for line in script.splitlines() if not line.lstrip().startswith("#")]
    for needle in ("chromium", "playwright", "fonts-noto", "apt-get", "adb"):
        assert not [line for line in commands if needle in line.lower()], needle
    assert "export CI=true" in script and "make test </dev/null" in script


def test_a_missing_tool_fails_a_test_in_ci_and_skips_it_elsewhere(monkeypatch):
    from tests import conftest

    monkeypatch.setattr(conftest, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match="no adb; CI must provide it"):
        conftest.missing_tool("no adb")
    monkeypatch.setattr(conftest, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception, match="no adb"):
        conftest.missing_tool("no adb")
