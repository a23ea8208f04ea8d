"""load_json reads with orjson where it is faster, and gives exactly what ``json`` gives: the
same values (a 30-digit integer stays an int), the same refusals and the same messages."""

from __future__ import annotations

import json

import pytest

from trajectories.bounds import MAX_JSON_DEPTH, load_json
from trajectories.validation import InvalidData

SAME_AS_JSON = [
    '{"a": 1, "a": 2}',  # the last of a repeated key
    "123456789012345678901234567890",  # past 64 bits: orjson would read a float
    "-9223372036854775809",
    "[18446744073709551615, 1e-05, 1E2, -0, 0.1e-400]",
    "NaN",  # json reads it; orjson refuses it
    "[Infinity, -Infinity]",
    "1e400",  # inf for json; orjson refuses it
    '"\\ud800"',  # a lone surrogate escape
    '{"s": "caf\\u00e9 \\u2028", "t": "naïve"}',
    "  [1, 2]  \n",
]


@pytest.mark.parametrize("text", SAME_AS_JSON)
def test_values_are_what_json_reads(text):
    for raw in (text, text.encode()):
        value = load_json(raw, "x")
        expected = json.loads(raw)
        assert json.dumps(value) == json.dumps(expected)
        assert type(value) is type(expected)


@pytest.mark.parametrize("text", ["{oops", "[1,]", '{"a": 1} x', "", "\ufeff[1]", '"\x00"'])
def test_syntax_errors_are_jsons_with_its_message(text):
    with pytest.raises(json.JSONDecodeError) as ours:
        load_json(text, "x")
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    assert (ours.value.msg, ours.value.pos) == (theirs.value.msg, theirs.value.pos)


def test_nesting_is_refused_past_the_limit_and_read_up_to_it():
    deep = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert load_json(deep, "x") == json.loads(deep)
    too_deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    with pytest.raises(InvalidData, match="x: invalid JSON: nested too deeply"):
        load_json(too_deep, "x")
    with pytest.raises(InvalidData, match="x: invalid JSON: nested too deeply"):
        load_json("[" * 100_000, "x")
    # Brackets inside strings do not count as nesting.
    assert load_json(json.dumps(["[" * 500]), "x") == ["[" * 500]


def test_a_parse_constant_still_sees_nan():
    def refuse(name):
        raise ValueError(f"{name} is not a number")

    with pytest.raises(ValueError, match="NaN is not a number"):
        load_json('{"x": NaN}', "body", parse_constant=refuse)
    assert load_json('{"x": 1.5}', "body", parse_constant=refuse) == {"x": 1.5}
