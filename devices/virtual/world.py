"""The world of one seed: every app's memory variables and the data its page shows.

An app's data comes from its manifest's variables (``fixtures/virtual_apps/<slug>/manifest.json``)
and, for apps with richer pages, from a builder in ``devices/virtual/content/`` that lays out
lists (which item sits where, which values they carry) from the seed. Everything a template's
gold answer depends on is generated here, in Python, so that a test can check over many seeds
that every instance has exactly one right answer among the candidates its screens show.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


class ManifestError(ValueError):
    pass


class AmbiguousInstance(ManifestError):
    """A seed gave a template two right answers (a tie for the cheapest, say)."""


@dataclass
class Variable:
    app: str
    name: str
    kind: str
    value: str
    where: str = ""
    description: str = ""

    @property
    def ref(self) -> str:
        return f"{self.app}.{self.name}"

    def to_dict(self) -> dict:
        return {**asdict(self), "ref": self.ref}


@dataclass
class Content:
    """What one app shows at one seed: memory variables (each value a page marks with
    ``data-var``) and the data its page renders (``window.WP.data``)."""

    slug: str
    seed: int
    variables: list[Variable] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def rng(self, purpose: str) -> random.Random:
        """A random generator for one purpose of this app at this seed (the same every run)."""
        return random.Random(f"{self.seed}/{self.slug}/{purpose}")

    def var(self, name: str, kind: str, value: str, where: str, description: str = "") -> str:
        """Declare a memory variable of the app; returns its value."""
        if any(v.name == name for v in self.variables):
            raise ManifestError(f"{self.slug}: variable {name} declared twice")
        self.variables.append(Variable(self.slug, name, kind, value, where, description))
        return value


@dataclass
class World:
    seed: int
    contents: dict[str, Content] = field(default_factory=dict)

    def content(self, slug: str) -> Content:
        return self.contents[slug]

    def data(self, slug: str) -> dict[str, Any]:
        return self.contents[slug].data

    def variables(self) -> dict[str, Variable]:
        return {v.ref: v for c in self.contents.values() for v in c.variables}

    def value(self, ref: str) -> str:
        return self.variables()[ref].value


# --- values a builder draws -----------------------------------------------------------------

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip


def money(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def cents_of(price: str) -> int:
    whole, _, frac = price.lstrip("$").replace(",", "").partition(".")
    return int(whole) * 100 + int((frac or "0").ljust(2, "0")[:2])


def distinct_prices(
    rng: random.Random, count: int, low: int, high: int, endings: Sequence[int] = (0, 49, 95, 99)
) -> list[str]:
    """``count`` different prices from $low to $high (whole dollars apart, so none tie)."""
    wholes = rng.sample(range(low, high + 1), count)
    return [money(w * 100 + rng.choice(endings)) for w in wholes]


def distinct_times(
    rng: random.Random, count: int, first_hour: int = 7, last_hour: int = 21, step: int = 15
) -> list[str]:
    """``count`` different clock times (HH:MM) between the hours, on ``step``-minute marks."""
    slots = range(first_hour * 60, last_hour * 60 + 1, step)
    return [f"{m // 60:02d}:{m % 60:02d}" for m in rng.sample(slots, count)]


def minutes(time: str) -> int:
    hours, _, mins = time.partition(":")
    return int(hours) * 60 + int(mins)


def code(rng: random.Random, length: int, alphabet: str = "0123456789", prefix: str = "") -> str:
    return prefix + "".join(rng.choice(alphabet) for _ in range(length))


def distinct_codes(
    rng: random.Random, count: int, length: int, alphabet: str = "0123456789", prefix: str = ""
) -> list[str]:
    codes: list[str] = []
    while len(codes) < count:
        new = code(rng, length, alphabet, prefix)
        if new not in codes:
            codes.append(new)
    return codes


def unique_best(items: Iterable[T], key: Callable[[T], Any], best: Callable = min) -> T:
    """The one item with the best key; :class:`AmbiguousInstance` when two share it."""
    items = list(items)
    if not items:
        raise AmbiguousInstance("no candidates to choose from")
    top = best(key(i) for i in items)
    winners = [i for i in items if key(i) == top]
    if len(winners) != 1:
        raise AmbiguousInstance(f"{len(winners)} candidates share the best value {top!r}")
    return winners[0]


def slugify(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_")
