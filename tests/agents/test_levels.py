"""STAMP's difficulty levels (appendix A.3): L3 the task alone, L2 the task with the
task-required knowledge, L1 a simplified configuration with the knowledge. An instance is
(template, seed, level) in a template's instance, a suite document, make_suite and a run's
request; no device here (tests/agents/test_levels_runs.py plays one)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from agents import runner, services
from agents.models import Episode
from agents.services import do_start_run, run_instances
from agents.suites import check_suite, make_suite, parse_levels
from devices.virtual.apps import all_templates, build_world, load_apps, read_manifests
from devices.virtual.templates import KNOWLEDGE, ManifestError, Resolved, Template
from trajectories.validation import InvalidData

TEMP = "weather-temp-now"
INVOICES = "bank-pay-two-invoices"
POOL = [{"serial": "emulator-5554", "adb_server": "127.0.0.1:5037"}]
LEVELS_NAMED = "the levels are 1, 2 and 3"


def template(template_id: str) -> Template:
    return next(t for t in all_templates() if t.id == template_id)


@pytest.fixture(scope="module")
def world():
    return build_world(1, read_manifests())


@pytest.mark.parametrize("template_id", [TEMP, INVOICES, "cheaper-aerosound-price"])
def test_l2_is_the_l3_goal_first_then_where_each_value_is(world, template_id):
    natural = template(template_id).instance(world)
    helped = template(template_id).instance(world, level=2)
    assert natural.level == 3 and helped.level == 2
    goal, knowledge = helped.instruction.split("\n\n", 1)
    assert goal == natural.instruction  # the goal's own sentences, untouched and first
    assert knowledge.startswith(KNOWLEDGE)
    variables = world.variables()
    for ref in natural.variables:
        assert f"({variables[ref].app}: {variables[ref].where})" in knowledge
        assert variables[ref].value not in knowledge  # where to look, not what is there
    assert (helped.gold, helped.variables, helped.guideline) == (
        natural.gold,
        natural.variables,
        natural.guideline,
    )
    # Without a simplified configuration, L1 is L2.
    simplified = template(template_id).instance(world, level=1)
    assert (simplified.instruction, simplified.gold, simplified.level) == (
        helped.instruction,
        helped.gold,
        1,
    )


def test_l1_poses_the_simplified_configuration_when_the_template_has_one(world):
    refs = sorted(r for r, v in world.variables().items() if v.app == "weather")[:2]
    values = world.variables()

    def both(world, rng) -> Resolved:
        return Resolved(values[refs[0]].value, refs, params={"what": "both readings"})

    def one(world, rng) -> Resolved:
        return Resolved(values[refs[1]].value, refs[1:], params={"what": "one reading"})

    fields = dict(
        id="test-two-readings",
        apps=("weather",),
        goal="Read {what} in SkyCast.",
        rule="exact",
        make=both,
        what="number",
        distance="same_screen",
        use="answer",
    )
    simple = Template(**fields, simplify=one)
    l1, l2, l3 = (simple.instance(world, level) for level in (1, 2, 3))
    assert l3.instruction == "Read both readings in SkyCast."
    assert l2.instruction.startswith("Read both readings in SkyCast.\n\n" + KNOWLEDGE)
    assert (l2.gold, l2.variables, l3.gold, l3.variables) == (
        values[refs[0]].value,
        refs,
        values[refs[0]].value,
        refs,
    )
    # L1: simplify's goal, gold and variables, with the knowledge of its one value.
    assert l1.instruction.startswith("Read one reading in SkyCast.\n\n" + KNOWLEDGE)
    assert values[refs[1]].where in l1.instruction and values[refs[0]].where != ""
    assert (l1.gold, l1.variables, l1.level) == (values[refs[1]].value, refs[1:], 1)
    plain = Template(**fields)
    assert plain.instance(world, 1).instruction == plain.instance(world, 2).instruction


@pytest.mark.parametrize("level", [0, 4, "2", True, None])
def test_a_level_that_is_none_of_1_2_3_is_refused_naming_them(world, level):
    with pytest.raises(ManifestError) as refused:
        template(TEMP).instance(world, level)
    assert str(refused.value) == (
        f"level: {level!r} is no difficulty level (the levels are 1, 2 and 3: L1 simplified "
        "with the task-required knowledge, L2 the task with the knowledge, L3 the task alone)"
    )
    with pytest.raises(ManifestError, match=LEVELS_NAMED):
        load_apps(1, level=level)


def test_the_catalog_poses_every_task_at_its_level():
    natural, helped = load_apps(2), load_apps(2, level=2)
    assert (natural.level, helped.level) == (3, 2)
    for task in natural.tasks:
        other = helped.task(task.id)
        if task.id.startswith("chain-"):  # a guided goal at L2, the natural one at L3
            assert task.instruction.splitlines()[-1] in other.instruction.splitlines()
        else:  # the same goal, then the knowledge
            assert other.instruction.startswith(task.instruction)
        assert other.gold == task.gold and other.level == 2
        assert other.to_dict()["level"] == 2


def test_levels_are_written_as_the_command_line_does():
    assert parse_levels("1,2,3") == [1, 2, 3]
    assert parse_levels(" 3 , 1,3") == [3, 1]
    assert parse_levels([2]) == [2]
    for bad in ("4", "1,0", "", "one", [1.0], "1..3"):
        refused = f"levels: .* is no difficulty level \\({LEVELS_NAMED}"
        with pytest.raises(InvalidData, match=refused):
            parse_levels(bad)


def test_a_suite_names_each_instance_with_its_level():
    suite = make_suite("levels", "1", [TEMP, INVOICES], [1, 2], [1, 2, 3])
    keys = [(i["template"], i["seed"], i["level"]) for i in suite["instances"]]
    assert keys == [(t, s, lv) for t in (TEMP, INVOICES) for s in (1, 2) for lv in (1, 2, 3)]
    by_key = {(i["template"], i["seed"], i["level"]): i for i in suite["instances"]}
    assert by_key[(TEMP, 1, 2)]["instruction"] == load_apps(1, level=2).task(TEMP).instruction
    assert by_key[(TEMP, 1, 3)]["instruction"] == load_apps(1).task(TEMP).instruction
    assert check_suite(json.loads(json.dumps(suite))) == suite
    # The level is part of the suite's identity: a document at other levels is another suite.
    assert (
        make_suite("levels", "1", [TEMP], [1])["instances"]
        != make_suite("levels", "1", [TEMP], [1], [2])["instances"]
    )


def test_a_suite_document_without_levels_reads_as_l3():
    old = make_suite("old", "1", [TEMP], [1, 2])
    for item in old["instances"]:
        del item["level"]
    checked = check_suite(old)
    assert [i["level"] for i in checked["instances"]] == [3, 3]
    assert checked["instances"][0]["instruction"] == load_apps(1).task(TEMP).instruction


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"level": 0}, "instances[1].level: 0 is no difficulty level (the levels are 1, 2 and 3"),
        ({"level": "2"}, "instances[1].level: '2' is no difficulty level (the levels are 1, 2"),
        ({"level": 1}, "instances[1]: weather-temp-now at seed 1, L1 is listed twice"),
        ({"level": 2}, "instances[1]: weather-temp-now at seed 1, L2 is posed otherwise here"),
    ],
)
def test_a_suite_with_a_bad_level_is_refused_naming_the_place(change, message):
    suite = make_suite("levels", "1", [TEMP], [1], [1, 3])
    suite["instances"][1].update(change)
    with pytest.raises(InvalidData) as refused:
        check_suite(suite)
    assert str(refused.value).startswith(message)


def test_make_suite_levels(tmp_path):
    out = tmp_path / "suite.json"
    err = io.StringIO()
    call_command("make_suite", "lv", templates=TEMP, seeds="1", levels="1,2,3", out=out, stderr=err)
    written = json.loads(out.read_text())
    assert [i["level"] for i in written["instances"]] == [1, 2, 3]
    assert err.getvalue().strip() == (
        f"Suite lv version 1: 3 instances (1 templates x 1 seeds x 3 levels) in {out}"
    )
    stdout = io.StringIO()
    call_command("make_suite", "lv", templates=TEMP, seeds="1", stdout=stdout)
    assert [i["level"] for i in json.loads(stdout.getvalue())["instances"]] == [3]
    with pytest.raises(CommandError) as refused:
        call_command("make_suite", "lv", templates=TEMP, seeds="1", levels="4")
    assert str(refused.value).startswith(f"levels: 4 is no difficulty level ({LEVELS_NAMED}")


@pytest.mark.django_db
def test_a_run_plays_the_levels_asked_for(project, alice, monkeypatch):
    monkeypatch.setattr(services, "check_pool", lambda project, devices: POOL)
    monkeypatch.setattr(runner, "send_episode", lambda episode_id: None)
    run = do_start_run(project, alice, agent="solver", tasks=[TEMP], seeds="1..2", levels="2,3")
    assert run.instances == [
        {"template": TEMP, "seed": s, "level": lv} for s in (1, 2) for lv in (2, 3)
    ]
    episodes = Episode.objects.filter(run=run).order_by("seed", "level")
    assert [(e.seed, e.level) for e in episodes] == [(1, 2), (1, 3), (2, 2), (2, 3)]
    assert episodes[0].instance == f"{TEMP}@1/L2" and episodes[1].instance == f"{TEMP}@1"

    suite = services.do_make_suite(project, alice, "lv", "1", [TEMP], "1", levels="1,3")
    assert [i["level"] for i in run_instances(suite, None, None, levels="1")] == [1]
    with pytest.raises(InvalidData, match="levels: suite lv v1 has no instance at levels 2"):
        run_instances(suite, None, None, levels=[2])

    api = APIClient()
    api.force_authenticate(alice)
    url = f"/api/v1/projects/{project.pk}/runs/"
    refused = api.post(url, {"agent": "solver", "tasks": [TEMP], "levels": [4]}, format="json")
    assert refused.status_code == 422  # InvalidData (config/errors)
    assert refused.json()["detail"].startswith(f"levels: 4 is no difficulty level ({LEVELS_NAMED}")
    started = api.post(url, {"agent": "solver", "tasks": [TEMP], "levels": "1"}, format="json")
    assert started.status_code == 202, started.json()
    assert started.json()["instances"] == [{"template": TEMP, "seed": 0, "level": 1}]


CHAIN = "chain-paid-invoice-then-parcel"  # an invoice paid, a parcel tracked, a note written


def test_a_memory_template_is_guided_at_l2_and_natural_at_l3(world):
    natural = template(CHAIN).instance(world)
    guided = template(CHAIN).instance(world, level=2)
    # L3 says what to do: pay, write, answer; where each value is, the agent works out.
    assert natural.instruction.splitlines()[0].startswith("Pay the ")
    assert not any(line.startswith("In Mailbox, ") for line in natural.instruction.splitlines())
    assert natural.instruction.splitlines()[-1].startswith("Finally, answer with ")
    # L2 is the guided goal, where to read each value first, then the knowledge.
    goal, knowledge = guided.instruction.split("\n\n")
    assert goal.splitlines()[0].startswith("In Mailbox, read the invoice from ")
    assert knowledge.startswith(KNOWLEDGE) and "(Mailbox: the email '" in knowledge
    assert (guided.gold, guided.variables) == (natural.gold, natural.variables)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_value_a_memory_template_asks_for_is_in_its_instruction(seed):
    """What the goal says is never memory: a name or code to remember is on no level's goal,
    not even by chance (the person joining you at an event who is also a contact asked about)."""
    memory = {t.id for t in all_templates() if t.group == "memory"}
    leaks = []
    for level in (1, 2, 3):
        catalog = load_apps(seed, level=level)
        for task in catalog.tasks:
            if task.id not in memory:
                continue
            for ref in task.variables:
                value = catalog.variable(ref)
                if value.kind in ("name", "code") and value.value in task.instruction:
                    leaks.append((task.id, level, ref))
    assert leaks == []


def test_the_knowledge_names_a_place_by_what_it_is_not_by_the_value_it_shows(world):
    """Ava Kim's page is where the phone of the person joining you is: L2 says so without the
    name, which the agent must read in Agenda."""
    knowledge = template("agenda-attendees-to-mia").instance(world, 2).instruction.split("\n\n")[1]
    assert "[who joins '" in knowledge and "]'s page" in knowledge
    variables = world.variables()
    for ref in template("agenda-attendees-to-mia").instance(world).variables:
        assert variables[ref].value not in knowledge
