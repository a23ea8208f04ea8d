"""A suite's memory check (issue 35, point 4): ``make_suite --check-memory`` plays the solver on
every instance and writes into the suite which instances need memory beyond K on its path."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from agents.memory_check import mark_suite
from agents.memory_need import InstanceNeed, Use, ValueNeed
from agents.models import Episode, Run
from agents.suites import check_suite, make_suite
from devices.models import Device

CHAIN = "chain-code-then-account"  # a memory template (about 20 solver steps)
ORDER = "freshcart-order-number"  # a short lookup: its value is on the screen it is answered on


def need(distance: int | None, k: int = 5, steps: int = 12) -> InstanceNeed:
    use = Use(steps - 1, "answer", None if distance is None else steps - 1 - distance)
    use.needs_memory = distance is not None and distance >= k
    return InstanceNeed(k, steps, [ValueNeed("mail.code", "123456", uses=[use])])


def test_each_instance_gets_its_memory_block_and_the_suite_a_count():
    suite = make_suite("m", "1", [CHAIN, ORDER], [1])
    needs = {(CHAIN, 1, 3): need(9), (ORDER, 1, 3): need(0, steps=4)}
    marked = mark_suite(suite, needs, 5)
    chain, order = marked["instances"]
    assert chain["memory"] == {
        "k": 5,
        "needs_memory": True,
        "checked": True,
        "solver_steps": 12,
        "distances": {"mail.code": 9},
    }
    assert order["memory"]["needs_memory"] is False
    assert marked["memory"] == {
        "k": 5,
        "instances": 2,
        "checked": 2,
        "need_memory": 1,
        "solver_steps": {"min": 4, "median": 8, "max": 12},
        "left_out": [],
    }
    # The check's results travel with the suite: importing it keeps them.
    assert check_suite(json.loads(json.dumps(marked))) == marked


def test_required_memory_leaves_out_what_stays_in_the_window_or_was_not_solved():
    suite = make_suite("m", "1", [CHAIN, ORDER], [1, 2])
    needs = {
        (CHAIN, 1, 3): need(9),
        (CHAIN, 2, 3): "the solver did not solve it: gave up",
        (ORDER, 1, 3): need(4),
        (ORDER, 2, 3): need(None),
    }
    marked = mark_suite(suite, needs, 5, require=True)
    assert [(i["template"], i["seed"]) for i in marked["instances"]] == [(CHAIN, 1)]
    assert marked["memory"]["left_out"] == [
        f"{CHAIN} at seed 2, L3: the solver did not solve it: gave up",
        f"{ORDER} at seed 1, L3: no value leaves the last 5 screens",
        f"{ORDER} at seed 2, L3: no value leaves the last 5 screens",
    ]
    assert (marked["memory"]["instances"], marked["memory"]["need_memory"]) == (1, 1)


def make_suite_command(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("make_suite", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_the_check_needs_a_project_and_a_window_of_one_or_more(project):
    with pytest.raises(CommandError, match="--check-memory needs --project"):
        make_suite_command("m", "--seeds", "1", "--templates", ORDER, "--check-memory")
    with pytest.raises(CommandError, match="--project and --require-memory go with"):
        make_suite_command("m", "--seeds", "1", "--templates", ORDER, "--require-memory")
    with pytest.raises(CommandError, match="--k: the window holds at least one observation"):
        make_suite_command(
            "m", "--seeds", "1", "--templates", ORDER, "--check-memory", "--project",
            str(project.pk), "--k", "0",
        )  # fmt: skip


@pytest.mark.worker
@pytest.mark.usefixtures("agent_worker")
@pytest.mark.django_db(transaction=True)
def test_make_suite_plays_the_solver_and_keeps_only_what_needs_memory(
    adb_servers, project, tmp_path
):
    out = tmp_path / "suite.json"
    _, said = make_suite_command(
        "memory-mini", "--templates", f"{CHAIN},{ORDER}", "--seeds", "1", "--check-memory",
        "--project", str(project.pk), "--devices", "1", "--require-memory", "--timeout", "600",
        "--out", str(out),
    )  # fmt: skip
    suite = json.loads(out.read_text())
    [kept] = suite["instances"]
    assert (kept["template"], kept["seed"], kept["level"]) == (CHAIN, 1, 3)
    assert kept["memory"]["needs_memory"] is True
    assert max(d for d in kept["memory"]["distances"].values() if d is not None) >= 5
    assert suite["memory"]["need_memory"] == 1
    assert suite["memory"]["left_out"] == [
        f"{ORDER} at seed 1, L3: no value leaves the last 5 screens"
    ]
    assert "Memory beyond K = 5: 1 of 1 instances" in said
    assert f"  left out: {ORDER} at seed 1, L3: no value leaves the last 5 screens" in said
    # The solver's episodes stay in the project: verified demonstrations, labelled from the
    # environment; the devices the command started are gone.
    run = Run.objects.get(project=project)
    assert run.agent == "solver" and run.max_steps is None
    played = Episode.objects.filter(run=run)
    assert sorted(e.template for e in played if e.success) == sorted([CHAIN, ORDER])
    assert all(e.trajectory.source == "solver" for e in played)
    assert not Device.objects.exists()
