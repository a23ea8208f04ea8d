"""The scripted solver of the long templates made of sentences (issue 35;
``devices/virtual/content/legs.py``): it reads the goal line by line, each line one sub-task in
one app, does it through the screen, and keeps what it read under the label the line gives it
("Kofi Shah's phone number"), for the later lines that name that label (a note, a message, a
payment) and for the final answer.

The natural goal of level L3 says only what to do (the notes and messages to write, the
invoices to pay, the answer): a value a line names that no earlier line read is found by its
label ("the Homely parcel's locker": track the Homely parcel, whose number its shipping email
gives), as an agent works it out; the values a line names of one page are read there at once.

Like every solver (``agents/solvers.py``) it reads only the goal and each screen's UI XML. The
goal's lines end at its first blank line (what follows, the task-required knowledge of a level
L1 or L2 instance, only repeats where to look).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .solvers import (
    AGENDA,
    CHATTER,
    CONTACTS,
    LEDGER,
    MAILBOX,
    NOTES,
    PARCELTRACK,
    SKYBOOK,
    SKYCAST,
    Moves,
    Script,
    Session,
    SolverStuck,
    price_value,
    says,
    solver_family,
)  # fmt: skip

LABELS = {
    AGENDA: "Agenda", CHATTER: "Chatter", CONTACTS: "Contacts", LEDGER: "Ledger",
    MAILBOX: "Mailbox", NOTES: "Notes", PARCELTRACK: "ParcelTrack", SKYBOOK: "SkyBook",
    SKYCAST: "SkyCast",
}  # fmt: skip
MAX_BACKS = 6


class Chain:
    """The goal's lines being played: what was read, by label."""

    def __init__(self, s: Session):
        self.s = s
        self.found: dict[str, str] = {}

    def keep(self, label: str, value: str) -> str:
        self.found[label] = self.s.remember(label, value)
        return value

    def need(self, label: str) -> Moves[str]:
        """The value of ``label``: as read before, or read now where its label says."""
        yield from self.gather([label])
        return self.found[label]

    def gather(self, labels: list[str]) -> Moves[list[tuple[str, str]]]:
        """The values of ``labels``, in order; those not read yet are found by their labels,
        the fields of one page read in one visit."""
        for label in labels:
            if label in self.found:
                continue
            play, page, _ = where_is(label)
            fields = []
            for other in labels:
                if other not in self.found:
                    other_play, other_page, field = where_is(other)
                    if (other_play, other_page) == (play, page) and field:
                        fields.append(field)
            said = dict(page)
            if fields:
                said["fields"] = joined(list(dict.fromkeys(fields)))
            yield from play(self, said)
            if label not in self.found:
                raise SolverStuck(f"{label!r} was not where its label says")
        return [(label, self.found[label]) for label in labels]


def joined(fields: list[str]) -> str:
    """The three -> ``"reference, amount due and due date"``."""
    return fields[0] if len(fields) == 1 else ", ".join(fields[:-1]) + " and " + fields[-1]


def fields_of(phrase: str) -> list[str]:
    """``"reference, amount due and due date"`` -> the three."""
    head, _, last = phrase.rpartition(" and ")
    return [*head.split(", "), last] if head else [last]


def enter(s: Session, package: str) -> Moves[None]:
    """The app's first screen: open it, then up (its ← button) from wherever it was left."""
    if s.view.package != package:
        yield s.open_app(package, LABELS[package])
    if package == PARCELTRACK and s.view.find(id="parcel_number") is not None:
        yield s.back()  # the last parcel's result, back to the form
    for _ in range(MAX_BACKS):
        up = s.view.find(id="nav_back")
        if up is None:
            return
        yield s.click(up, "up, to the app's first screen")
    raise SolverStuck(f"{LABELS[package]} still shows a way up after {MAX_BACKS} taps")


def email(s: Session, subject: str) -> Moves[str]:
    yield from enter(s, MAILBOX)
    yield from s.scroll_to(id="subject", text=subject)
    yield s.tap(id="subject", text=subject)
    return "\n".join(el.text for el in s.view.all(id="mail_body"))


