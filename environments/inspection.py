"""Static inspection: the checks of STAMP's inspector (the prompt after its Table 20) that code
can make without a model, over a package's HTML, task_spec and scenario:

- ``testids``: every test id the UI contract requires is on the page, once; no test id twice;
- ``facts``: each memory item's value is the text of the element its locator names, verbatim,
  and shown by no other element (a distractor equal to it would make two answers);
- ``gold``: the gold is one line, the same in the scenario, the final action and the grading,
  its pass regex matches it, it is no text the page shows (it must be worked out), and a
  comparison's values are all different;
- ``offline``: no external resource (scripts, styles, images, fonts, frames, requests);
- ``select``: no select element (filters are buttons);
- ``submission``: the answer field, its submit button and the result share a page with no tab
  and no task value, reached from a go-submit-answer entry outside it, and a format hint
  ``Example: ...`` is given; no element says Success! before an answer is submitted;
- ``english``: no character of a script other than Latin (no Chinese, Japanese, Korean,
  Cyrillic, ...), in the page or the task;
- ``distractors``: at least five interactive elements the task does not need.

Each problem names its check. With a model, the inspector's own prompt runs too
(``llm_agents.inspect_with_model``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from lxml import etree, html

EXTERNAL = re.compile(
    r"""(?:\b(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//)"""
    r"""|@import|url\(\s*["']?\s*(?:https?:)?//|\bfetch\s*\(|XMLHttpRequest|WebSocket\s*\(|"""
    r"""EventSource\s*\(|navigator\.sendBeacon|importScripts\s*\(""",
    re.IGNORECASE,
)
FOREIGN_SCRIPTS = (
    "CJK", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO", "CYRILLIC", "ARABIC", "HEBREW",
    "DEVANAGARI", "THAI", "GREEK", "ARMENIAN", "GEORGIAN", "BENGALI", "TAMIL", "ETHIOPIC",
    "FULLWIDTH", "IDEOGRAPHIC",
)  # fmt: skip
SUBMISSION = ("answer-input", "answer-submit", "result")
MIN_DISTRACTORS = 5
SUCCESS = "Success!"


@dataclass(frozen=True)
class Problem:
    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.check}: {self.message}"


def _text(el: Any) -> str:
    return re.sub(r"\s+", " ", el.text_content() or "").strip()


def _foreign(text: str) -> str | None:
    """The first character of a script other than Latin, or None."""
    for char in text:
        if ord(char) < 0x370:
            continue
        name = unicodedata.name(char, "")
        if any(name.startswith(script) or f" {script} " in f" {name} " for script in
               FOREIGN_SCRIPTS):  # fmt: skip
            return char
    return None


def _visible_elements(root: Any) -> list[Any]:
    return [
        el
        for el in root.iter()
        if isinstance(el.tag, str)
        and not any(a.tag in ("script", "style", "template") for a in el.iterancestors())
        and el.tag not in ("script", "style", "template")
    ]


def _leaf_texts(elements: list[Any]) -> list[tuple[Any, str]]:
    """Elements with their own text (their text_content, for those holding no element that has
    text of its own): what a screen shows as one text."""
    out = []
    for el in elements:
        text = _text(el)
        if not text:
            continue
        if any(_text(child) for child in el if isinstance(child.tag, str)):
            own = re.sub(r"\s+", " ", el.text or "").strip()
            if not own:
                continue
        out.append((el, text))
    return out


def _memory_values(task_spec: dict[str, Any], scenario: dict[str, Any]) -> dict[str, str]:
    facts = ((scenario.get("data") or {}).get("truth") or {}).get("facts") or {}
    return {str(k): str(v) for k, v in facts.items()}


