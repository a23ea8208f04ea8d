"""The evaluator from the shell: ``python -m evaluation`` (without Django's start) and
``manage.py evaluate`` give the same report, the same JSON and the same refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.evaluation.test_evaluation import PERFECT, TASKS, WRONG

REPO = Path(__file__).resolve().parents[2]


def light(*args: str, **env: str) -> subprocess.CompletedProcess:
    """``python -m evaluation`` in a process of its own, as a user runs it."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("WAYPOINT_")}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "evaluation", *args],
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    benchmark = tmp_path / "gt.jsonl"
    benchmark.write_text("".join(json.dumps(t) + "\n" for t in TASKS))
    predictions = tmp_path / "pred.jsonl"
    lines = [PERFECT[0], WRONG[1], PERFECT[2], PERFECT[3], WRONG[4]]
    predictions.write_text(
        "".join(json.dumps(x) + "\n" for x in lines)
        + "not json\n"
        + json.dumps({"task_id": "T9", "step_index": 0, "prediction": {"action": "back"}})
        + "\n"
    )
    return benchmark, predictions


def test_both_commands_give_the_same_report_and_json(tmp_path, files, capsys):
    benchmark, predictions = files
    ran = light(
        "--benchmark", str(benchmark), "--predictions", str(predictions),
        "--json", str(tmp_path / "light.json"),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    call_command(
        "evaluate",
        benchmark=str(benchmark),
        predictions=str(predictions),
        json=str(tmp_path / "site.json"),
    )
    assert ran.stdout == capsys.readouterr().out
    assert (tmp_path / "light.json").read_text() == (tmp_path / "site.json").read_text()
    result = json.loads((tmp_path / "light.json").read_text())
    # Worked out by hand: T1 scores 2 of 3 steps, T2 1 of 2; T1's chain needs its step 1.
    assert (result["tasks"], result["steps"], result["ams"]) == (2, 5, 0.6)
    assert result["malformed"]["count"] == 1 and result["unknown_tasks"]["count"] == 1
    assert "AMS: 0.6000" in ran.stdout and "malformed prediction lines: 1" in ran.stdout


def test_the_light_command_starts_neither_the_site_nor_its_apps(files):
    benchmark, predictions = files
    probe = (
        "import sys; from evaluation.__main__ import main; code = main(sys.argv[1:]); "
        "loaded = [m in sys.modules for m in ('django.conf', 'config', 'trajectories.models')]; "
        "print(code, *loaded)"
    )
    ran = subprocess.run(
        [sys.executable, "-c", probe, "--benchmark", str(benchmark)]
        + ["--predictions", str(predictions)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines()[-1] == "0 False False False"  # not even Django's settings


def bad_benchmark(tmp: Path, case: str) -> Path:
    if case == "missing":
        return tmp / "nope"
    if case == "not androtmem":
        (tmp / "export").mkdir()
        (tmp / "export" / "manifest.json").write_text(json.dumps({"format": "waypoint"}))
        return tmp / "export"
    (tmp / "bad.jsonl").write_text('{"task_id": 1}\n{oops\n')
    return tmp / "bad.jsonl"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing", "nope: no such file or folder"),
        (
            "not androtmem",
            "export: a 'waypoint' export is not a benchmark the evaluator scores "
            "(it scores: androtmem)",
        ),
        (
            "broken line",
            "bad.jsonl line 2: invalid JSON (Expecting property name enclosed in double quotes)",
        ),
    ],
)
def test_both_commands_refuse_a_bad_benchmark_with_the_same_message(tmp_path, files, case, message):
    benchmark = bad_benchmark(tmp_path, case)
    predictions = files[1]
    ran = light("--benchmark", str(benchmark), "--predictions", str(predictions))
    assert ran.returncode == 1 and ran.stdout == ""
    assert ran.stderr.startswith("error: ") and message in ran.stderr
    with pytest.raises(CommandError) as refused:
        call_command("evaluate", benchmark=str(benchmark), predictions=str(predictions))
    assert ran.stderr == f"error: {refused.value}\n"


def test_the_light_command_keeps_the_sites_file_limit(files):
    """Its limits are the site's, from the same environment variables (core/limits.py)."""
    benchmark, predictions = files
    ran = light(
        "--benchmark", str(benchmark), "--predictions", str(predictions),
        WAYPOINT_MAX_FILE_BYTES="100",
    )  # fmt: skip
    assert ran.returncode == 1
    assert "over the limit of 100 bytes (WAYPOINT_MAX_FILE_BYTES)" in ran.stderr
    bad = light(
        "--benchmark", str(benchmark), "--predictions", str(predictions),
        WAYPOINT_MAX_FILE_BYTES="lots",
    )  # fmt: skip
    assert bad.returncode == 1
    assert bad.stderr == "error: WAYPOINT_MAX_FILE_BYTES must be an integer, got 'lots'\n"


def test_the_judge_needs_an_endpoint_from_the_shell_too(files):
    benchmark, predictions = files
    ran = light(
        "--benchmark", str(benchmark), "--predictions", str(predictions), "--judge", DEBUG="1"
    )  # fmt: skip
    assert ran.returncode == 1
    assert ran.stderr == "error: --judge: set WAYPOINT_JUDGE_URL to an OpenAI-compatible API\n"


def test_a_missing_option_is_named():
    ran = light("--benchmark", "x")
    assert ran.returncode == 2
    assert "the following arguments are required: --predictions" in ran.stderr