# --- one function per kind of line: (pattern, play) ----------------------------------------

Line = Callable[[Chain, dict[str, str]], Moves[None]]
LINES: list[tuple[re.Pattern[str], Line]] = []


def line(pattern: str):
    def register(play: Line) -> Line:
        LINES.append((re.compile(pattern), play))
        return play

    return register


INVOICE = {"reference": r"Reference: (INV-[0-9]+)", "amount due": r"Amount due: (\$[0-9,.]+)",
           "due date": r"Please pay by ([0-9]+ [A-Za-z]+)"}  # fmt: skip


@line(r"^In Mailbox, read the invoice from (?P<company>.+?): its (?P<fields>.+)\.$")
def read_invoice(c: Chain, said: dict[str, str]) -> Moves[None]:
    company = said["company"]
    text = yield from email(c.s, f"{company}: your invoice is ready")
    for field in fields_of(said["fields"]):
        c.keep(f"the {company} invoice's {field}", says(text, INVOICE[field]))


@line(r"^Pay the (?P<company>.+?) invoice in Ledger\.$")
@line(r"^In Ledger's Pay tab, pay the (?P<company>.+?) invoice with its reference and amount "
      r"due: the confirmation number\.$")  # fmt: skip
def pay_invoice(c: Chain, said: dict[str, str]) -> Moves[None]:
    s, company = c.s, said["company"]
    [(_, reference), (_, amount)] = yield from c.gather(
        [f"the {company} invoice's reference", f"the {company} invoice's amount due"]
    )
    yield from enter(s, LEDGER)
    yield s.tap(id="tab_pay")
    yield s.tap(id="pay_reference")
    yield s.type(reference)
    yield s.tap(id="pay_amount")
    yield s.type(amount)
    yield s.tap(id="pay")
    if s.view.find(id="confirmation") is None:
        raise SolverStuck(f"Ledger did not take the payment of {reference}")
    c.keep(f"the {company} payment's confirmation number", s.view.text(id="confirmation"))


@line(r"^In Mailbox, find the tracking number of your (?P<shop>.+?) order\.$")
def read_tracking(c: Chain, said: dict[str, str]) -> Moves[None]:
    shop = said["shop"]
    text = yield from email(c.s, f"Your {shop} order has shipped")
    c.keep(f"the {shop} tracking number", says(text, r"Tracking number: (PT[0-9]+)"))


PARCEL = {"locker": "locker", "pickup code": "pickup_code", "delivery day": "delivery_day"}


@line(r"^In ParcelTrack, track the (?P<shop>.+?) parcel by its tracking number: "
      r"its (?P<fields>.+)\.$")  # fmt: skip
def track_parcel(c: Chain, said: dict[str, str]) -> Moves[None]:
    s, shop = c.s, said["shop"]
    number = yield from c.need(f"the {shop} tracking number")
    yield from enter(s, PARCELTRACK)
    yield s.tap(id="tracking_input")
    yield s.type(number)
    yield s.enter()
    if s.view.find(id="parcel_number") is None or s.view.text(id="parcel_number") != number:
        raise SolverStuck(f"ParcelTrack found no parcel {number}")
    for field in fields_of(said["fields"]):
        c.keep(f"the {shop} parcel's {field}", s.view.text(id=PARCEL[field]))


def contact_page(s: Session, name: str) -> Moves[None]:
    yield from enter(s, CONTACTS)
    yield from s.scroll_to(id="contact_name", text=name)
    yield s.tap(id="contact_name", text=name)


@line(r"^In Contacts, open the page of the person who joins you at '(?P<event>.+)' on "
      r"(?P<day>\w+): their phone number\.$")  # fmt: skip
def attendee_phone(c: Chain, said: dict[str, str]) -> Moves[None]:
    event = f"'{said['event']}' on {said['day']}"
    name = yield from c.need(f"who joins you at {event}")
    yield from contact_page(c.s, name)
    c.keep(f"the phone number of the person at {event}", c.s.view.text(id="phone"))


