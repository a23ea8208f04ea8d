"""The sub-tasks long templates are made of (issue 35): each a sentence of the goal, on a line
of its own, that reads values in one app (a *source*) or writes values read earlier into
another (a *sink*: a note, a message, a payment, a parcel tracked), and the final answer.

Two goals come out of the same sentences, for STAMP's levels (``Template.natural_goal``): at L1
and L2 the guided one, every sentence in order (where to read what, then where to write it);
at L3 the natural task, only what is to be done (the notes and messages to write, the invoices
to pay, the answer), the values named by their labels, so that where each is found, and in
which order, is the agent's to work out.

A chain's goal is its sentences in order. Each value read gets a label that the sentence
defines ("Kofi Shah's phone number") and later sentences name ("In Notes, write a note titled
'Calls' with: Kofi Shah's phone number; ..."), so that a value read at the start is typed or
answered after the other sub-tasks' screens. The people, invoices, flights and cities are
chosen by the seed among others of the same kind, which stay on the screens as distractors.

The scripted solver (``agents/chains.py``) reads the same sentences back from the goal; the
tests play every chain at one seed, ``bench/bench_environment.py`` at every seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..templates import Resolved
from ..world import AmbiguousInstance, ManifestError, World, cents_of, unique_best
from . import contacts, mail

CHATS = ("Mia", "Noah", "Ava")  # Chatter's conversations


@dataclass
class Value:
    label: str
    ref: str  # the device's memory variable ("" for a value it declares none for)
    value: str
    kind: str  # the Memory-World type: price, name, code, time, date, number
    others: list[str] = field(default_factory=list)  # values of the same kind (distractors)
    where: str = ""  # the app and screen that show it, naming no value (L1/L2's knowledge)


@dataclass
class Chain:
    """What the sentences of an instance have read so far, and the entities they took."""

    world: World
    rng: random.Random
    lines: list[str] = field(default_factory=list)  # the guided goal (L1, L2)
    tasks: list[str] = field(default_factory=list)  # the natural one (L3)
    values: list[Value] = field(default_factory=list)
    written: set[str] = field(default_factory=set)  # labels some sink wrote already
    taken: dict[str, list] = field(default_factory=dict)

    def take(self, kind: str, items: list, key: Callable = lambda x: x):
        """One of ``items`` no earlier sentence took for ``kind``, chosen by the seed."""
        used = self.taken.setdefault(kind, [])
        free = [item for item in items if key(item) not in used]
        if not free:
            raise AmbiguousInstance(f"no {kind} left for another sentence")
        item = self.rng.choice(free)
        used.append(key(item))
        return item

    def read(
        self, line: str, values: list[Value], task: str | None = None, where: str = ""
    ) -> None:
        """A sentence of the guided goal reading ``values`` on the screen ``where`` says;
        ``task``: what it says in the natural goal (None: nothing, a sentence that only
        reads)."""
        self.lines.append(line)
        if task is not None:
            self.tasks.append(task)
        for value in values:
            value.where = value.where or where
        self.values.extend(values)

    def unwritten(self) -> list[Value]:
        return [v for v in self.values if v.label not in self.written]

    def label(self, label: str) -> Value:
        return next(v for v in self.values if v.label == label)


# The Memory-World type of each field a source reads (what L1's simplification keeps, below).
KINDS = {
    "reference": "code", "amount due": "price", "due date": "date", "locker": "name",
    "pickup code": "code", "delivery day": "date", "phone number": "code", "city": "name",
    "birthday": "date", "place": "name", "attendee": "name", "start": "time",
    "flight number": "code", "fare": "price", "gate": "code", "seats left": "number",
    "humidity": "number", "high": "number", "balance": "price", "IBAN": "code",
}  # fmt: skip


def reads(source: Callable[[Chain], None], leg: str, factory: Callable, fields: tuple[str, ...]):
    """``source``, a sentence reading ``fields`` in its app, named for what it is (``leg``) and
    able to be made again with fewer fields (``factory``)."""
    source.leg, source.factory, source.fields = leg, factory, fields
    return source


def listed(labels: list[str]) -> str:
    return "; ".join(labels)


def fields_phrase(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


# --- sources --------------------------------------------------------------------------------


def invoice(*fields: str) -> Callable[[Chain], None]:
    """An invoice emailed to Mailbox: its reference, amount due, due date."""
    words = {"reference": "code", "amount due": "price", "due date": "date"}
    refs = {"reference": "ref", "amount due": "amount", "due date": "due"}

    def source(c: Chain) -> None:
        invoices = mail.invoices(c.world)
        i = c.take("invoice", list(range(len(invoices))))
        company = invoices[i]["company"]
        c.taken.setdefault("invoiced", []).append(i)
        values = [
            Value(f"the {company} invoice's {f}", f"mail.invoice{i}_{refs[f]}",
                  invoices[i][refs[f]], words[f], [v[refs[f]] for v in invoices])
            for f in fields
        ]  # fmt: skip
        c.read(f"In Mailbox, read the invoice from {company}: its {fields_phrase(list(fields))}.",
               values, where=f"Mailbox: the email '{company}: your invoice is ready'")  # fmt: skip

    return reads(source, "invoice", invoice, fields)


def pay(c: Chain) -> None:
    """Pay an invoice read earlier in Ledger (its reference and amount typed there)."""
    invoices = mail.invoices(c.world)
    i = c.take("paid", c.taken.get("invoiced", [])[:])
    company = invoices[i]["company"]
    for f in ("reference", "amount due"):
        if not any(v.label == f"the {company} invoice's {f}" for v in c.values):
            raise ManifestError(f"a payment of the {company} invoice, whose {f} no line read")
        c.written.add(f"the {company} invoice's {f}")
    value = Value(
        f"the {company} payment's confirmation number",
        f"bank.confirmation_{i}",
        invoices[i]["confirmation"],
        "code",
        [v["confirmation"] for v in invoices],
    )
    c.read(f"In Ledger's Pay tab, pay the {company} invoice with its reference and amount due: "
           "the confirmation number.", [value], f"Pay the {company} invoice in Ledger.",
           "Ledger: the Pay tab, once the payment is made")  # fmt: skip


def shipping(c: Chain) -> None:
    """The tracking number a shop's shipping email gives."""
    parcels = c.world.data("parcels")["parcels"]
    i = c.take("shipped", list(range(min(2, len(parcels)))))  # the first two are emailed
    shop = parcels[i]["shop"]
    value = Value(
        f"the {shop} tracking number",
        f"mail.tracking_{i}",
        parcels[i]["number"],
        "code",
        [p["number"] for p in parcels],
    )
    c.read(f"In Mailbox, find the tracking number of your {shop} order.", [value],
           where=f"Mailbox: the email 'Your {shop} order has shipped'")  # fmt: skip