def inspect_package(
    page: str, task_spec: dict[str, Any], scenario: dict[str, Any]
) -> list[Problem]:
    """Every problem static inspection finds (none: the package passes)."""
    problems: list[Problem] = []
    try:
        root = html.document_fromstring(page)
    except (etree.ParserError, ValueError) as exc:
        return [Problem("html", f"the page does not parse ({exc})")]
    visible = _visible_elements(root)
    by_testid: dict[str, list[Any]] = {}
    for el in root.iter():
        if isinstance(el.tag, str) and el.get("data-testid"):
            by_testid.setdefault(el.get("data-testid"), []).append(el)
    task = task_spec.get("task") or {}
    contract = task_spec.get("ui_contract") or {}

    # testids
    for testid in contract.get("required_testids") or []:
        found = by_testid.get(testid, [])
        if not found:
            problems.append(Problem("testids", f"the required test id {testid!r} is missing"))
    for testid, found in sorted(by_testid.items()):
        if len(found) > 1:
            problems.append(
                Problem("testids", f"the test id {testid!r} is used {len(found)} times")
            )

    # facts
    values = _memory_values(task_spec, scenario)
    leaves = _leaf_texts(visible)
    for item in task.get("memory_items") or []:
        key = str(item.get("fact_key"))
        if key not in values:
            problems.append(Problem("facts", f"memory item {key!r} has no fact in the scenario"))
            continue
        value = values[key]
        testid = (item.get("locator") or {}).get("testid")
        if testid:
            found = by_testid.get(testid, [])
            if found and _text(found[0]) != value:
                problems.append(
                    Problem("facts", f"{testid} shows {_text(found[0])!r}, not the fact {value!r}")
                )
            elif not found:
                problems.append(Problem("facts", f"the locator's test id {testid!r} is missing"))
        showing = [el for el, text in leaves if text == value]
        if not showing:
            problems.append(Problem("facts", f"the fact {key} ({value!r}) is not shown verbatim"))
        elif len(showing) > 1:
            problems.append(
                Problem("facts", f"the fact {key} ({value!r}) is shown {len(showing)} times")
            )

    # gold
    truth_gold = str(((scenario.get("data") or {}).get("truth") or {}).get("gold", ""))
    final = task.get("final_action") or {}
    grading = task.get("grading") or {}
    golds = {truth_gold, str(final.get("gold", "")), str(grading.get("gold", ""))}
    gold = str(grading.get("gold", ""))
    if len(golds) != 1 or not gold.strip():
        problems.append(
            Problem("gold", "the scenario, the final action and the grading give other golds")
        )
    if "\n" in gold:
        problems.append(Problem("gold", "the gold is more than one line"))
    try:
        if not re.fullmatch(str(grading.get("pass_regex", "")), gold):
            problems.append(Problem("gold", "the pass regex does not match the gold"))
    except re.error as exc:
        problems.append(Problem("gold", f"the pass regex is not a regular expression ({exc})"))
    if (task.get("answer") or {}).get("op") != "holder":
        if any(text == gold for _, text in leaves):
            problems.append(Problem("gold", "the page shows the gold itself: nothing to remember"))
    else:
        compared = [values[str(i.get("fact_key"))] for i in task.get("memory_items") or []
                    if str(i.get("fact_key")) in values]  # fmt: skip
        if len(set(compared)) != len(compared):
            problems.append(Problem("gold", "two compared values are equal: two right answers"))

    # offline
    for match in EXTERNAL.finditer(page):
        problems.append(Problem("offline", f"an external resource or request: {match.group(0)!r}"))
        break
    if root.xpath("//link[@rel and contains(translate(@rel,'STYLEHEE','styleheet'),'stylesheet')]"):
        problems.append(Problem("offline", "a link element loads a stylesheet: styles are inline"))

    # select
    if root.xpath("//select"):
        problems.append(Problem("select", "a select element: filters must be buttons"))

    # submission
    parts = [by_testid.get(t, [None])[0] for t in SUBMISSION]
    if all(p is not None for p in parts):
        common = parts[0]
        while common is not None and not all(_inside(p, common) for p in parts):
            common = common.getparent()
        inside = {
            el.get("data-testid")
            for el in (common.iter() if common is not None else [])
            if isinstance(el.tag, str) and el.get("data-testid")
        }
        tabs = sorted(t for t in inside if t.startswith("tab-"))
        facts = [
            (item.get("locator") or {}).get("testid")
            for item in task.get("memory_items") or []
            if (item.get("locator") or {}).get("testid") in inside
        ]
        if common is None or common.tag in ("html", "body"):
            problems.append(Problem("submission", "the answer page is not a page of its own"))
        elif tabs or facts:
            problems.append(
                Problem("submission", f"the answer page also holds {(tabs + facts)[0]!r}")
            )
        opener = by_testid.get("go-submit-answer", [None])[0]
        if opener is None or (common is not None and _inside(opener, common)):
            problems.append(
                Problem("submission", "no go-submit-answer entry outside the answer page")
            )
    if "Example:" not in " ".join(text for _, text in leaves) and not root.xpath(
        "//input[contains(@placeholder, 'Example:')]"
    ):
        problems.append(Problem("submission", "no format hint written 'Example: ...'"))
    if any(text == SUCCESS for _, text in leaves):
        problems.append(Problem("submission", "the page says Success! before any answer"))

    # english
    seen = (
        " ".join(text for _, text in leaves)
        + " "
        + " ".join(str(task.get(k, "")) for k in ("natural_language", "guideline"))
    )
    char = _foreign(seen + page)
    if char is not None:
        problems.append(
            Problem(
                "english",
                f"a character of another script: {char!r} ({unicodedata.name(char, '?')})",
            )
        )

    # distractors: interactive elements the task's path does not need
    needed = set(contract.get("required_testids") or [])
    interactive = [
        el
        for el in visible
        if el.tag in ("button", "input", "textarea", "summary")
        or el.get("role") in ("button", "switch", "checkbox", "tab", "link")
        or el.get("onclick") is not None
    ]
    extra = [el for el in interactive if el.get("data-testid") not in needed]
    if len(extra) < MIN_DISTRACTORS:
        problems.append(
            Problem(
                "distractors",
                f"{len(extra)} interactive elements the task does not need, not {MIN_DISTRACTORS}",
            )
        )
    return problems


def _inside(el: Any, ancestor: Any) -> bool:
    return el is ancestor or any(a is ancestor for a in el.iterancestors())