PERSON = {"phone number": "phone", "city": "city", "birthday": "birthday"}


@line(r"^In Contacts, open (?P<name>.+?)'s page: their (?P<fields>.+)\.$")
def read_contact(c: Chain, said: dict[str, str]) -> Moves[None]:
    name = said["name"]
    yield from contact_page(c.s, name)
    for field in fields_of(said["fields"]):
        c.keep(f"{name}'s {field}", c.s.view.text(id=PERSON[field]))


@line(r"^In Agenda, open '(?P<event>.+)' on (?P<day>\w+): (?P<fields>.+)\.$")
def read_event(c: Chain, said: dict[str, str]) -> Moves[None]:
    s, title = c.s, said["event"]
    event = f"'{title}' on {said['day']}"
    yield from enter(s, AGENDA)
    yield s.tap(desc=said["day"])
    yield from s.scroll_to(id="event_title", text=title)
    yield s.tap(id="event_title", text=title)
    for field in fields_of(said["fields"]):
        if field == "where it takes place":
            c.keep(f"where {event} takes place", s.view.text(id="location"))
        elif field == "who joins you":
            c.keep(f"who joins you at {event}", s.view.text(id="attendee"))
        elif field == "when it starts":
            start = s.view.text(id="event_time").split("–")[0].strip()
            c.keep(f"when {event} starts", start)
        else:
            raise SolverStuck(f"an event's page shows no {field!r}")


FLIGHT_PAGE = {"gate": "gate", "seats left": "seats_left"}


@line(r"^In SkyBook, find the cheapest flight from Lisbon to (?P<city>.+?): its (?P<fields>.+)\.$")
def read_flight(c: Chain, said: dict[str, str]) -> Moves[None]:
    s, city = c.s, said["city"]
    fields = fields_of(said["fields"])
    yield from enter(s, SKYBOOK)
    yield s.tap(text=city)
    flights = yield from s.collect("result_")
    if not flights:
        raise SolverStuck(f"SkyBook lists no flight to {city}")
    best = min(flights, key=lambda row: price_value(row["price"]))
    listed = {"flight number": best["code"], "fare": best["price"]}
    for field in fields:
        if field in listed:
            c.keep(flight_label(field, city), listed[field])
    if any(field in FLIGHT_PAGE for field in fields):
        yield from s.scroll_to(id="code", text=best["code"])
        yield s.tap(id="code", text=best["code"])
        for field in fields:
            if field in FLIGHT_PAGE:
                c.keep(flight_label(field, city), s.view.text(id=FLIGHT_PAGE[field]))


def flight_label(field: str, city: str) -> str:
    if field == "seats left":
        return f"the seats left on the cheapest flight to {city}"
    return f"the {field.removeprefix('flight ')} of the cheapest flight to {city}"


@line(r"^In SkyCast, open (?P<city>.+?): (?P<fields>.+)\.$")
def read_weather(c: Chain, said: dict[str, str]) -> Moves[None]:
    s, city = c.s, said["city"]
    yield from enter(s, SKYCAST)
    yield from s.scroll_to(id="city_name", text=city)
    yield s.tap(id="city_name", text=city)
    for field in fields_of(said["fields"]):
        if field == "its humidity":
            c.keep(f"the humidity in {city}", s.view.text(id="humidity"))
            continue
        day = re.fullmatch(r"its high on (\w+)", field)
        if day is None:
            raise SolverStuck(f"a city's page shows no {field!r}")
        row = next((r for r in s.view.rows("day_") if r["day_name"] == day.group(1)), None)
        if row is None:
            raise SolverStuck(f"{city}'s forecast has no {day.group(1)}")
        c.keep(f"the high in {city} on {day.group(1)}", row["day_high"])