def track(*fields: str) -> Callable[[Chain], None]:
    """Track a parcel whose number an email gave earlier: its locker, pickup code, day."""
    refs = {"locker": ("locker", "locker", "name"),
            "pickup code": ("pickup", "pickup_code", "code"),
            "delivery day": ("day", "day", "date")}  # fmt: skip

    def source(c: Chain) -> None:
        parcels = c.world.data("parcels")["parcels"]
        i = c.take("tracked", c.taken.get("shipped", [])[:])
        shop = parcels[i]["shop"]
        c.written.add(f"the {shop} tracking number")
        values = []
        for f in fields:
            ref, key, kind = refs[f]
            values.append(Value(f"the {shop} parcel's {f}", f"parcels.{ref}_{i}", parcels[i][key],
                                kind, [p[key] for p in parcels]))  # fmt: skip
        c.read(f"In ParcelTrack, track the {shop} parcel by its tracking number: its "
               f"{fields_phrase(list(fields))}.", values,
               where="ParcelTrack: the parcel's page, found by its tracking number")  # fmt: skip

    return reads(source, "track", track, fields)


def contact(*fields: str) -> Callable[[Chain], None]:
    """A person's page in Contacts: phone number, city, birthday."""
    refs = {"phone number": ("phone", "code"), "city": ("city", "name"),
            "birthday": ("birthday", "date")}  # fmt: skip

    def source(c: Chain) -> None:
        people = contacts.people(c.world)
        person = c.take("person", people, key=lambda p: p["name"])
        name = person["name"]
        values = [
            Value(f"{name}'s {f}", contacts.ref(person, refs[f][0]), person[refs[f][0]],
                  refs[f][1], [p[refs[f][0]] for p in people])
            for f in fields
        ]  # fmt: skip
        c.read(f"In Contacts, open {name}'s page: their {fields_phrase(list(fields))}.", values,
               where=f"Contacts: {name}'s page")  # fmt: skip

    return reads(source, "contact", contact, fields)


