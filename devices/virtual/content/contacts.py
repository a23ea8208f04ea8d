"""Contacts: people A to Z (name and company in the list; phone, city and birthday on each
person's page). Chatter's people are among them."""

from __future__ import annotations

from ..templates import Resolved, Template
from ..world import MONTHS, Content, World, unique_best

CHATTER_PEOPLE = ["Noah Fischer", "Mia Santos", "Ava Kim", "Liam O'Brien"]
FIRST = [
    "Priya", "Jonas", "Elena", "Tomás", "Hana", "Marcus", "Ingrid", "Kofi", "Yara", "Felix",
    "Nadia", "Owen", "Sara", "Diego", "Amara", "Lukas",
]  # fmt: skip
LAST = [
    "Shah", "Berg", "Rossi", "Alves", "Sato", "Webb", "Lund", "Mensah", "Haddad", "Novak",
    "Costa", "Reid", "Ibsen", "Moreau", "Okafor", "Klein",
]  # fmt: skip
COMPANIES = [
    "Northwind", "Acme Labs", "Blue Harbor", "Kestrel Games", "Orbit Health", "Lumen Studio",
    "Juniper Bank", "Vertex Energy", "Solace Media", "Nimbus Air", "Cobalt Works", "Fable Books",
    "Granite Law", "Tidal Foods",
]  # fmt: skip
CITIES = [
    "Lisbon", "Osaka", "Denver", "Tallinn", "Porto", "Seville", "Quito", "Oslo", "Cairo",
    "Dublin", "Hanoi", "Lima", "Nairobi", "Perth", "Vienna", "Zagreb", "Bergen", "Ghent",
    "Turin", "Lyon",
]  # fmt: skip
PEOPLE = 12
DAYS_IN = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def build(content: Content, world: World) -> None:
    rng = content.rng("contacts")
    names = list(CHATTER_PEOPLE)
    while len(names) < PEOPLE:
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name.split()[0] not in {n.split()[0] for n in names}:
            names.append(name)
    rng.shuffle(names)
    saved = [c["name"] for c in world.data("weather")["cities"]]
    # Two people live in cities SkyCast follows (a person's weather is one task away).
    homes = rng.sample(saved, 2)
    cities = homes + rng.sample([c for c in CITIES if c not in saved], PEOPLE - 2)
    companies = rng.sample(COMPANIES, PEOPLE)
    birthdays = rng.sample(range(365), PEOPLE)
    numbers = rng.sample(range(1000, 9999), PEOPLE)
    people = []
    for i, name in enumerate(names):
        month, day = _date_of(birthdays[i])
        where = f"{name}'s page"
        first, last = name.split(" ", 1)
        people.append(
            {
                "name": name,
                "phone": content.var(f"phone_{i}", "code", f"555-01{i:02d}-{numbers[i]}", where,
                                     f"{name}'s phone number"),
                "email": f"{first.lower()}.{last.lower().replace(chr(39), '')}@example.com",
                "city": content.var(f"city_{i}", "name", cities[i], where,
                                    f"the city {name} lives in"),
                "company": content.var(f"company_{i}", "name", companies[i], "the contact list",
                                       f"where {name} works"),
                "birthday": content.var(f"birthday_{i}", "date", f"{day} {MONTHS[month]}", where,
                                        f"{name}'s birthday"),
                "day_of_year": birthdays[i],
                "n": i,  # its variables' number: phone_3 and so on
            }
        )  # fmt: skip
    content.data = {"people": sorted(people, key=lambda p: p["name"])}


def _date_of(day_of_year: int) -> tuple[int, int]:
    month = 0
    while day_of_year >= DAYS_IN[month]:
        day_of_year -= DAYS_IN[month]
        month += 1
    return month, day_of_year + 1


def people(world: World) -> list[dict]:
    return world.data("contacts")["people"]


def ref(person: dict, what: str) -> str:
    """``contacts.phone_3``: the variable of a person's field."""
    return f"contacts.{what}_{person['n']}"


def phone(world: World, rng) -> Resolved:
    person = rng.choice(people(world))
    return Resolved(person["phone"], [ref(person, "phone")], {"name": person["name"]},
                    [p["phone"] for p in people(world)])  # fmt: skip


def city(world: World, rng) -> Resolved:
    person = rng.choice(people(world))
    return Resolved(person["city"], [ref(person, "city")], {"name": person["name"]},
                    [p["city"] for p in people(world)])  # fmt: skip


def works_at(world: World, rng) -> Resolved:
    person = rng.choice(people(world))
    return Resolved(person["name"], [ref(person, "company")],
                    {"company": person["company"]}, [p["name"] for p in people(world)])  # fmt: skip


def birthday(world: World, rng) -> Resolved:
    person = rng.choice(people(world))
    return Resolved(person["birthday"], [ref(person, "birthday")],
                    {"name": person["name"]}, [p["birthday"] for p in people(world)])  # fmt: skip


def earliest_birthday(world: World, rng) -> Resolved:
    three = rng.sample(people(world), 3)
    first = unique_best(three, lambda p: p["day_of_year"])
    params = {"a": three[0]["name"], "b": three[1]["name"], "c": three[2]["name"]}
    return Resolved(first["name"], [ref(p, "birthday") for p in three], params,
                    [p["name"] for p in three])  # fmt: skip


APPS = ("contacts",)
TEMPLATES = [
    Template(
        "contacts-phone", APPS, "What is {name}'s phone number, according to Contacts?",
        "exact", phone, "code", "later_page", "answer", "Lookup",
        "the number exactly as Contacts shows it",
    ),
    Template(
        "contacts-city", APPS, "In which city does {name} live, according to Contacts?",
        "iexact", city, "name", "later_page", "answer", "Lookup", "the city's name only",
    ),
    Template(
        "contacts-works-at", APPS,
        "Which of your contacts works at {company}? Answer with the person's full name.",
        "iexact", works_at, "name", "same_screen", "answer", "Lookup",
        "the full name only (e.g. Mia Santos)",
    ),
    Template(
        "contacts-birthday", APPS, "When is {name}'s birthday, according to Contacts?",
        "iexact", birthday, "date", "later_page", "answer", "Lookup",
        "the date as Contacts shows it (e.g. 14 March)",
    ),
    Template(
        "contacts-earliest-birthday", APPS,
        "Whose birthday comes first in the year: {a}'s, {b}'s or {c}'s? "
        "Answer with the person's full name.",
        "iexact", earliest_birthday, "date", "later_page", "compare", "Compare & Decide",
        "the full name only (e.g. Mia Santos)",
    ),
]  # fmt: skip