@line(r"^In Ledger's Accounts tab, open your (?P<name>\w+) account: its (?P<fields>.+)\.$")
def read_account(c: Chain, said: dict[str, str]) -> Moves[None]:
    s, name = c.s, said["name"]
    fields = fields_of(said["fields"])
    yield from enter(s, LEDGER)
    yield s.tap(id="tab_accounts")
    if "balance" in fields:
        row = next((r for r in s.view.rows("account_") if r["account_name"] == name), None)
        if row is None:
            raise SolverStuck(f"Ledger shows no {name} account")
        c.keep(f"your {name} account's balance", row["balance"])
    if "IBAN" in fields:
        yield s.tap(id="account_name", text=name)
        c.keep(f"your {name} account's IBAN", s.view.text(id="iban"))


@line(r"^In Ledger's Activity tab, find your payment to (?P<merchant>.+?): what you paid and "
      r"when\.$")  # fmt: skip
def read_payment(c: Chain, said: dict[str, str]) -> Moves[None]:
    s, merchant = c.s, said["merchant"]
    yield from enter(s, LEDGER)
    yield s.tap(id="tab_activity")
    yield from s.scroll_to(id="merchant", text=merchant)
    for move, part in ((s.swipe_up, 0.15), (s.swipe_down, 0.3), (None, 0)):
        row = next((r for r in s.view.rows("txn_") if r.fields.get("merchant") == merchant), None)
        if row is None:
            raise SolverStuck(f"Ledger's activity shows no payment to {merchant}")
        if {"amount", "date"} <= row.fields.keys() or move is None:
            break
        # The merchant shows, its date is cut by the list's edge (a short screen): a little
        # further, one way and then the other.
        yield move(part=part)
    c.keep(f"what you paid {merchant}", row["amount"].lstrip("-"))
    c.keep(f"when you paid {merchant}", row["date"])


@line(r"^In Mailbox, read the (?P<service>\S+) verification code\.$")
def read_code(c: Chain, said: dict[str, str]) -> Moves[None]:
    service = said["service"]
    text = yield from email(c.s, f"Your {service} verification code")
    c.keep(f"the {service} verification code", says(text, r"Use ([0-9]+)"))


@line(r"^In Mailbox, read the invitation to the (?P<topic>.+?) meeting: its room\.$")
def read_room(c: Chain, said: dict[str, str]) -> Moves[None]:
    topic = said["topic"]
    text = yield from email(c.s, f"Invitation: {topic} meeting")
    c.keep(f"the {topic} meeting's room", says(text, r"Where: (.+)"))


def written(values: list[tuple[str, str]]) -> str:
    return "; ".join(f"{label}: {value}" for label, value in values)


@line(r"^In Notes, write a note titled '(?P<heading>.+?)' with: (?P<labels>.+)\.$")
def write_note(c: Chain, said: dict[str, str]) -> Moves[None]:
    s, text = c.s, written((yield from c.gather(said["labels"].split("; "))))
    yield from enter(s, NOTES)
    yield s.tap(id="new_note")
    yield s.tap(id="note_title")
    yield s.type(said["heading"])
    yield s.tap(id="note_body")
    yield s.type(text)
    yield s.tap(id="save_note")


@line(r"^In Chatter, send (?P<person>\w+) one message with: (?P<labels>.+)\.$")
def send_message(c: Chain, said: dict[str, str]) -> Moves[None]:
    s, text = c.s, written((yield from c.gather(said["labels"].split("; "))))
    yield from enter(s, CHATTER)
    yield s.tap(id=f"chat_{said['person'].lower()}")
    yield s.tap(id="message_input")
    yield s.type(text)
    yield s.tap(id="send")


@line(r"^Finally, answer with the (?P<word>lowest|highest) of: (?P<labels>.+)\.$")
def answer_best(c: Chain, said: dict[str, str]) -> Moves[None]:
    values = [value for _, value in (yield from c.gather(said["labels"].split("; ")))]
    pick = min if said["word"] == "lowest" else max
    yield c.s.answer(pick(values, key=price_value))