def event(*fields: str) -> Callable[[Chain], None]:
    """An event's page in Agenda: where it takes place, who joins you, when it starts."""
    refs = {"place": ("location", "name"), "attendee": ("attendee", "name"),
            "start": ("start", "time")}  # fmt: skip
    words = {"place": "where it takes place", "attendee": "who joins you",
             "start": "when it starts"}  # fmt: skip

    def source(c: Chain) -> None:
        events = c.world.data("agenda")["events"]
        chosen = c.take("event", events, key=lambda e: e["n"])
        title, day = chosen["title"], chosen["day"]
        if "attendee" in fields:
            c.taken.setdefault("met", []).append(chosen["n"])
        labels = {"place": f"where '{title}' on {day} takes place",
                  "attendee": f"who joins you at '{title}' on {day}",
                  "start": f"when '{title}' on {day} starts"}  # fmt: skip
        values = [
            Value(labels[f], f"agenda.{refs[f][0]}_{chosen['n']}", chosen[refs[f][0]],
                  refs[f][1], [e[refs[f][0]] for e in events])
            for f in fields
        ]  # fmt: skip
        c.read(f"In Agenda, open '{title}' on {day}: "
               f"{fields_phrase([words[f] for f in fields])}.", values,
               where=f"Agenda: the {day} tab, the page of '{title}'")  # fmt: skip

    return reads(source, "event", event, fields)


def attendee_phone(c: Chain) -> None:
    """The phone number of the person an event read earlier said joins you."""
    events = {e["n"]: e for e in c.world.data("agenda")["events"]}
    n = c.take("called", c.taken.get("met", []))
    title, day, name = events[n]["title"], events[n]["day"], events[n]["attendee"]
    people = contacts.people(c.world)
    person = next(p for p in people if p["name"] == name)
    value = Value(
        f"the phone number of the person at '{title}' on {day}",
        contacts.ref(person, "phone"),
        person["phone"],
        "code",
        [p["phone"] for p in people],
    )
    c.read(f"In Contacts, open the page of the person who joins you at '{title}' on {day}: "
           "their phone number.", [value],
           where="Contacts: the page of the person Agenda names")  # fmt: skip


def flight(*fields: str) -> Callable[[Chain], None]:
    """The cheapest flight to a city in SkyBook: its number and fare (the list), its gate and
    seats left (its page)."""
    refs = {"flight number": ("", "code"), "fare": ("price", "price"),
            "gate": ("gate", "code"), "seats left": ("seats", "number")}  # fmt: skip

    def source(c: Chain) -> None:
        results = c.world.data("flights")["results"]
        city = c.take("city", list(c.world.data("flights")["destinations"]))
        best = unique_best(results[city], lambda f: cents_of(f["price"]), min)
        key = best["code"].lower()
        data = {"flight number": best["code"], "fare": best["price"], "gate": best["gate"],
                "seats left": best["seats_left"]}  # fmt: skip
        others = {f: [str(x[k]) for x in results[city]] for f, k in
                  (("flight number", "code"), ("fare", "price"), ("gate", "gate"),
                   ("seats left", "seats_left"))}  # fmt: skip
        labels = {"flight number": f"the number of the cheapest flight to {city}",
                  "fare": f"the fare of the cheapest flight to {city}",
                  "gate": f"the gate of the cheapest flight to {city}",
                  "seats left": f"the seats left on the cheapest flight to {city}"}  # fmt: skip
        values = [
            Value(labels[f], refs[f][0] and f"flights.{refs[f][0]}_{key}", str(data[f]),
                  refs[f][1], others[f])
            for f in fields
        ]  # fmt: skip
        c.read(f"In SkyBook, find the cheapest flight from Lisbon to {city}: its "
               f"{fields_phrase(list(fields))}.", values,
               where=f"SkyBook: the results for {city}, and the flight's page")  # fmt: skip

    return reads(source, "flight", flight, fields)


