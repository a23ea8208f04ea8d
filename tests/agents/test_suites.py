"""Benchmark suites: a named, versioned list of instances (template + seed) made from the
virtual device's templates, exported and imported so that two labs run the same benchmark."""

from __future__ import annotations

import copy
import hashlib
import io
import json

import pytest
from django.core.management import CommandError, call_command

from agents.suites import MAX_SEED, check_suite, make_suite, parse_seeds
from devices.virtual.apps import all_templates, load_apps
from tests.agents.episodes import instance
from trajectories.validation import InvalidData

WEATHER = [t.id for t in all_templates() if t.apps == ("weather",)]


@pytest.fixture(scope="module")
def suite() -> dict:
    return make_suite("memory-mini", "2", [*WEATHER, "bank-pay-invoice"], [1, 2, 3])


def test_a_suite_lists_every_template_at_every_seed(suite):
    assert (suite["format"], suite["schema_version"]) == ("waypoint-suite", 1)
    assert (suite["name"], suite["version"]) == ("memory-mini", "2")
    pairs = [(i["template"], i["seed"]) for i in suite["instances"]]
    assert pairs == [(t, s) for t in [*WEATHER, "bank-pay-invoice"] for s in (1, 2, 3)]
    assert suite["apps"] == {
        "bank": {"label": "Ledger", "version": "11.3.2"},
        "mail": {"label": "Mailbox", "version": "6.21.0"},
        "weather": {"label": "SkyCast", "version": "5.3.1"},
    }
    pay = next(t for t in suite["templates"] if t["id"] == "bank-pay-invoice")
    assert pay == {
        "id": "bank-pay-invoice",
        "apps": ["mail", "bank"],
        "rule": "exact",
        "memory": {"what": "code", "distance": "cross_app", "use": "type"},
        "intent": "Purchase / Order",
    }
    assert json.loads(json.dumps(suite)) == suite
    assert make_suite("memory-mini", "2", [*WEATHER, "bank-pay-invoice"], [1, 2, 3]) == suite


def test_an_instance_carries_its_instruction_and_a_digest_of_its_gold_not_the_gold(suite):
    task = load_apps(2).task("bank-pay-invoice")
    item = next(
        i for i in suite["instances"] if (i["template"], i["seed"]) == ("bank-pay-invoice", 2)
    )
    assert item == {
        "template": "bank-pay-invoice",
        "seed": 2,
        "level": 3,
        "instruction": task.instruction,
        "rule": "exact",
        "gold_sha256": hashlib.sha256(task.gold.encode()).hexdigest(),
    }
    assert task.gold not in json.dumps(suite)


def test_the_device_poses_each_instance_of_the_suite_at_its_seed(device, suite):
    for item in suite["instances"][:: len(WEATHER)]:
        device.shell(["waypoint", "reset", "--seed", str(item["seed"])])
        posed = instance(device, item["template"])
        assert posed["instruction"] == item["instruction"]
        assert hashlib.sha256(posed["gold"].encode()).hexdigest() == item["gold_sha256"]


def test_an_exported_suite_imports_as_it_was(suite):
    exported = json.dumps(suite, indent=1)
    assert check_suite(json.loads(exported)) == suite


def broken(suite: dict, change) -> dict:
    document = copy.deepcopy(suite)
    change(document)
    return document


def set_instance(i: int, **fields):
    return lambda d: d["instances"][i].update(fields)