@line(r"^Finally, answer with (?P<value>.+)\.$")
def answer_with(c: Chain, said: dict[str, str]) -> Moves[None]:
    value = yield from c.need(said["value"])
    yield c.s.answer(value)


# --- where a value is, by its label (the natural goal's lines name values, not pages) -------

Page = dict[str, str]
LABELLED: list[tuple[re.Pattern[str], Line, Callable[[dict[str, str]], tuple[Page, str]]]] = []


def labelled(pattern: str, play: Line, page: Callable[[dict[str, str]], tuple[Page, str]]):
    LABELLED.append((re.compile(pattern), play, page))


def where_is(label: str) -> tuple[Line, tuple[tuple[str, str], ...], str]:
    """The line that reads ``label``'s value, the page it reads it on, and the field."""
    for pattern, play, page in LABELLED:
        said = pattern.match(label)
        if said is not None:
            entity, field = page(said.groupdict())
            return play, tuple(sorted(entity.items())), field
    raise SolverStuck(f"the goal names {label!r}, and no line reads it")


def _field(name: str):
    return lambda said: ({k: v for k, v in said.items() if k != "field"}, said.get("field", name))


EVENT_FIELDS = {"where": "where it takes place", "who": "who joins you", "when": "when it starts"}
labelled(r"^the (?P<company>.+?) invoice's (?P<field>reference|amount due|due date)$",
         read_invoice, _field(""))  # fmt: skip
labelled(r"^the (?P<shop>.+?) tracking number$", read_tracking, _field(""))
labelled(r"^the (?P<shop>.+?) parcel's (?P<field>locker|pickup code|delivery day)$",
         track_parcel, _field(""))  # fmt: skip
labelled(r"^the phone number of the person at '(?P<event>.+)' on (?P<day>\w+)$",
         attendee_phone, _field(""))  # fmt: skip
labelled(r"^where '(?P<event>.+)' on (?P<day>\w+) takes place$", read_event,
         _field(EVENT_FIELDS["where"]))  # fmt: skip
labelled(r"^who joins you at '(?P<event>.+)' on (?P<day>\w+)$", read_event,
         _field(EVENT_FIELDS["who"]))  # fmt: skip
labelled(r"^when '(?P<event>.+)' on (?P<day>\w+) starts$", read_event,
         _field(EVENT_FIELDS["when"]))  # fmt: skip
labelled(r"^the (?P<what>number|fare|gate) of the cheapest flight to (?P<city>.+)$", read_flight,
         lambda said: ({"city": said["city"]},
                       "flight number" if said["what"] == "number" else said["what"]))  # fmt: skip
labelled(r"^the seats left on the cheapest flight to (?P<city>.+)$", read_flight,
         _field("seats left"))  # fmt: skip
labelled(r"^the humidity in (?P<city>.+)$", read_weather, _field("its humidity"))
labelled(r"^the high in (?P<city>.+?) on (?P<day>\w+)$", read_weather,
         lambda said: ({"city": said["city"]}, f"its high on {said['day']}"))  # fmt: skip
labelled(r"^your (?P<name>\w+) account's (?P<field>balance|IBAN)$", read_account, _field(""))
labelled(r"^(?:what|when) you paid (?P<merchant>.+)$", read_payment, _field(""))
labelled(r"^the (?P<service>\S+) verification code$", read_code, _field(""))
labelled(r"^the (?P<topic>.+?) meeting's room$", read_room, _field(""))
labelled(r"^(?P<name>.+?)'s (?P<field>phone number|city|birthday)$", read_contact, _field(""))


@solver_family("chain-")
def solve_chain(s: Session) -> Script:
    """Every line of the goal (up to its first blank line), in order."""
    c = Chain(s)
    for text in s.goal.split("\n\n")[0].splitlines():
        text = text.strip()
        for pattern, play in LINES:
            said = pattern.match(text)
            if said is not None:
                yield from play(c, said.groupdict())
                break
        else:
            raise SolverStuck(f"no sub-task reads like {text!r}")
