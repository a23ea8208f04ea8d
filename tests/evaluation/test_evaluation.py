"""The evaluator: AMS, TCR, M-Acc and task success worked out by hand on crafted predictions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from evaluation.scoring import evaluate_files
from formats.catalogue import export_trajectories
from tests.trajectories.builders import make_record
from trajectories.models import Trajectory
from trajectories.services import do_import_trajectory
from trajectories.validation import InvalidData

STAMP = Path(__file__).resolve().parents[2].parent / "shared" / "papers" / "stamp-memory-world.txt"

TASKS = [
    {
        "task_id": "T1",
        "primary_intent": "Lookup",
        "apps": ["com.a"],
        "gold_answer": "Done",
        "grading_rule": "iexact",  # the perfect answers say "done " and "DONE"
        "memory_targets": [
            {"key": "price", "value": "1234.5", "encode_step": 0},
            {"key": "item", "value": "Blue Shirt", "encode_step": 1},
        ],
        "steps": [
            {
                "step_index": 0,
                "width": 300,
                "height": 500,
                "actionForm": {"action": "tap", "bbox": [100, 200, 200, 300]},
                "extra_info": {"status": [{"id": "a1", "content": "price"}], "links": []},
            },
            {
                "step_index": 1,
                "actionForm": {"action": "text", "value": "Hello World"},
                "extra_info": {"status": [], "links": []},
            },
            {
                "step_index": 2,
                "actionForm": {"action": "finish", "value": "Done"},
                "extra_info": {
                    "status": [{"id": "a2", "content": "finish: done"}],
                    "links": [{"source": "a1", "type": "enables", "is_critical": True}],
                },
            },
        ],
    },
    {
        "task_id": "T2",
        "primary_intent": "Booking",
        "apps": ["com.b"],
        "steps": [
            {"step_index": 0, "actionForm": {"action": "swipe", "direction": "up"}},
            {
                "step_index": 1,
                "actionForm": {"action": "back"},
                "extra_info": {
                    "status": [{"id": "b1", "content": "Finish"}],
                    "links": [{"source": "ghost", "type": "prerequisite", "is_critical": True}],
                },
            },
        ],
    },
]


def act(task, step, action, **fields):
    return {
        "task_id": task,
        "step_index": step,
        "prediction": {"action": {"action": action, **fields}},
    }


PERFECT = [
    act("T1", 0, "tap", x=150, y=250),
    act("T1", 1, "type", value="  hello WORLD "),
    act("T1", 2, "terminate", value="done "),
    act("T2", 0, "swipe", direction="up"),
    act("T2", 1, "back"),
]
WRONG = [
    act("T1", 0, "tap", x=0, y=0),
    act("T1", 1, "text", value="bye"),
    act("T1", 2, "wait"),
    act("T2", 0, "swipe", direction="down"),
    act("T2", 1, "home"),
]


@pytest.fixture
def benchmark(tmp_path) -> Path:
    path = tmp_path / "gt.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in TASKS))
    return path


def score(tmp_path, benchmark, lines) -> dict:
    path = tmp_path / "pred.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return evaluate_files(benchmark, path)


def test_perfect_predictions(tmp_path, benchmark):
    result = score(tmp_path, benchmark, PERFECT)
    assert (result["tasks"], result["steps"], result["ams"]) == (2, 5, 1.0)
    # T2's final step depends on a link source that names no step: it can never complete.
    assert (result["tcr"], result["tcr_success"], result["missing_link_sources"]) == (0.5, 1, 1)
    assert result["answers"] == {"tasks": 1, "correct": 1, "success_rate": 1.0}
    assert result["by_intent"]["Lookup"] == {
        "tasks": 1,
        "steps": 3,
        "ams": 1.0,
        "tcr": 1.0,
        "tcr_success": 1,
    }
    assert result["by_intent"]["Booking"]["tcr"] == 0.0
    assert list(result["by_length"]) == ["0-9"]
    assert set(result["by_app"]) == {"com.a", "com.b"}
    assert result["malformed"] == {"count": 0, "lines": []}


def test_all_wrong_predictions(tmp_path, benchmark):
    result = score(tmp_path, benchmark, WRONG)
    assert (result["ams"], result["tcr"]) == (0.0, 0.0)
    assert result["answers"]["correct"] == 0
    # No memory predicted at all: both targets are no match, and the task's g is 0.
    assert result["memory"] == {
        "targets": 2,
        "complete": 0,
        "partial": 0,
        "none": 2,
        "tasks": 1,
        "m_acc": 0.0,
        "judged_tasks": 0,
        "m_acc_judge": None,
    }


def test_results_are_broken_down_by_length_bucket_of_ten_steps_in_order(tmp_path):
    tasks = [
        {
            "task_id": f"L{length}",
            "primary_intent": "Lookup",
            "apps": ["com.a", "com.b"] if length == 9 else ["com.b"],
            "steps": [{"step_index": i, "actionForm": {"action": "wait"}} for i in range(length)],
        }
        for length in (9, 10, 25, 100)
    ]
    path = tmp_path / "gt.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    # Every step of L9 and L25 right, the first of L10, none of L100.
    lines = [act("L9", i, "wait") for i in range(9)] + [act("L25", i, "wait") for i in range(25)]
    lines += [act("L10", 0, "wait"), act("L100", 0, "back")]
    result = score(tmp_path, path, lines)
    assert {
        name: (g["tasks"], g["steps"], g["ams"]) for name, g in result["by_length"].items()
    } == {
        "0-9": (1, 9, 1.0),
        "10-19": (1, 10, 0.1),
        "20-29": (1, 25, 1.0),
        "100-109": (1, 100, 0.0),
    }
    assert list(result["by_length"]) == ["0-9", "10-19", "20-29", "100-109"]
    assert {name: g["tasks"] for name, g in result["by_app"].items()} == {"com.a": 1, "com.b": 4}
    assert result["by_intent"]["Lookup"]["steps"] == 144


@pytest.mark.parametrize(
    ("x", "y", "scores"),
    [
        (86, 186, True),  # the corner of the box enlarged by 14 px (14% of 100) on each side
        (214, 314, True),
        (85.9, 250, False),
        (150, 314.1, False),
    ],
)
def test_a_tap_matches_inside_the_bbox_enlarged_by_14_percent(tmp_path, benchmark, x, y, scores):
    result = score(tmp_path, benchmark, [act("T1", 0, "click", x=x, y=y)])
    assert result["ams"] == pytest.approx((1 if scores else 0) / 3, abs=1e-6)


def test_a_broken_critical_chain_fails_the_task_but_not_a_step_outside_it(tmp_path, benchmark):
    broken = [act("T1", 0, "tap", x=0, y=0), PERFECT[1], PERFECT[2]]
    result = score(tmp_path, benchmark, broken)
    assert (result["ams"], result["tcr"]) == (pytest.approx(2 / 3, abs=1e-6), 0.0)
    outside = [PERFECT[0], act("T1", 1, "text", value="nope"), PERFECT[2]]
    result = score(tmp_path, benchmark, outside)
    assert (result["ams"], result["tcr"]) == (pytest.approx(2 / 3, abs=1e-6), 1.0)


def test_gui_owl_raw_output_is_parsed_and_memory_scored(tmp_path, benchmark):
    raw = (
        "<think>the price is there</think>\nAction: Tap the item\nMemory: Price  1,234.50 EUR\n"
        '<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", '
        '"coordinate": [500, 500]}}\n</tool_call>'
    )
    typed = (
        "Action: Type\nMemory: shirt\n<tool_call>\n"
        '{"name": "mobile_use", "arguments": {"action": "type", "text": "Hello world"}}'
        "\n</tool_call>"
    )
    answer = (
        'Action: Answer\nMemory: none\n<tool_call>\n{"name": "mobile_use", "arguments": '
        '{"action": "answer", "text": "DONE"}}\n</tool_call>'
    )
    lines = [
        {"task_id": "T1", "step_index": 0, "output": raw},  # (150, 250) on 300x500
        {"task_id": "T1", "step_index": 1, "output": typed},
        {"task_id": "T1", "step_index": 2, "output": answer},
    ]
    result = score(tmp_path, benchmark, lines)
    assert (result["tasks"], result["ams"], result["tcr"]) == (1, 1.0, 1.0)
    # The price is there, the item only in part ("shirt"): the task's memory is partial, g 0.5.
    assert result["memory"] == {
        "targets": 2,
        "complete": 1,
        "partial": 1,
        "none": 0,
        "tasks": 1,
        "m_acc": 0.5,
        "judged_tasks": 0,
        "m_acc_judge": None,
    }
    assert result["answers"]["correct"] == 1


def test_malformed_lines_are_counted_and_reported_never_fatal(tmp_path, benchmark):
    lines = [
        "not json",
        {"step_index": 0},
        {"task_id": "T1", "step_index": 1, "output": "Action: type hello"},
        {"task_id": "T1", "step_index": 2, "output": "<tool_call>{oops</tool_call>"},
        PERFECT[0],
    ]
    result = score(tmp_path, benchmark, lines)
    assert result["malformed"] == {
        "count": 4,
        "lines": [
            {"line": 1, "reason": "invalid JSON (Expecting value)"},
            {"line": 2, "reason": "no task_id and step_index"},
            {"line": 3, "reason": "no <tool_call> block"},
            {
                "line": 4,
                "reason": "the <tool_call> is not JSON "
                "(Expecting property name enclosed in double quotes)",
            },
        ],
    }
    assert (result["tasks"], result["ams"]) == (1, pytest.approx(1 / 3, abs=1e-6))


@pytest.mark.django_db
def test_the_command_scores_an_androtmem_export(project, tmp_path, capsys):
    do_import_trajectory(project, make_record(steps=3, seed=1))
    out = tmp_path / "bench"
    export_trajectories(Trajectory.objects.filter(project=project), out, "androtmem")
    [task] = [json.loads(line) for line in (out / "test.jsonl").read_text().splitlines()]
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        "".join(json.dumps(act(task["task_id"], i, "tap", x=60, y=120)) + "\n" for i in range(3))
        + "garbage\n"
    )
    call_command(
        "evaluate", benchmark=str(out), predictions=str(predictions), json=str(tmp_path / "r.json")
    )
    printed = capsys.readouterr().out
    assert "tasks evaluated: 1, steps: 3" in printed
    assert "AMS: 1.0000" in printed
    assert "TCR: 100.00% (1 tasks)" in printed
    assert "malformed prediction lines: 1" in printed
    assert "Purchase / Order" in printed
    assert json.loads((tmp_path / "r.json").read_text())["ams"] == 1.0


@pytest.mark.django_db
def test_the_command_refuses_what_is_not_a_benchmark(project, tmp_path):
    do_import_trajectory(project, make_record(steps=1, seed=2))
    out = tmp_path / "native"
    export_trajectories(Trajectory.objects.filter(project=project), out, "waypoint")
    (tmp_path / "p.jsonl").write_text("")
    with pytest.raises(CommandError, match="a 'waypoint' export is not a benchmark"):
        call_command("evaluate", benchmark=str(out), predictions=str(tmp_path / "p.jsonl"))
    with pytest.raises(CommandError, match="no such file or folder"):
        call_command("evaluate", benchmark=str(tmp_path / "nope"), predictions="x")


@pytest.mark.django_db
def test_members_score_predictions_through_the_api(
    project, alice, bob, charlie, django_capture_on_commit_callbacks
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    from formats.jobs import do_start_export
    from trajectories.jobs import run_job

    do_import_trajectory(project, make_record(steps=2, seed=3))
    with django_capture_on_commit_callbacks(execute=False):
        job = do_start_export(project, "androtmem", alice)
    run_job(job.pk)
    task_id = str(Trajectory.objects.get().uid)
    body = (json.dumps(act(task_id, 0, "tap", x=60, y=120)) + "\n" + "{broken\n").encode()
    url = f"/api/v1/projects/{project.pk}/evaluations/"
    for user, expected in ((alice, 200), (bob, 200), (charlie, 404)):
        client = APIClient()
        client.force_authenticate(user)
        upload = SimpleUploadedFile("pred.jsonl", body)
        response = client.post(url, {"export_job": job.pk, "predictions": upload})
        assert response.status_code == expected
    client = APIClient()
    client.force_authenticate(bob)
    response = client.post(
        url, {"export_job": job.pk, "predictions": SimpleUploadedFile("p.jsonl", body)}
    )
    result = response.json()
    assert (result["tasks"], result["steps"], result["ams"]) == (1, 2, 0.5)
    assert result["malformed"]["count"] == 1
    assert result["benchmark"] == {"export_job": job.pk, "split": None, "tasks": 1}
    response = client.post(
        url, {"export_job": 999, "predictions": SimpleUploadedFile("p.jsonl", body)}
    )
    assert response.status_code == 422  # well-formed, but no such export: a broken rule
    assert response.json() == {
        "detail": "export_job: 999 is not a succeeded androtmem export of this project"
    }


class _ChatServer:
    """A real HTTP server answering /chat/completions with canned replies, one per request."""

    def __init__(self, replies: list[str]):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.replies = list(replies)
        self.prompts: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.prompts.append(body["messages"][0]["content"])
                reply = server.replies.pop(0)
                if reply == "500":
                    self.send_response(500)
                    self.end_headers()
                    return
                data = json.dumps({"choices": [{"message": {"content": reply}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def judged_with(settings, tmp_path, benchmark, answers: list[str]) -> tuple[dict, list[str]]:
    """Score T1's memory (a price of "1.2k", an item of "a shirt") with a judge answering
    ``answers``; the result and the prompts it was sent."""
    lines = [
        {
            "task_id": "T1",
            "step_index": 0,
            "prediction": {"action": {"action": "tap", "x": 150, "y": 250}, "memory": "1.2k"},
        },
        {
            "task_id": "T1",
            "step_index": 1,
            "prediction": {"action": {"action": "text", "value": "x"}, "memory": "a shirt"},
        },
    ]
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    server = _ChatServer(answers)
    try:
        settings.WAYPOINT_JUDGE_URL = server.url
        call_command(
            "evaluate",
            benchmark=str(benchmark),
            predictions=str(path),
            judge=True,
            json=str(tmp_path / "r.json"),
        )
    finally:
        server.close()
    return json.loads((tmp_path / "r.json").read_text()), server.prompts


def test_the_judge_grades_each_tasks_memory_with_stamps_prompt_apart_from_the_rules(
    tmp_path, benchmark, settings, capsys
):
    result, prompts = judged_with(settings, tmp_path, benchmark, ["Complete Match"])
    # The rules: the price is not there ("1.2k"), the item in part: the task is partial (0.5);
    # the judge, asked once for the task, says the memory matches (1): both are reported.
    memory = result["memory"]
    assert (memory["m_acc"], memory["m_acc_judge"], memory["judged_tasks"]) == (0.5, 1.0, 1)
    [prompt] = prompts
    assert "I have a task to perform using Chrome on my phone, as follows:\n" in prompt
    assert "as follows:\nprice: 1234.5\nitem: Blue Shirt\n" in prompt
    assert "memorized the following:\n1.2k\na shirt\n" in prompt
    out = capsys.readouterr().out
    assert "M-Acc (rules): 50.00% over 1 tasks" in out
    assert "M-Acc (judge): 100.00% over 1 judged tasks" in out


def test_a_judge_answer_that_is_no_verdict_leaves_the_task_unjudged(tmp_path, benchmark, settings):
    result, _ = judged_with(settings, tmp_path, benchmark, ["I am not sure"])
    assert (result["memory"]["m_acc"], result["memory"]["m_acc_judge"]) == (0.5, None)
    assert result["judge"] == {
        "model": "gpt-4o-mini",
        "prompt": "STAMP Table 17",
        "asked": 1,
        "failed": 1,
        "errors": [
            "T1: the judge answered 'I am not sure', not one of Complete / Partial / No Match"
        ],
    }


def test_the_judges_prompt_is_stamps_table_17_word_for_word():
    from evaluation.judge import PROMPT

    text = STAMP.read_text(encoding="utf-8")
    start = text.index("Memory-Acc Evaluation Prompt\n") + len("Memory-Acc Evaluation Prompt\n")
    paper = text[start : text.index("\n\nTable 17", start)]
    assert PROMPT.format(task="{}", reference="{}", memory="{}") == paper


def test_memory_written_a_step_late_still_counts(tmp_path, benchmark):
    """STAMP judges what the agent wrote from the encode step on, not the encode step alone."""
    lines = [
        act("T1", 0, "tap", x=150, y=250),
        {
            "task_id": "T1",
            "step_index": 1,
            "prediction": {
                "action": {"action": "text", "value": "hello world"},
                "memory": "price 1234.50; item Blue Shirt",
            },
        },
    ]
    result = score(tmp_path, benchmark, lines)
    assert (result["memory"]["complete"], result["memory"]["m_acc"]) == (2, 1.0)


def test_the_judge_needs_an_endpoint(tmp_path, benchmark, settings):
    settings.WAYPOINT_JUDGE_URL = ""
    (tmp_path / "p.jsonl").write_text("")
    with pytest.raises(CommandError, match="--judge: set WAYPOINT_JUDGE_URL"):
        call_command(
            "evaluate", benchmark=str(benchmark), predictions=str(tmp_path / "p.jsonl"), judge=True
        )


@pytest.mark.django_db
def test_replaying_the_sft_targets_scores_perfectly_on_the_benchmark(project, tmp_path):
    """The stamp-sft targets, read back as GUI-Owl output, are AndroTMem's truth."""
    from trajectories.records import StepRecord

    record = make_record(steps=6, seed=9)
    actions = [
        {"type": "click", "x": 60, "y": 120},
        {"type": "swipe", "x": 60, "y": 200, "x2": 65, "y2": 40},
        {"type": "type", "text": "Blue Shirt"},
        {"type": "open_app", "package": "com.example.shop", "app_label": "Shop"},
        {"type": "long_press", "x": 20, "y": 130, "duration_ms": 800},
        {"type": "answer", "text": "12.50"},
    ]
    targets = [None, None, None, None, record.steps[0].target, None]
    record.steps = [
        StepRecord(index=i, screen=i, action=a, target=targets[i], memory="m" if i == 0 else "")
        for i, a in enumerate(actions)
    ]
    record.steps[0].target = {"bounds": [10, 100, 110, 140]}
    do_import_trajectory(project, record)
    trajectories = Trajectory.objects.filter(project=project)
    export_trajectories(trajectories, tmp_path / "sft", "stamp-sft")
    export_trajectories(trajectories, tmp_path / "bench", "androtmem")
    samples = [json.loads(line) for line in (tmp_path / "sft" / "train.jsonl").open()]
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        "".join(
            json.dumps(
                {
                    "task_id": record.uid,
                    "step_index": i,
                    "output": sample["messages"][-1]["content"],
                }
            )
            + "\n"
            for i, sample in enumerate(samples)
        )
    )
    result = evaluate_files(tmp_path / "bench", predictions)
    assert (result["steps"], result["ams"], result["tcr"]) == (6, 1.0, 1.0)
    assert result["answers"]["correct"] == 1
    assert result["malformed"]["count"] == 0


