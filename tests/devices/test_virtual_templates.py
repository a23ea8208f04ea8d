"""The virtual device's task templates: each generates instances from a seed (the values, and
where they appear), and every instance has exactly one right answer among what its screens
show, under its grading rule."""

from __future__ import annotations

import json
from functools import cache

import pytest

from devices.virtual.apps import (
    all_templates,
    build_world,
    load_apps,
    manifest_value,
    read_manifests,
)
from devices.virtual.templates import DISTANCE, USE, WHAT, Resolved, Template, right_answers
from devices.virtual.world import ManifestError, World

SEEDS = range(60)
TEMPLATES = all_templates()
FIRST_TASKS = [
    "noah-meeting-time", "ava-door-code", "freshcart-order-number", "order-number-to-mia",
    "cheaper-aerosound-price", "cheaper-kettle-shop", "megamart-coupon", "wifi-password",
    "cheaper-aerosound-note-to-mia",
]  # fmt: skip


@cache
def world(seed: int) -> World:
    return build_world(seed, read_manifests())


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.id)
def test_every_instance_has_one_right_answer_among_the_candidates_it_shows(template):
    for seed in SEEDS:
        resolved = template.resolve(world(seed))
        assert resolved.candidates, f"{template.id} at seed {seed} names no candidates"
        right = right_answers(template, world(seed))
        assert len(right) == 1, (
            f"{template.id} at seed {seed}: gold {resolved.gold!r} under {template.rule} "
            f"matches {right} among {resolved.candidates}"
        )


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.id)
def test_every_instance_names_the_memory_it_needs(template):
    variables = world(0).variables()
    for seed in range(5):
        task = template.instance(world(seed))
        assert task.variables, template.id
        assert set(task.variables) <= set(world(seed).variables())
        assert task.memory == {"what": template.what, "distance": template.distance,
                               "use": template.use}  # fmt: skip
        assert task.output_format and task.guideline.startswith("Read ")
    assert variables


def builder_apps() -> list[str]:
    from devices.virtual.content import BUILDERS

    return list(BUILDERS)


@pytest.mark.parametrize("slug", builder_apps())
def test_a_seed_decides_where_values_appear_not_only_what_they_are(slug):
    """The same app at other seeds shows its items in other places (list order, which item)."""
    layouts = {json.dumps(world(seed).data(slug), sort_keys=True) for seed in range(5)}
    assert len(layouts) == 5

    def order(seed: int) -> list[str]:
        data = world(seed).data(slug)
        longest = max((v for v in data.values() if isinstance(v, list)), key=len)
        return [json.dumps(item, sort_keys=True)[:40] for item in longest]

    assert len({tuple(order(seed)) for seed in range(5)}) > 1


def test_the_instances_of_a_template_differ_from_seed_to_seed():
    for template in TEMPLATES:
        golds = {template.instance(world(seed)).gold for seed in range(12)}
        goals = {template.instance(world(seed)).instruction for seed in range(12)}
        assert len(golds | goals) > 2, template.id


def test_the_templates_span_memory_worlds_memory_types_over_twelve_apps():
    """What is remembered, how far it is carried, what is done with it (STAMP's Memory-World),
    with cross-app tasks among them."""
    apps = [app.slug for app in load_apps(0).apps if app.slug != "answers"]
    assert len(apps) >= 12 and len(TEMPLATES) >= 60
    assert {"price", "name", "code", "time", "list"} <= {t.what for t in TEMPLATES}
    assert {t.distance for t in TEMPLATES} == set(DISTANCE)
    assert {t.use for t in TEMPLATES} == set(USE)
    cross = [t for t in TEMPLATES if t.distance == "cross_app"]
    assert len(cross) >= 12 and all(len(set(t.apps)) > 1 for t in cross)
    with_templates = {app for t in TEMPLATES for app in t.apps}
    assert set(apps) - with_templates == {"shopmate"}  # the demo's fixed catalogue
    assert {t.what for t in TEMPLATES} <= set(WHAT)


def test_the_first_apps_keep_their_nine_tasks_as_templates():
    ids = [t.id for t in TEMPLATES]
    assert ids[: len(FIRST_TASKS)] == FIRST_TASKS
    catalog = load_apps(7)
    task = catalog.task("cheaper-kettle-shop")
    assert task.memory == {"what": "price", "distance": "cross_app", "use": "compare"}
    assert task.instruction.endswith("Submit the shop's name in the Answers app.")
    assert task.must_visit[-1] == "answers: the task's answer page"


def test_a_template_of_an_unknown_memory_type_is_refused():
    def make(world, rng):
        return Resolved("x", [])

    with pytest.raises(ManifestError) as refused:
        Template("t", ("weather",), "Goal", "exact", make, "colour", "same_screen", "answer")
    assert str(refused.value) == (f"template t: unknown what 'colour' (known: {WHAT})")
    with pytest.raises(ManifestError) as refused:
        Template("t", ("weather",), "Goal", "exact", make, "code", "cross_app", "answer")
    assert str(refused.value) == "template t: a cross-app template needs two apps"
    assert "far" not in DISTANCE and "type" in USE


def test_a_manifest_value_never_takes_a_value_it_must_avoid():
    spec = {"name": "door_code", "kind": "choice", "options": ["4512", "7781"], "avoid": ["4512"]}
    assert {manifest_value(spec, World(seed), "chatter") for seed in range(30)} == {"7781"}
    impossible = {**spec, "options": ["4512"]}
    with pytest.raises(ManifestError) as refused:
        manifest_value(impossible, World(0), "chatter")
    assert str(refused.value) == "chatter: variable door_code cannot avoid ['4512']"
