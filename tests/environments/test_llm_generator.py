"""The llm generator (issue 37): STAMP's scenario, task and webpage agents and the inspector
through the LLM client, against a local OpenAI-compatible server's canned answers: a verified
environment from good answers (its steps' reasoning and critic by the same model), and a
broken one refused with the reason, faults included (invalid JSON, adversarial HTML, 429s,
timeouts)."""

from __future__ import annotations

import json
import re

import pytest

from core.llm import LLMError
from environments.inspection import inspect_package
from environments.llm_agents import llm_package
from environments.models import EnvironmentStatus, Generation, Stage
from environments.procedural import GenerationError, generate
from environments.render import html
from environments.services import do_start_generation
from tests.annotate.llm_server import llm  # noqa: F401 (the fixture)
from trajectories.models import Step

SEED, INDEX = 21, 0
DRAFT = generate(SEED, INDEX)
VERDICT_OK = {"ok": True, "predicted_answer": "", "uniqueness": {"is_unique": True}}


def canned(page: str = "", inspector: dict | None = None, rejected_step: int | None = None):
    """The server's answer to each agent, told apart by its prompt's first words."""
    page = page or html(DRAFT)

    def reply(body: dict) -> tuple:
        content = body["messages"][-1]["content"]
        text = content if isinstance(content, str) else content[0]["text"]
        if text.startswith("You are a scenario generator."):
            return (200, DRAFT.scenario, 0)
        if text.startswith("You are a task designer."):
            return (200, DRAFT.task_spec, 0)
        if text.startswith("You are a web app generator."):
            return (200, {"html": page, "answer": {}}, 0)
        if text.startswith("You are a static semantic inspector"):
            return (200, inspector or VERDICT_OK, 0)
        if text.startswith("You write the reasoning"):
            action = re.search(r"The action taken: (.*)", text).group(1)
            return (200, f"I do {action} because the task needs it.", 0)
        if text.startswith("You are the critic"):
            memory = "none" if "Memory written at this step: (none)" in text else "valid"
            bad = rejected_step is not None and '"type": "open_app"' in text
            return (200, {"action": "invalid" if bad else "valid", "memory": memory,
                          "reason": "the app was open already" if bad else "fine"}, 0)  # fmt: skip
        return (500, "unknown agent", 0)

    return reply


@pytest.mark.django_db(transaction=True)
def test_the_llm_generator_makes_a_verified_environment_with_model_reasoning(
    pool,
    project,
    alice,
    llm,  # noqa: F811
):
    server = llm(canned(rejected_step=0))
    generation = do_start_generation(
        project, alice, count=1, seed=SEED, generator="llm", devices=[pool.serial]
    )
    generation = Generation.objects.get(pk=generation.pk)
    [env] = generation.environments.all()
    assert (env.status, env.reason) == (EnvironmentStatus.VERIFIED, ""), env.report
    assert env.slug == f"llm-{SEED}-0000"
    asked = [m["messages"][-1]["content"] for m in (r["body"] for r in server.requests)]
    firsts = [(a if isinstance(a, str) else a[0]["text"]).split("\n")[0] for a in asked[:4]]
    assert firsts == [
        "You are a scenario generator.",
        "You are a task designer.",
        "You are a web app generator.",
        "You are a static semantic inspector and HTML fixer.",
    ]
    trajectory = env.trajectory
    steps = Step.objects.filter(trajectory=trajectory).order_by("index")
    assert steps[1].thought.startswith("I do {") and steps[1].thought.endswith("task needs it.")
    assert trajectory.metadata["reasoning"]["model"] == "test-vl"
    # The critic rejected the first step: masked, the trajectory kept.
    assert [s.trainable for s in steps][:2] == [False, True]
    assert env.report["training"]["masked_steps"] == [0]


@pytest.mark.django_db(transaction=True)
def test_a_page_the_inspector_finds_ambiguous_is_refused_with_its_reason(
    pool,
    project,
    alice,
    llm,  # noqa: F811
):
    verdict = {"ok": False, "predicted_answer": "Other Name",
               "uniqueness": {"is_unique": False,
                              "ambiguity_reasons": ["two items show the same value"]}}  # fmt: skip
    llm(canned(inspector=verdict))
    generation = do_start_generation(
        project, alice, count=1, seed=SEED, generator="llm", devices=[pool.serial]
    )
    [env] = Generation.objects.get(pk=generation.pk).environments.order_by("index")[:1]
    assert (env.status, env.stage) == (EnvironmentStatus.FAILED, Stage.INSPECT)
    assert env.reason == (
        "inspector: the inspector's answer 'Other Name' is not the gold: two items show the "
        "same value"
    )
    assert env.trajectory_id is None  # never put on a device


@pytest.mark.parametrize(
    ("page", "problem"),
    [
        (
            html(DRAFT).replace(
                "<style>", '<script src="https://cdn.example.com/x.js"></script><style>'
            ),
            "offline: an external resource or request: 'src=\"https://'",
        ),
        (
            html(DRAFT).replace("</main>", "<select><option>A</option></select></main>"),
            "select: a select element: filters must be buttons",
        ),
        (
            html(DRAFT).replace("Submit your answer", "提交答案"),
            "english: a character of another script: '提' (CJK UNIFIED IDEOGRAPH-63D0)",
        ),
        (
            html(DRAFT).replace('data-testid="answer-submit"', 'data-testid="send"'),
            "testids: the required test id 'answer-submit' is missing",
        ),
    ],
)
def test_adversarial_pages_fail_static_inspection(settings, llm, page, problem):  # noqa: F811
    llm(canned(page=page))
    package = llm_package(SEED, INDEX, [], {})
    found = inspect_package(
        package.files["index.html"].decode(),
        json.loads(package.files["task_spec.json"]),
        json.loads(package.files["scenario.json"]),
    )
    assert problem in [str(p) for p in found]


def test_an_answer_that_is_no_json_is_refused_naming_the_agent(llm):  # noqa: F811
    llm(lambda body: (200, "Sure! Here is your scenario.", 0))
    with pytest.raises(GenerationError, match="^the scenario agent's answer is not a JSON object$"):
        llm_package(SEED, INDEX, [], {})


def test_a_scenario_with_another_gold_is_refused(llm):  # noqa: F811
    wrong = json.loads(json.dumps(DRAFT.scenario))
    wrong["data"]["truth"]["gold"] = wrong["task"]["gold"] = "INVENTED-1"
    llm(lambda body: (200, wrong, 0))
    with pytest.raises(GenerationError, match="gold is not the one the fixed values give"):
        llm_package(SEED, INDEX, [], {})


def test_429s_are_waited_out_and_timeouts_give_up_saying_so(settings, llm):  # noqa: F811
    reply = canned()
    busy = [(429, "", 0), (429, "", 0)]
    llm(lambda body: busy.pop(0) if busy else reply(body))
    settings.LLM_HTTP_RETRIES = 2
    assert llm_package(SEED, INDEX, [], {}).slug == f"llm-{SEED}-0000"
    llm(lambda body: (200, DRAFT.scenario, 1.0))
    settings.LLM_HTTP_RETRIES = 1
    settings.LLM_TIMEOUT_S = 0.3
    with pytest.raises(LLMError, match=r"^gave up after 2 requests: no answer from .*timed out"):
        llm_package(SEED, INDEX, [], {})
