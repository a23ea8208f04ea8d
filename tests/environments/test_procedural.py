"""The procedural generator (issue 37): a seed configuration drawn from domains, archetypes,
styles and vocabularies, memory items injected by construction, distractors around them; every
environment it makes passes static inspection, and a broken page does not."""

from __future__ import annotations

import json

import pytest

from environments.inspection import inspect_package
from environments.procedural import GenerationError, generate
from environments.render import html, package_of

DRAFTS = [generate(seed=4, index=i) for i in range(60)]


def inspected(draft) -> list[str]:
    return [str(p) for p in inspect_package(html(draft), draft.task_spec, draft.scenario)]


def test_every_generated_environment_passes_static_inspection():
    assert {d.slug: inspected(d) for d in DRAFTS} == {d.slug: [] for d in DRAFTS}


def test_a_generation_spreads_over_domains_styles_and_memory_types():
    assert len({d.domain for d in DRAFTS}) >= 8
    assert len({d.style["palette"]["primary"] for d in DRAFTS}) >= 12
    assert {d.style["density"] for d in DRAFTS} == {"compact", "regular", "comfortable"}
    answers = {d.manifest["tasks"][0]["plan"]["answer"]["op"] for d in DRAFTS}
    assert answers == {"join", "holder"}
    assert {len(d.manifest["variables"]) for d in DRAFTS} == {2, 3}


def test_the_task_names_no_value_it_asks_to_remember():
    for draft in DRAFTS:
        goal = draft.manifest["tasks"][0]["instruction"]
        for variable in draft.manifest["variables"]:
            assert variable["value"] not in goal, (draft.slug, variable)
        plan = draft.manifest["tasks"][0]["plan"]
        if plan["answer"]["op"] == "join":  # a comparison's gold is one of the names it lists
            assert draft.task_spec["task"]["grading"]["gold"] not in json.dumps(plan)


def test_a_page_that_shows_a_value_twice_or_the_gold_fails_inspection():
    draft = next(d for d in DRAFTS if d.manifest["tasks"][0]["plan"]["answer"]["op"] == "join")
    value = draft.manifest["variables"][0]["value"]
    gold = draft.task_spec["task"]["grading"]["gold"]
    twice = html(draft).replace("</main>", f"<p>{value}</p></main>")
    assert (
        f"facts: the fact {draft.manifest['variables'][0]['name']} ({value!r}) is shown 2 "
        "times" in [str(p) for p in inspect_package(twice, draft.task_spec, draft.scenario)]
    )
    shown = html(draft).replace("</main>", f"<p>{gold}</p></main>")
    assert "gold: the page shows the gold itself: nothing to remember" in [
        str(p) for p in inspect_package(shown, draft.task_spec, draft.scenario)
    ]


def test_the_answer_page_checks_a_digest_not_the_answer():
    draft = DRAFTS[0]
    page = package_of(draft).files["index.html"].decode()
    assert draft.task_spec["task"]["grading"]["gold"] not in page
    assert "Example: " in page and "<select" not in page and "http" not in page


def test_an_unknown_domain_is_refused_naming_the_known_ones():
    with pytest.raises(GenerationError) as caught:
        generate(1, 0, ["space"])
    assert str(caught.value) == (
        "domains: unknown domain 'space' (known: shopping, travel, banking, social, health, "
        "productivity, food, education, fitness, entertainment)"
    )