@pytest.mark.django_db
def test_the_api_scores_against_an_uploaded_ground_truth_file(project, alice, benchmark):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(alice)
    url = f"/api/v1/projects/{project.pk}/evaluations/"
    body = "".join(json.dumps(line) + "\n" for line in PERFECT).encode()

    def post(**files):
        data = {"predictions": SimpleUploadedFile("p.jsonl", body), **files}
        return client.post(url, data)

    response = post(benchmark=SimpleUploadedFile("gt.jsonl", benchmark.read_bytes()))
    assert response.status_code == 200, response.json()
    result = response.json()
    assert (result["ams"], result["tcr"]) == (1.0, 0.5)
    assert result["benchmark"] == {"file": "gt.jsonl", "split": None, "tasks": 2}
    for files, message in (
        ({}, "benchmark: give either export_job or a benchmark file"),
        (
            {"benchmark": SimpleUploadedFile("gt.csv", b"a,b")},
            "benchmark: gt.csv is not a .zip, .jsonl or .json file",
        ),
        (
            {"benchmark": SimpleUploadedFile("gt.jsonl", b"{nope\n")},
            "gt.jsonl line 1: invalid JSON (Expecting property name enclosed in double quotes)",
        ),
    ):
        response = post(**files)
        assert response.status_code == 422
        assert response.json() == {"detail": message}