def weather(*fields: str) -> Callable[[Chain], None]:
    """A saved city's page in SkyCast: its humidity, its high on a day."""

    def source(c: Chain) -> None:
        cities = c.world.data("weather")["cities"]
        city = c.take("weather", cities, key=lambda x: x["name"])
        name, slug = city["name"], city["slug"]
        values, words = [], []
        for f in fields:
            if f == "humidity":
                values.append(
                    Value(
                        f"the humidity in {name}",
                        f"weather.humidity_{slug}",
                        city["humidity"],
                        "number",
                        [x["humidity"] for x in cities],
                    )
                )
                words.append("its humidity")
            else:  # a day's high
                day = c.rng.choice(city["week"])
                values.append(
                    Value(
                        f"the high in {name} on {day['day']}",
                        f"weather.high_{slug}_{day['day'].lower()}",
                        day["high"],
                        "number",
                        [d["high"] for d in city["week"]],
                    )
                )
                words.append(f"its high on {day['day']}")
        c.read(f"In SkyCast, open {name}: {fields_phrase(words)}.", values,
               where=f"SkyCast: {name}'s page")  # fmt: skip

    return reads(source, "weather", weather, fields)


def account(*fields: str) -> Callable[[Chain], None]:
    """A Ledger account: its balance (the Accounts tab), its IBAN (its page)."""
    kinds = {"balance": "price", "IBAN": "code"}

    def source(c: Chain) -> None:
        accounts = c.world.data("bank")["accounts"]
        chosen = c.take("account", accounts, key=lambda a: a["key"])
        name = chosen["name"]
        values = [
            Value(f"your {name} account's {f}", f"bank.{f.lower()}_{chosen['key']}",
                  chosen[f.lower()], kinds[f], [a[f.lower()] for a in accounts])
            for f in fields
        ]  # fmt: skip
        c.read(f"In Ledger's Accounts tab, open your {name} account: its "
               f"{fields_phrase(list(fields))}.", values,
               where=f"Ledger: the Accounts tab, the {name} account")  # fmt: skip

    return reads(source, "account", account, fields)


def payment(c: Chain) -> None:
    """A payment in Ledger's activity: what you paid a merchant, and when."""
    payments = [p for p in c.world.data("bank")["payments"] if p["amount"].startswith("-")]
    merchants = [p["merchant"] for p in payments]
    once = [p for p in payments if merchants.count(p["merchant"]) == 1]
    chosen = c.take("merchant", once, key=lambda p: p["merchant"])
    i = payments.index(chosen)
    merchant = chosen["merchant"]
    values = [
        Value(
            f"what you paid {merchant}",
            f"bank.paid_{i}",
            chosen["amount"][1:],
            "price",
            [p["amount"][1:] for p in payments],
        ),
        Value(
            f"when you paid {merchant}",
            f"bank.date_{i}",
            chosen["date"],
            "date",
            [p["date"] for p in payments],
        ),
    ]
    c.read(f"In Ledger's Activity tab, find your payment to {merchant}: what you paid and when.",
           values, where=f"Ledger: the Activity tab, the payment to {merchant}")  # fmt: skip


