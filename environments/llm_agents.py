"""The LLM generator: STAMP's scenario, task and webpage agents (Tables 18, 19 and 20, their
prompts verbatim in ``prompts/``) through the one OpenAI-compatible client (``core/llm.py``),
and with a model the static inspector's own prompt (the table after Table 20).

The seed configuration is the procedural generator's (``procedural.generate``): the domain, the
app's name and the values of the memory items, drawn from the seed and given to the scenario
agent as ``spec.fixed_values``, the only source of truth for the gold. Each agent's answer is
checked before the next is asked: JSON of the structure its table asks for, the gold equal to
the one the fixed values give, the required test ids, a locator for each memory item. What the
page must carry beyond STAMP's contract is asked in a short addendum after the table's text: a
``locator`` per memory item (the taps, by data-testid, and the element showing the value), so
that the generic solver can follow it. The page's fact elements get the ``data-var`` of their
variable, as the built-in apps' do (the device reports what a screen shows by them), by setting
an attribute on the parsed document.

A refusal (``GenerationError``, or ``LLMError`` from the client: timeouts, 429s given up on,
non-JSON) names the agent and the problem; the pipeline keeps it as the reason.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings
from lxml import etree, html

from core.llm import LLMClient, LLMError
from devices.virtual.packages import Package, check_files

from .inspection import Problem
from .procedural import Draft, GenerationError, generate
from .render import json_bytes

PROMPTS = Path(__file__).resolve().parent / "prompts"
GENERATOR = "llm"
VERSION = "1.0.0"
LOCATOR_ADDENDUM = """
Waypoint's addendum (machine-readable locators for its automated solver):
- Every item of task.memory_items must also have "locator": {"path": [{"tap": "<data-testid>"}, \
...], "testid": "<data-testid of the element whose text is exactly the fact>"}; path is the \
taps from the app's home page that bring the element on screen.
- Use the fact_key values of spec.fixed_values exactly as memory_items[].fact_key.
"""
JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@lru_cache(maxsize=8)
def prompt(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8")


def fill(template: str, **values: str) -> str:
    """The prompt with its ``{name}`` fields replaced (the JSON examples' braces stay)."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


def client_for(options: dict[str, Any]) -> LLMClient:
    if not settings.LLM_BASE_URL:
        raise GenerationError(
            "the llm generator needs a model: set LLM_BASE_URL (and LLM_MODEL, LLM_API_KEY)"
        )
    return LLMClient(settings.LLM_BASE_URL, options.get("model") or settings.LLM_MODEL,
                     settings.LLM_API_KEY)  # fmt: skip


def ask_json(client: LLMClient, agent: str, text: str) -> dict[str, Any]:
    """The agent's answer as a JSON object; GenerationError naming the agent otherwise."""
    answer = client.chat(text, json_object=True).text
    match = JSON_OBJECT.search(answer)
    try:
        parsed = json.loads(match.group(0)) if match else None
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise GenerationError(f"the {agent} agent's answer is not a JSON object")
    return parsed


def _need(value: Any, path: str, kind: type, agent: str) -> Any:
    if not isinstance(value, kind):
        raise GenerationError(f"the {agent} agent's {path} must be a {kind.__name__}")
    return value


def spec_of(draft: Draft) -> dict[str, Any]:
    """The scenario agent's spec: the seed configuration, and the fixed values."""
    task = draft.manifest["tasks"][0]
    return {
        "seed": draft.seed,
        "platform_type": f"{draft.domain} mobile web app",
        "app_name": draft.manifest["label"],
        "theme_keywords": draft.scenario["meta"]["theme_keywords"],
        "task_kind": task["plan"]["answer"],
        "fixed_values": {v["name"]: v["value"] for v in draft.manifest["variables"]},
        "fixed_value_places": {v["name"]: v["where"] for v in draft.manifest["variables"]},
        "gold": draft.task_spec["task"]["grading"]["gold"],
        "final_output_format": task["output_format"],
    }


def check_scenario(scenario: dict[str, Any], gold: str) -> None:
    for key in ("meta", "data", "task", "ui_requirements"):
        _need(scenario.get(key), key, dict, "scenario")
    truth = _need(scenario["data"].get("truth"), "data.truth", dict, "scenario")
    if truth.get("gold") != gold or scenario["task"].get("gold") != gold:
        raise GenerationError(
            "the scenario agent's gold is not the one the fixed values give "
            f"(task.gold {scenario['task'].get('gold')!r})"
        )
    _need(truth.get("facts"), "data.truth.facts", dict, "scenario")


def check_task_spec(task_spec: dict[str, Any], gold: str, keys: list[str]) -> None:
    task = _need(task_spec.get("task"), "task", dict, "task")
    final = _need(task.get("final_action"), "task.final_action", dict, "task")
    grading = _need(task.get("grading"), "task.grading", dict, "task")
    if final.get("gold") != gold or grading.get("gold") != gold:
        raise GenerationError("the task agent's golds differ from the scenario's")
    try:
        if not re.fullmatch(str(grading.get("pass_regex", "")), gold):
            raise GenerationError("the task agent's pass_regex does not match the gold")
    except re.error:
        raise GenerationError("the task agent's pass_regex is not a regular expression") from None
    items = _need(task.get("memory_items"), "task.memory_items", list, "task")
    found = [i.get("fact_key") for i in items if isinstance(i, dict)]
    if sorted(found) != sorted(keys):
        raise GenerationError(f"the task agent's memory items are {found}, not {keys}")
    for item in items:
        locator = _need(item.get("locator"), "memory_items[].locator", dict, "task")
        _need(locator.get("path"), "memory_items[].locator.path", list, "task")
        _need(locator.get("testid"), "memory_items[].locator.testid", str, "task")
    required = _need(
        (task_spec.get("ui_contract") or {}).get("required_testids"),
        "ui_contract.required_testids",
        list,
        "task",
    )
    for testid in ("go-submit-answer", "answer-input", "answer-submit", "result"):
        if testid not in required:
            raise GenerationError(f"the task agent's required_testids lack {testid}")


def mark_facts(page: str, variables: dict[str, str]) -> str:
    """The page with ``data-var`` on the element of each fact's test id (the device reports
    the variables a screen shows by them)."""
    root = html.document_fromstring(page)
    for el in root.iter():
        if isinstance(el.tag, str) and el.get("data-testid") in variables:
            el.set("data-var", variables[el.get("data-testid")])
    return "<!doctype html>\n" + etree.tostring(root, method="html", encoding="unicode")


def llm_package(seed: int, index: int, domains: list[str], options: dict[str, Any]) -> Package:
    """The environment of ``index`` made by STAMP's three agents; GenerationError or LLMError
    say which agent's answer was refused, and why."""
    client = client_for(options)
    draft = generate(seed, index, domains)
    spec = spec_of(draft)
    gold = spec["gold"]
    keys = list(spec["fixed_values"])
    scenario = ask_json(
        client,
        "scenario",
        fill(prompt("scenario"), spec=json.dumps(spec, ensure_ascii=False, indent=2)),
    )
    check_scenario(scenario, gold)
    task_spec = ask_json(
        client,
        "task",
        fill(prompt("task"), scenario=json.dumps(scenario, ensure_ascii=False, indent=2))
        + LOCATOR_ADDENDUM,
    )
    check_task_spec(task_spec, gold, keys)
    task = task_spec["task"]
    facts = {k: spec["fixed_values"][k] for k in keys}
    page = ask_json(
        client,
        "webpage",
        fill(
            prompt("webpage"),
            fb="",
            scenario=json.dumps(scenario, ensure_ascii=False, indent=2),
            task_spec=json.dumps(task_spec, ensure_ascii=False, indent=2),
            gold=gold,
            gold_json=json.dumps(gold, ensure_ascii=False),
            facts_json=json.dumps(facts, ensure_ascii=False),
        ),
    )
    source = _need(page.get("html"), "html", str, "webpage")
    try:
        marked = mark_facts(
            source, {i["locator"]["testid"]: i["fact_key"] for i in task["memory_items"]}
        )
    except (etree.ParserError, ValueError) as exc:
        raise GenerationError(f"the webpage agent's html does not parse ({exc})") from None
    return check_files(_files(draft, scenario, task_spec, marked), f"{draft.slug}: ")


def _files(
    draft: Draft, scenario: dict[str, Any], task_spec: dict[str, Any], page: str
) -> dict[str, bytes]:
    """The package's files: the manifest of the draft's app with the agents' task."""
    slug = f"llm-{draft.seed}-{draft.index:04d}"
    task = task_spec["task"]
    by_key = {i["fact_key"]: i for i in task["memory_items"]}
    plan = draft.manifest["tasks"][0]["plan"]
    reads = [
        {
            **read,
            "path": by_key[read["key"]]["locator"]["path"],
            "testid": by_key[read["key"]]["locator"]["testid"],
        }  # fmt: skip
        for read in plan["reads"]
    ]
    gold_spec = {
        **draft.manifest["tasks"][0]["gold"],
        "vars": [f"{slug}.{v['name']}" for v in draft.manifest["variables"]],
    }
    instruction = str(task.get("natural_language") or "").strip()
    if not instruction:
        raise GenerationError("the task agent's task.natural_language is empty")
    instruction += (
        " Enter the answer on the answer page (go-submit-answer, at the top right), submit it, "
        "then give the same text as your answer."
    )
    manifest = {
        **draft.manifest,
        "slug": slug,
        "package": f"com.waypoint.llm.s{draft.seed}.e{draft.index}",
        "label": str(scenario["meta"].get("app_name") or draft.manifest["label"])[:60],
        "version": VERSION,
        "generator": {
            "name": GENERATOR,
            "seed": draft.seed,
            "index": draft.index,
            "domain": draft.domain,
            "style": {"theme_keywords": scenario["meta"].get("theme_keywords", [])},
        },
        "tasks": [
            {
                **draft.manifest["tasks"][0],
                "id": slug,
                "apps": [slug],
                "instruction": instruction,
                "gold": gold_spec,
                "plan": {**plan, "reads": reads},
            }
        ],
    }
    listed = scenario["ui_requirements"].get("pages", [])
    pages = [p.get("id") for p in listed if isinstance(p, dict)]
    return {
        "manifest.json": json_bytes(manifest),
        "index.html": page.encode(),
        "routes.json": json_bytes({"pages": [*[p for p in pages if p], "submit"], "links": []}),
        "task_spec.json": json_bytes(task_spec),
        "scenario.json": json_bytes(scenario),
    }


def inspect_with_model(
    page: str, task_spec: dict[str, Any], scenario: dict[str, Any], client: LLMClient
) -> list[Problem]:
    """STAMP's static inspection agent: its verdict on the page (``ok``, the answer it derives,
    uniqueness); a problem with its reasons when it is not ok."""
    truth = (scenario.get("data") or {}).get("truth") or {}
    try:
        verdict = ask_json(
            client,
            "inspector",
            fill(
                prompt("inspector"),
                fb="",
                facts=json.dumps(truth.get("facts", {}), ensure_ascii=False, indent=2),
                gold=str(truth.get("gold", "")),
                scenario=json.dumps(scenario, ensure_ascii=False, indent=2),
                task_spec=json.dumps(task_spec, ensure_ascii=False, indent=2),
                html=page,
            ),
        )
    except (GenerationError, LLMError) as exc:
        return [Problem("inspector", str(exc))]
    if verdict.get("ok") is True:
        return []
    reasons = (verdict.get("uniqueness") or {}).get("ambiguity_reasons") or []
    said = "; ".join(str(r) for r in reasons) or "no reason given"
    return [
        Problem(
            "inspector",
            f"the inspector's answer {verdict.get('predicted_answer')!r} is not the gold: {said}",
        )
    ]