BROKEN = [
    (lambda d: d.update(format="waypoint"),
     "format: must be 'waypoint-suite', got 'waypoint' (is this a suite made by make_suite?)"),
    (lambda d: d.update(schema_version=2),
     "schema_version: this Waypoint reads suites of version 1, got 2"),
    (lambda d: d.update(name="my suite"),
     "name: must be 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit, "
     "got 'my suite'"),
    (lambda d: d.pop("version"),
     "version: must be 1 to 40 letters, digits, '.', '_' or '-', starting with a letter or "
     "digit, got None"),
    (lambda d: d["apps"]["weather"].update(version="5.4.0"),
     "apps.weather: the suite was made with SkyCast 5.4.0; this Waypoint has 5.3.1, whose data "
     "may differ"),
    (lambda d: d["apps"].update(tiktok={"version": "1"}),
     "apps.tiktok: this Waypoint's virtual device has no app 'tiktok'"),
    (lambda d: d["apps"].pop("mail"),
     "instances[21].template: bank-pay-invoice uses mail, not in apps"),
    (lambda d: d.update(instances=[]), "instances: must be a non-empty list"),
    (set_instance(4, template="weather-forecast"),
     "instances[4].template: unknown template 'weather-forecast'"),
    (set_instance(4, seed=-1), f"instances[4].seed: must be a whole number from 0 to {MAX_SEED}, "
     "got -1"),
    (set_instance(4, seed="2"), f"instances[4].seed: must be a whole number from 0 to {MAX_SEED}, "
     "got '2'"),
    (set_instance(4, seed=True), f"instances[4].seed: must be a whole number from 0 to "
     f"{MAX_SEED}, got True"),
    (set_instance(4, seed=1), "instances[4]: weather-temp-now at seed 1 is listed twice"),
    (set_instance(4, gold_sha256=None), "instances[4].gold_sha256: must be a string"),
    (set_instance(4, gold_sha256="0" * 64),
     "instances[4]: weather-temp-now at seed 2 has another gold answer here"),
    (lambda d: d["instances"].append("weather-temp-now@7"),
     "instances[24]: must be an object with template and seed"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "message"), BROKEN)
def test_a_broken_suite_is_refused_naming_the_place(suite, change, message):
    with pytest.raises(InvalidData) as refused:
        check_suite(broken(suite, change))
    assert str(refused.value) == message


def test_a_suite_posed_otherwise_here_is_refused(suite):
    changed = broken(suite, set_instance(0, instruction="Which city is the coldest?"))
    with pytest.raises(InvalidData) as refused:
        check_suite(changed)
    here = load_apps(1).task("weather-warmest-city").instruction
    assert str(refused.value) == (
        f"instances[0]: weather-warmest-city at seed 1 is posed otherwise here: {here!r} (iexact)"
    )
    with pytest.raises(InvalidData, match="the suite must be a JSON object, got list"):
        check_suite([suite])


@pytest.mark.parametrize(
    ("templates", "seeds", "message"),
    [
        (["weather-forecast"], [1], "templates: unknown templates 'weather-forecast'"),
        ([], [1], "templates: a suite needs at least one template"),
        (WEATHER[:1] * 2, [1], "templates: a template is listed twice"),
        (WEATHER[:1], [], "seeds: a suite needs at least one seed"),
        (WEATHER[:1], [1, 1], "seeds: a seed is listed twice"),
        (WEATHER[:1], [MAX_SEED + 1],
         f"seeds[0]: must be a whole number from 0 to {MAX_SEED}, got {MAX_SEED + 1}"),
    ],
)  # fmt: skip
def test_make_suite_refuses_what_it_cannot_make(templates, seeds, message):
    with pytest.raises(InvalidData) as refused:
        make_suite("mini", "1", templates, seeds)
    assert str(refused.value) == message


def test_seeds_are_ranges_and_single_seeds():
    assert parse_seeds("1..3,7") == [1, 2, 3, 7]
    assert parse_seeds(" 5 ") == [5]
    with pytest.raises(InvalidData, match=r"seeds: the range 3\.\.1 runs backwards"):
        parse_seeds("3..1")
    with pytest.raises(InvalidData, match="seeds: 'one' is no seed or range of seeds"):
        parse_seeds("1,one")


def test_the_command_writes_a_suite_that_imports(tmp_path):
    out = tmp_path / "suite.json"
    err = io.StringIO()
    call_command(
        "make_suite", "weather-week", templates="app:weather", seeds="1..2", out=out, stderr=err
    )
    written = json.loads(out.read_text())
    assert check_suite(written) == written
    uses_weather = [t.id for t in all_templates() if "weather" in t.apps]
    assert [t["id"] for t in written["templates"]] == uses_weather
    assert err.getvalue().strip() == (
        f"Suite weather-week version 1: {2 * len(uses_weather)} instances "
        f"({len(uses_weather)} templates x 2 seeds) in {out}"
    )
    stdout = io.StringIO()
    call_command("make_suite", "one", templates="flights-gate", seeds="4", stdout=stdout)
    assert json.loads(stdout.getvalue())["instances"][0]["seed"] == 4


def test_the_command_says_what_is_wrong():
    with pytest.raises(CommandError, match="templates: no template uses an app 'tiktok'"):
        call_command("make_suite", "x", templates="app:tiktok", seeds="1")
    with pytest.raises(CommandError, match=r"seeds: the range 3\.\.1 runs backwards"):
        call_command("make_suite", "x", seeds="3..1")