@pytest.mark.django_db
def test_the_answer_is_the_last_answer_not_the_terminate_after_it(project, tmp_path):
    """A recording ends with an answer step then a terminate step; the terminate's status
    ("success") is not the agent's answer."""
    from trajectories.records import StepRecord

    record = make_record(steps=3, seed=12)
    record.steps[1] = StepRecord(index=1, screen=1, action={"type": "answer", "text": "12.50"})
    record.steps[2] = StepRecord(
        index=2, screen=2, action={"type": "terminate", "status": "success"}
    )
    do_import_trajectory(project, record)
    trajectories = Trajectory.objects.filter(project=project)
    export_trajectories(trajectories, tmp_path / "sft", "stamp-sft")
    export_trajectories(trajectories, tmp_path / "bench", "androtmem")
    samples = [json.loads(line) for line in (tmp_path / "sft" / "train.jsonl").open()]
    raw = [
        {"task_id": record.uid, "step_index": i, "output": sample["messages"][-1]["content"]}
        for i, sample in enumerate(samples)
    ]
    layout = [
        act(record.uid, 0, "tap", x=60, y=120),
        act(record.uid, 1, "finish", value="12.50"),
        act(record.uid, 2, "terminate", value="success"),
    ]
    wrong = [*layout[:1], act(record.uid, 1, "finish", value="13"), layout[2]]
    # The export's own layout writes the terminate as a finish too: "success" is its status.
    replayed = [*layout[:2], act(record.uid, 2, "finish", value="success")]
    for lines, correct in ((raw, 1), (layout, 1), (wrong, 0), (replayed, 1)):
        path = tmp_path / "pred.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        result = evaluate_files(tmp_path / "bench", path)
        # A finish matches by type alone (AndroTMem): a wrong answer is a matched step.
        assert (result["ams"], result["tcr"]) == (1.0, 1.0)
        assert result["answers"] == {"tasks": 1, "correct": correct, "success_rate": correct}


