"""The evaluator from the shell: its options, its run and its report, shared by both commands.

``python -m evaluation`` (:mod:`evaluation.__main__`) starts with the import limits alone
(:mod:`core.limits`): scoring files needs neither the database nor the site's apps, and
``manage.py evaluate`` (the same options, the same report, the same JSON) pays for Django's
whole start first. ``--judge`` needs the site's settings (the judge's endpoint, the LLM limits),
so there both read them.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .scoring import evaluate_files

JUDGE_UNSET = "--judge: set WAYPOINT_JUDGE_URL to an OpenAI-compatible API"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--benchmark", required=True, help="An androtmem export: folder, .zip or .jsonl."
    )
    parser.add_argument("--predictions", required=True, help="Predictions, one step a line.")
    parser.add_argument("--split", help="Only this split of the export (default: all).")
    parser.add_argument("--json", help="Also write the whole result to this JSON file.")
    parser.add_argument(
        "--judge",
        action="store_true",
        help="Also grade memory with an LLM through the OpenAI-compatible endpoint of "
        "WAYPOINT_JUDGE_URL (model WAYPOINT_JUDGE_MODEL, key WAYPOINT_JUDGE_API_KEY).",
    )


class JudgeUnset(Exception):
    """--judge without an endpoint to ask."""


def run(options: dict[str, Any], write: Callable[[str], Any]) -> dict[str, Any]:
    """Score the files the options name, write the report a line at a time, and the JSON when
    asked; :class:`~trajectories.invalid.InvalidData` says what is wrong with a file."""
    judge = None
    if options.get("judge"):
        from django.conf import settings

        from .judge import Judge

        if not settings.WAYPOINT_JUDGE_URL:
            raise JudgeUnset(JUDGE_UNSET)
        judge = Judge(
            settings.WAYPOINT_JUDGE_URL,
            settings.WAYPOINT_JUDGE_MODEL,
            settings.WAYPOINT_JUDGE_API_KEY,
        )
    result = evaluate_files(
        options["benchmark"], options["predictions"], options.get("split"), judge
    )
    for line in report_lines(result):
        write(line)
    if options.get("json"):
        Path(options["json"]).write_text(json.dumps(result, indent=1) + "\n")
    return result


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


def report_lines(result: dict[str, Any]) -> list[str]:
    """The report both commands print."""
    out = [
        f"tasks evaluated: {result['tasks']}, steps: {result['steps']}",
        f"AMS: {result['ams']:.4f}",
        f"TCR: {_percent(result['tcr'])} ({result['tcr_success']} tasks)",
    ]
    memory = result["memory"]
    if memory["tasks"]:
        out.append(
            f"M-Acc (rules): {_percent(memory['m_acc'])} over {memory['tasks']} tasks "
            f"({memory['complete']} complete, {memory['partial']} partial, "
            f"{memory['none']} no match of {memory['targets']} targets)"
        )
    if memory["m_acc_judge"] is not None:
        out.append(
            f"M-Acc (judge): {_percent(memory['m_acc_judge'])} over "
            f"{memory['judged_tasks']} judged tasks"
        )
    answers = result["answers"]
    if answers["tasks"]:
        out.append(
            f"task success: {_percent(answers['success_rate'])} "
            f"({answers['correct']} of {answers['tasks']} gold answers)"
        )
    passing = result["pass_at_k"]
    if passing["attempts"] > passing["templates"]:  # some template was tried at several seeds
        rates = [
            f"pass@{p['k']} {_percent(p['pass'])} ({p['templates']} templates)"
            for p in passing["by_k"]
        ]
        out.append(f"over seeds: {', '.join(rates)}")
    if result["judge"]:
        judged = result["judge"]
        out.append(
            f"judge {judged['model']} ({judged['prompt']}): asked {judged['asked']}, "
            f"failed {judged['failed']}"
        )
        out.extend(f"  {error}" for error in judged["errors"])
    if result["credited_steps"]:
        out.append(f"steps credited as correct (image missing): {result['credited_steps']}")
    malformed = result["malformed"]
    out.append(f"malformed prediction lines: {malformed['count']}")
    out.extend(f"  line {entry['line']}: {entry['reason']}" for entry in malformed["lines"])
    if result["unknown_tasks"]["count"]:
        out.append(
            f"predictions for tasks not in the benchmark: {result['unknown_tasks']['count']}"
        )
    for title, key in (("intent", "by_intent"), ("length", "by_length"), ("app", "by_app")):
        out.append(f"\nby {title}:")
        for name, group in result[key].items():
            out.append(
                f"  {name:<24} tasks {group['tasks']:>5}  AMS {group['ams']:.4f}  "
                f"TCR {_percent(group['tcr'])}"
            )
    return out
