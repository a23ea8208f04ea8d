"""The evaluator takes whatever a model wrote: any line scores or is counted malformed, never
crashes the run (Hypothesis writes the lines)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.scoring import evaluate_files

TASKS = [
    {
        "task_id": "T1",
        "steps": [
            {
                "step_index": 0,
                "width": 300,
                "height": 500,
                "actionForm": {"action": "tap", "bbox": [100, 200, 200, 300]},
            },
            {"step_index": 1, "actionForm": {"action": "swipe", "direction": "up"}},
            {"step_index": 2, "actionForm": {"action": "finish", "value": "Done"}},
        ],
    }
]

numbers = st.one_of(
    st.integers(min_value=-(10**500), max_value=10**500),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.none(),
    st.booleans(),
)
json_values = st.recursive(
    st.one_of(numbers, st.text(max_size=20)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
actions = st.fixed_dictionaries(
    {},
    optional={
        "action": st.one_of(
            st.sampled_from(["tap", "click", "swipe", "text", "finish", "terminate", "answer"]),
            json_values,
        ),
        "x": numbers,
        "y": numbers,
        "value": json_values,
        "direction": json_values,
    },
)
lines = st.one_of(
    st.builds(
        lambda step, action: {
            "task_id": "T1",
            "step_index": step,
            "prediction": {"action": action},
        },
        st.one_of(st.integers(-2, 4), json_values),
        actions,
    ),
    st.builds(
        lambda step, args: {
            "task_id": "T1",
            "step_index": step,
            "output": "Action: x\n<tool_call>"
            + json.dumps({"name": "mobile_use", "arguments": args})
            + "</tool_call>",
        },
        st.integers(0, 2),
        st.dictionaries(
            st.sampled_from(["action", "coordinate", "coordinate2", "text", "status", "button"]),
            json_values,
        ),
    ),
    json_values,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.one_of(lines.map(json.dumps), st.text(max_size=30)), max_size=6))
def test_any_prediction_lines_score_or_are_counted_malformed(tmp_path, written):
    benchmark = tmp_path / "gt.jsonl"
    benchmark.write_text(json.dumps(TASKS[0]) + "\n")
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text("".join(line.replace("\n", " ") + "\n" for line in written))
    result = evaluate_files(benchmark, predictions)
    assert result["steps"] in (0, 3)  # a task is scored once any of its steps is predicted
    assert 0.0 <= result["ams"] <= 1.0
    assert result["tcr"] in (0.0, 1.0)


def test_a_point_too_large_for_a_float_scores_zero(tmp_path):
    benchmark = tmp_path / "gt.jsonl"
    benchmark.write_text(json.dumps(TASKS[0]) + "\n")
    predictions = tmp_path / "pred.jsonl"
    line = {
        "task_id": "T1",
        "step_index": 0,
        "prediction": {"action": {"action": "tap", "x": 10**400, "y": 5}},
    }
    predictions.write_text(json.dumps(line) + "\n")
    result = evaluate_files(benchmark, predictions)
    assert (result["ams"], result["malformed"]["count"]) == (0.0, 0)
