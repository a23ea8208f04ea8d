"""Whether an answer is right: the task's gold answer under its grading rule.

The one grading function of Waypoint: the recorder, the evaluator and the virtual device all
call it, and the virtual Answers page (``fixtures/virtual_apps/answers/index.html``) does the
same in JavaScript, so the rules below are written to mean what its ``grade()`` means:

- ``exact``: equal after trimming surrounding whitespace;
- ``iexact``: equal after trimming and lower-casing;
- ``contains``: the gold answer, trimmed, occurs in the answer, ignoring case;
- ``number``: the first number in each (``-12``, ``1,234.5``; commas are thousands
  separators) are within 0.005 of each other: ``$12.50`` is ``12.5``;
- ``regex``: the gold answer is a Python regular expression that must match the whole trimmed
  answer, case-sensitively unless it says ``(?i)``; a gold answer that is no valid regular
  expression matches nothing.

Importable without Django (the virtual device uses it).
"""

from __future__ import annotations

import re

GRADING_RULES = ("exact", "iexact", "contains", "number", "regex")

# JavaScript's String.prototype.trim() removes these (Python's str.strip() differs at the edges:
# it also strips U+001C..U+001F and U+0085, and keeps U+FEFF).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# ASCII digits only, as JavaScript's \d.
NUMBER = re.compile(r"-?[0-9][0-9,]*(?:\.[0-9]+)?")


class UnknownGradingRule(ValueError):
    def __init__(self, rule: object) -> None:
        super().__init__(f"unknown grading rule {rule!r} (known: {', '.join(GRADING_RULES)})")


def number_of(text: str) -> float | None:
    """The first number in ``text``: ``"$1,234.50"`` -> 1234.5; None when there is none."""
    match = NUMBER.search(text)
    return float(match.group(0).replace(",", "")) if match else None


def answer_matches(rule: str, gold: str, answer: str) -> bool:
    """Whether ``answer`` is right for the gold answer ``gold`` under ``rule``.

    An unknown rule raises :class:`UnknownGradingRule`: a task whose rule cannot be applied
    is an error, not a wrong answer.
    """
    if rule not in GRADING_RULES:
        raise UnknownGradingRule(rule)
    answer = answer.strip(JS_WHITESPACE)
    if rule == "regex":
        try:
            return re.fullmatch(gold, answer) is not None
        except re.error:
            return False
    gold = gold.strip(JS_WHITESPACE)
    if rule == "exact":
        return answer == gold
    if rule == "iexact":
        return answer.lower() == gold.lower()
    if rule == "contains":
        return gold.lower() in answer.lower()
    a, g = number_of(answer), number_of(gold)
    return a is not None and g is not None and abs(a - g) < 0.005
