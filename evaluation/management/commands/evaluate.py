import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from evaluation.judge import Judge
from evaluation.scoring import evaluate_files
from trajectories.validation import InvalidData


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.2f}%"


class Command(BaseCommand):
    help = (
        "Score an agent's predictions against a benchmark export (AMS and TCR with AndroTMem's "
        "rules, M-Acc, task success), by intent, length and app."
    )

    def add_arguments(self, parser):
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

    def handle(self, *args, **options):
        judge = None
        if options["judge"]:
            if not settings.WAYPOINT_JUDGE_URL:
                raise CommandError("--judge: set WAYPOINT_JUDGE_URL to an OpenAI-compatible API")
            judge = Judge(
                settings.WAYPOINT_JUDGE_URL,
                settings.WAYPOINT_JUDGE_MODEL,
                settings.WAYPOINT_JUDGE_API_KEY,
            )
        try:
            result = evaluate_files(
                options["benchmark"], options["predictions"], options["split"], judge
            )
        except InvalidData as exc:
            raise CommandError(str(exc)) from None
        out = self.stdout
        out.write(f"tasks evaluated: {result['tasks']}, steps: {result['steps']}")
        out.write(f"AMS: {result['ams']:.4f}")
        out.write(f"TCR: {_percent(result['tcr'])} ({result['tcr_success']} tasks)")
        memory = result["memory"]
        if memory["tasks"]:
            out.write(
                f"M-Acc (rules): {_percent(memory['m_acc'])} over {memory['tasks']} tasks "
                f"({memory['complete']} complete, {memory['partial']} partial, "
                f"{memory['none']} no match of {memory['targets']} targets)"
            )
        if memory["m_acc_judge"] is not None:
            out.write(
                f"M-Acc (judge): {_percent(memory['m_acc_judge'])} over "
                f"{memory['judged_tasks']} judged tasks"
            )
        answers = result["answers"]
        if answers["tasks"]:
            out.write(
                f"task success: {_percent(answers['success_rate'])} "
                f"({answers['correct']} of {answers['tasks']} gold answers)"
            )
        passing = result["pass_at_k"]
        if passing["attempts"] > passing["templates"]:  # some template was tried at several seeds
            rates = [
                f"pass@{p['k']} {_percent(p['pass'])} ({p['templates']} templates)"
                for p in passing["by_k"]
            ]
            out.write(f"over seeds: {', '.join(rates)}")
        if result["judge"]:
            judged = result["judge"]
            out.write(
                f"judge {judged['model']} ({judged['prompt']}): asked {judged['asked']}, "
                f"failed {judged['failed']}"
            )
            for error in judged["errors"]:
                out.write(f"  {error}")
        if result["credited_steps"]:
            out.write(f"steps credited as correct (image missing): {result['credited_steps']}")
        malformed = result["malformed"]
        out.write(f"malformed prediction lines: {malformed['count']}")
        for entry in malformed["lines"]:
            out.write(f"  line {entry['line']}: {entry['reason']}")
        if result["unknown_tasks"]["count"]:
            out.write(
                f"predictions for tasks not in the benchmark: {result['unknown_tasks']['count']}"
            )
        for title, key in (("intent", "by_intent"), ("length", "by_length"), ("app", "by_app")):
            out.write(f"\nby {title}:")
            for name, group in result[key].items():
                out.write(
                    f"  {name:<24} tasks {group['tasks']:>5}  AMS {group['ams']:.4f}  "
                    f"TCR {_percent(group['tcr'])}"
                )
        if options["json"]:
            Path(options["json"]).write_text(json.dumps(result, indent=1) + "\n")