def test_a_tool_call_with_a_coordinate_that_is_no_number_is_a_malformed_line(tmp_path, benchmark):
    def click(coordinate) -> dict:
        call = {"name": "mobile_use", "arguments": {"action": "click", "coordinate": coordinate}}
        return {
            "task_id": "T1",
            "step_index": 0,
            "output": f"<tool_call>{json.dumps(call)}</tool_call>",
        }

    lines = [click([None, 5]), click([{"x": 1}, 2]), click("500,500"), click(["5O0", 500])]
    result = score(tmp_path, benchmark, lines)
    assert result["malformed"]["count"] == 4
    assert {entry["reason"] for entry in result["malformed"]["lines"]} == {
        "coordinate must be [x, y] numbers"
    }
    assert (result["tasks"], result["ams"]) == (1, 0.0)


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ({"steps": "abc"}, "gt.jsonl line 1: steps: must be a list"),
        ({"steps": [1]}, "gt.jsonl line 1: steps[0]: must be an object"),
        ({"steps": [{"actionForm": {}}]}, "gt.jsonl line 1: steps[0]: no step_index"),
        (
            {"steps": [{"step_index": 0, "actionForm": "tap"}]},
            "gt.jsonl line 1: steps[0].actionForm: must be an object",
        ),
        (
            {"steps": [{"step_index": 0, "actionForm": {"action": "tap", "bbox": 5}}]},
            "gt.jsonl line 1: steps[0].actionForm.bbox: must be [x_min, y_min, x_max, y_max]",
        ),
        (
            {"steps": [{"step_index": 0, "width": "wide"}]},
            "gt.jsonl line 1: steps[0].width: must be a positive integer",
        ),
        (
            {"steps": [{"step_index": 0, "extra_info": {"links": ["x"]}}]},
            "gt.jsonl line 1: steps[0].extra_info.links[0]: must be an object",
        ),
        (
            {"steps": [{"step_index": 0, "extra_info": {"status": "x"}}]},
            "gt.jsonl line 1: steps[0].extra_info.status: must be a list",
        ),
        (
            {"steps": [{"step_index": 0, "links": [{"source": ["a"]}]}]},
            "gt.jsonl line 1: steps[0].links[0].source: must be a string or a number",
        ),
        ({"steps": [], "memory_targets": "x"}, "gt.jsonl line 1: memory_targets: must be a list"),
        (
            {"steps": [], "memory_targets": [3]},
            "gt.jsonl line 1: memory_targets[0]: must be an object",
        ),
        (
            {"steps": [], "primary_intent": ["a"]},
            "gt.jsonl line 1: primary_intent: must be a string",
        ),
        ({"steps": [], "apps": "com.a"}, "gt.jsonl line 1: apps: must be a list of strings"),
        ({"steps": [], "gold_answer": 5}, "gt.jsonl line 1: gold_answer: must be a string"),
        (
            {"steps": [], "gold_answer": "5", "grading_rule": "fuzzy"},
            "gt.jsonl line 1: grading_rule: unknown grading rule 'fuzzy' "
            "(known: exact, iexact, contains, number, regex)",
        ),
    ],
)
def test_a_benchmark_that_is_not_androtmem_records_is_refused_by_place(tmp_path, task, message):
    path = tmp_path / "gt.jsonl"
    path.write_text(json.dumps({"task_id": "T", **task}) + "\n")
    (tmp_path / "p.jsonl").write_text("")
    with pytest.raises(InvalidData) as refused:
        evaluate_files(path, tmp_path / "p.jsonl")
    assert str(refused.value) == message


def test_steps_credited_as_correct_score_one_and_are_reported_apart(tmp_path, benchmark, capsys):
    """AndroTMem's inference credits a step whose image was missing; its scorer counts it."""
    lines = [
        {"task_id": "T1", "step_index": 0, "credited_as_correct": True},
        {
            "task_id": "T1",
            "step_index": 1,
            "prediction": {"action": {}},
            "credited_as_correct": True,
        },
        PERFECT[2],
        {"task_id": "T2", "step_index": 0, "prediction": {"action": {}}},
    ]
    result = score(tmp_path, benchmark, lines)
    assert (result["steps"], result["ams"], result["tcr"]) == (5, 0.6, 0.5)
    assert result["credited_steps"] == 2
    call_command("evaluate", benchmark=str(benchmark), predictions=str(tmp_path / "pred.jsonl"))
    assert "steps credited as correct (image missing): 2" in capsys.readouterr().out
