"""Suites: a named, versioned list of task instances, checked, kept once per version."""

from __future__ import annotations

import pytest

from agents.services import (
    do_import_suite,
    do_make_suite,
    run_instances,
    suite_named,
)
from agents.suites import make_suite, parse_seeds
from trajectories.models import AuditEvent
from trajectories.validation import InvalidData

pytestmark = pytest.mark.django_db
ORDER = "freshcart-order-number"
CODE = "ava-door-code"


def test_importing_the_same_suite_twice_keeps_one(project, alice):
    document = make_suite("basics", "1", [ORDER], [1, 2])
    first, created = do_import_suite(project, alice, document)
    again, created_again = do_import_suite(project, alice, document)
    assert (created, created_again, again.pk) == (True, False, first.pk)
    assert AuditEvent.objects.filter(kind="suite.imported").count() == 1
    with pytest.raises(InvalidData) as caught:
        do_import_suite(project, alice, make_suite("basics", "1", [ORDER], [3]))
    assert str(caught.value) == (
        "suite: basics version 1 already exists with other instances; give the new one "
        "another version"
    )


def test_a_suite_is_named_with_or_without_its_version(project, alice):
    old = do_make_suite(project, alice, "basics", "1", [ORDER], "1..2")
    new = do_make_suite(project, alice, "basics", "2", [ORDER, CODE], "1")
    assert suite_named(project, "basics") == new
    assert suite_named(project, "basics@1") == old
    with pytest.raises(InvalidData) as caught:
        suite_named(project, "basics@9")
    assert str(caught.value) == "suite: the project has no suite 'basics' version '9'"


def test_seeds_are_read_as_the_command_line_writes_them():
    assert parse_seeds("1..3,7") == [1, 2, 3, 7]
    assert parse_seeds("5") == [5]
    assert parse_seeds(["1..2", 2, 5, "1"]) == [1, 2, 5]  # the API's list; repeats kept once
    refusals = {
        "1..": "seeds: '1..' is no seed or range of seeds (write e.g. 1..5 or 1,2,7)",
        "a": "seeds: 'a' is no seed or range of seeds (write e.g. 1..5 or 1,2,7)",
        "": "seeds: '' is no seed or range of seeds (write e.g. 1..5 or 1,2,7)",
        "3..1": "seeds: the range 3..1 runs backwards",
        "0..100000": "seeds: the range 0..100000 is longer than 100000",
        "0..60000,0..60000": "seeds: more than 100000 seeds",
    }
    for bad, message in refusals.items():
        with pytest.raises(InvalidData) as refused:
            parse_seeds(bad)
        assert str(refused.value) == message
    for bad in ([True], [1.5], {"seeds": 1}):
        with pytest.raises(InvalidData, match="^seeds: "):
            parse_seeds(bad)


def test_a_run_takes_a_suites_instances_at_the_seeds_asked(project, alice):
    suite = do_make_suite(project, alice, "basics", "1", [ORDER, CODE], "1..3")
    assert len(run_instances(suite, None, None)) == 6

    def played(instances):
        return [(i["template"], i["seed"]) for i in instances]

    assert played(run_instances(suite, None, "2")) == [(ORDER, 2), (CODE, 2)]
    with pytest.raises(InvalidData) as caught:
        run_instances(suite, None, "9")
    assert str(caught.value) == "seeds: suite basics v1 has no instance at seeds [9]"
    assert played(run_instances(None, [CODE], "4..5")) == [(CODE, 4), (CODE, 5)]