def code(c: Chain) -> None:
    """A verification code a service emailed."""
    emails = [e for e in c.world.data("mail")["emails"] if e["sender"] in mail.SERVICES]
    chosen = c.take("service", emails, key=lambda e: e["sender"])
    service = chosen["sender"]
    value = Value(
        f"the {service} verification code",
        f"mail.code_{service.lower()}",
        chosen["code"],
        "code",
        [e["code"] for e in emails],
    )
    c.read(f"In Mailbox, read the {service} verification code.", [value],
           where=f"Mailbox: the email from {service}")  # fmt: skip


def room(c: Chain) -> None:
    """The room of a meeting an invitation in Mailbox names."""
    invites = [e for e in c.world.data("mail")["emails"] if "room" in e]
    chosen = c.take("invite", invites, key=lambda e: e["topic"])
    topic = chosen["topic"]
    value = Value(
        f"the {topic} meeting's room",
        f"mail.{chosen['room_var']}",
        chosen["room"],
        "name",
        [e["room"] for e in invites],
    )
    c.read(f"In Mailbox, read the invitation to the {topic} meeting: its room.", [value],
           where=f"Mailbox: the invitation to the {topic} meeting")  # fmt: skip


# --- sinks ----------------------------------------------------------------------------------

NOTE_TITLES = ("Plans", "To do", "Week", "Errands", "Checklist", "Summary", "Reminders")


def unwritten(c: Chain, sink: str) -> list[Value]:
    values = c.unwritten()
    if not values:
        raise ManifestError(f"a {sink} with nothing to write: every value read is written")
    return values


def note(c: Chain) -> None:
    """A note in Notes with every value no sink wrote yet."""
    values = unwritten(c, "note")
    title = c.take("note", list(NOTE_TITLES))
    c.written |= {v.label for v in values}
    line = f"In Notes, write a note titled '{title}' with: {listed([v.label for v in values])}."
    c.read(line, [], line)


def message(c: Chain) -> None:
    """A Chatter message with every value no sink wrote yet."""
    values = unwritten(c, "message")
    person = c.take("chat", list(CHATS))
    c.written |= {v.label for v in values}
    line = f"In Chatter, send {person} one message with: {listed([v.label for v in values])}."
    c.read(line, [], line)


# --- the answer -----------------------------------------------------------------------------


def answer_first(c: Chain) -> Value:
    """The first value the chain read (the farthest from the answer)."""
    return c.values[0]


def answer_lowest(kind: str, pick=min) -> Callable[[Chain], Value]:
    """The lowest (or highest) of the chain's values of a kind: a comparison of values read
    apps apart."""

    def choose(c: Chain) -> Value:
        values = [v for v in c.values if v.kind == kind]
        if len(values) < 2:
            raise AmbiguousInstance(f"fewer than two {kind}s to compare")
        best = unique_best(values, lambda v: cents_of(v.value), pick)
        word = "lowest" if pick is min else "highest"
        line = f"Finally, answer with the {word} of: {listed([v.label for v in values])}."
        c.lines.append(line)
        c.tasks.append(line)
        return best

    choose.compares, choose.kind = True, kind
    return choose


SINKS = ("note", "message")
# The kinds of the values of sentences that are no factory's (read whole).
WHOLE = {"payment": ("price", "date"), "code": ("code",), "room": ("name",)}


def _name(part: Callable) -> str:
    return getattr(part, "leg", part.__name__)


def _each_sink_writes(parts: list) -> bool:
    """Whether every note or message has a sentence reading something since the one before."""
    fresh = False
    for part in parts:
        if _name(part) in SINKS:
            if not fresh:
                return False
            fresh = False
        else:
            fresh = True
    return True


def simplified(parts: list, answer) -> list:
    """L1's configuration of a chain, STAMP's "reduce the targets": the same sentences in the
    same order, each source reading its first field only (and what a later sentence needs of
    it: an invoice's reference and amount when it is paid, who joins you at an event whose
    attendee is called, the fields of the kind the answer compares), and one source fewer:
    the last one whose values are only written down (not the first, whose value may be the
    answer; none that a later sentence needs, nor one of the kind compared)."""
    needed = set()
    if pay in parts:
        needed |= {"reference", "amount due"}
    if attendee_phone in parts:
        needed.add("attendee")
    compared = getattr(answer, "kind", None)
    simpler = []
    for part in parts:
        fields = getattr(part, "fields", ())
        keep = [f for i, f in enumerate(fields) if i == 0 or f in needed or KINDS[f] == compared]
        simpler.append(part.factory(*keep) if len(keep) < len(fields) else part)
    for i in reversed(range(1, len(simpler))):
        part = simpler[i]
        kinds = WHOLE.get(_name(part)) or [KINDS[f] for f in getattr(part, "fields", ())]
        if not kinds or compared in kinds or needed & set(getattr(part, "fields", ())):
            continue  # a sink, a payment, a tracking, a shipping email; or needed later
        rest = simpler[:i] + simpler[i + 1 :]
        if _each_sink_writes(rest):
            return rest
    return simpler


DRAWS = 20  # how many times a chain's entities are drawn again when a value shows in its goal


def said_in(text: str, value: str) -> bool:
    """Whether ``value`` is a whole word or number of ``text``."""
    return re.search(rf"(?<![\w$.,]){re.escape(value)}(?![\w]|[.,]\d)", text) is not None


def resolve(world: World, rng: random.Random, parts: list, answer) -> Resolved:
    """An instance of a chain: its sentences, the gold, the variables, the candidates. The
    entities are drawn again (from the same seeded numbers, so the instance stays the seed's)
    while a value the chain reads shows in its goal by chance (the person joining you at an
    event who is also a contact asked about): what the goal says needs no memory."""
    for _ in range(DRAWS):
        c, gold = _drawn(world, rng, parts, answer)
        text = "\n".join([*c.lines, *c.tasks])
        if not any(said_in(text, v.value) for v in c.values if v.kind in ("name", "code")):
            break
    return _resolved(c, gold, answer)


def _drawn(world: World, rng: random.Random, parts: list, answer) -> tuple[Chain, Value]:
    c = Chain(world, rng)
    for part in parts:
        part(c)
    return c, answer(c)


def _resolved(c: Chain, gold: Value, answer) -> Resolved:
    compares = getattr(answer, "compares", False)
    if not compares:
        c.lines.append(f"Finally, answer with {gold.label}.")
        c.tasks.append(f"Finally, answer with {gold.label}.")
    # The natural goal names every value that is written, compared or answered; one only read
    # would be a memory variable it never asks for.
    named = c.written | {gold.label}
    named |= {v.label for v in c.values if compares and v.kind == gold.kind}
    unnamed = [v.label for v in c.values if v.label not in named]
    if unnamed:
        raise ManifestError(f"a chain reads {unnamed[0]!r} and never uses it")
    refs = list(dict.fromkeys(v.ref for v in c.values if v.ref))  # a flight's number is none
    candidates = list(dict.fromkeys([gold.value, *gold.others]))
    if compares:
        candidates = list(dict.fromkeys(v.value for v in c.values if v.kind == gold.kind))
    params = {"steps": "\n".join(c.lines), "task": "\n".join(c.tasks)}
    knowledge = "; ".join(f"{v.label} ({v.where})" for v in c.values)
    return Resolved(gold.value, refs, params, candidates, knowledge)


# The app each sentence works in (a chain's apps, in order).
APPS = {
    "invoice": "mail",
    "shipping": "mail",
    "code": "mail",
    "room": "mail",
    "pay": "bank",
    "account": "bank",
    "payment": "bank",
    "track": "parcels",
    "contact": "contacts",
    "attendee_phone": "contacts",
    "event": "agenda",
    "flight": "flights",
    "weather": "weather",
    "note": "notes",
    "message": "chatter",
}


def app_of(part: Callable) -> str:
    """The app a sentence (a source or sink above, or one a factory made) works in."""
    return APPS[getattr(part, "leg", part.__name__)]
