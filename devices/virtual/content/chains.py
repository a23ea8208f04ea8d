"""Long-horizon templates (issue 35): chains of sub-tasks across apps, where values read at the
start are typed or answered many screens later, after other work (another email read, a form
filled, another person looked up), so that they have left the agent's last K screens when they
are used. Each instance carries 3 to 6 memory values among distractors of the same kind (other
invoices' references and amounts, other people's phones), chosen and ordered by the seed."""

from __future__ import annotations

from ..templates import Resolved, Template
from ..world import AmbiguousInstance, World, cents_of
from . import contacts, mail


def pay_two_invoices(world: World, rng) -> Resolved:
    """Two of the three emailed invoices, in an order of the seed; the gold is the first
    payment's confirmation, read before the second invoice is even opened."""
    invoices = mail.invoices(world)
    first, second = rng.sample(range(len(invoices)), 2)
    refs = [
        f"mail.invoice{first}_ref",
        f"mail.invoice{first}_amount",
        f"mail.invoice{second}_ref",
        f"mail.invoice{second}_amount",
        f"bank.confirmation_{first}",
    ]
    return Resolved(
        invoices[first]["confirmation"],
        refs,
        {"first": invoices[first]["company"], "second": invoices[second]["company"]},
        [v["confirmation"] for v in invoices],
    )


def attendees_to_mia(world: World, rng) -> Resolved:
    """Three events on three different days, each with a different attendee (not Mia, who gets
    the message); the gold is the phone of the first event's attendee."""
    people = {p["name"]: p for p in contacts.people(world)}
    events = [e for e in world.data("agenda")["events"] if e["attendee"] != "Mia Santos"]
    rng.shuffle(events)
    chosen: list[dict] = []
    for event in events:
        if all(event["day"] != c["day"] and event["attendee"] != c["attendee"] for c in chosen):
            chosen.append(event)
        if len(chosen) == 3:
            break
    else:
        raise AmbiguousInstance("no three events on different days with different attendees")
    persons = [people[e["attendee"]] for e in chosen]
    refs = [f"agenda.attendee_{e['n']}" for e in chosen]
    refs += [contacts.ref(p, "phone") for p in persons]
    params = {}
    for i, event in enumerate(chosen, 1):
        params[f"title{i}"], params[f"day{i}"] = event["title"], event["day"]
    return Resolved(persons[0]["phone"], refs, params, [p["phone"] for p in people.values()])


def parcel_pickups_note(world: World, rng) -> Resolved:
    """The two parcels whose shipping emails are in Mailbox, tracked in an order of the seed;
    the gold is the pickup code of the first, read before the second is tracked."""
    parcels = world.data("parcels")["parcels"]
    first, second = rng.sample(range(2), 2)
    refs = [f"mail.tracking_{first}", f"mail.tracking_{second}"]
    refs += [f"parcels.{what}_{i}" for i in (first, second) for what in ("locker", "pickup")]
    return Resolved(
        parcels[first]["pickup_code"],
        refs,
        {"first": parcels[first]["shop"], "second": parcels[second]["shop"]},
        [p["pickup_code"] for p in parcels],
    )


def direct_fares_note(world: World, rng) -> Resolved:
    """Three destinations with a direct flight, in an order of the seed; in each one's list
    the other fares (cheaper ones with a stop among them) are distractors. The gold is the
    lowest of the three cheapest direct fares."""
    results = world.data("flights")["results"]
    cities = [c for c in world.data("flights")["destinations"]
              if any(f["stops"] == "Direct" for f in results[c])]  # fmt: skip
    if len(cities) < 3:
        raise AmbiguousInstance(f"{len(cities)} destinations have a direct flight, not 3")
    chosen = rng.sample(cities, 3)
    cheapest = [
        min((f for f in results[c] if f["stops"] == "Direct"), key=lambda f: cents_of(f["price"]))
        for c in chosen
    ]
    refs = [f"flights.{what}_{f['code'].lower()}" for f in cheapest for what in ("price", "seats")]
    lowest = min(cheapest, key=lambda f: cents_of(f["price"]))
    fares = [f["price"] for c in chosen for f in results[c]]
    return Resolved(lowest["price"], refs, dict(zip("abc", chosen, strict=True)), fares)


TEMPLATES = [
    Template(
        "bank-pay-two-invoices", ("mail", "bank"),
        "Pay two of the invoices in your Mailbox in Ledger's Pay tab, entering each one's "
        "reference and amount: first the one from {first}, then the one from {second}. "
        "Answer with the confirmation number of the payment to {first}.",
        "exact", pay_two_invoices, "code", "cross_app", "type", "Purchase / Order",
        "the confirmation number only (e.g. PAY-123456)",
    ),
    Template(
        "agenda-attendees-to-mia", ("agenda", "contacts", "chatter"),
        "Three people join you this week, according to Agenda: at '{title1}' on {day1}, at "
        "'{title2}' on {day2} and at '{title3}' on {day3}. Send Mia, in one Chatter message, "
        "the three people's phone numbers from Contacts. Then answer with the phone number "
        "of the person who joins you at '{title1}'.",
        "exact", attendees_to_mia, "name", "cross_app", "type", "Sharing",
        "the number exactly as Contacts shows it",
    ),
    Template(
        "parcels-pickups-note", ("mail", "parcels", "notes"),
        "Your {first} and {second} orders have shipped: their emails in Mailbox give the "
        "tracking numbers. Track both parcels in ParcelTrack, the {first} one first, then write "
        "a note titled 'Pickups' in Notes with each parcel's locker and pickup code. Answer "
        "with the pickup code of the {first} parcel.",
        "exact", parcel_pickups_note, "code", "cross_app", "type", "Content Creation",
        "the pickup code only (e.g. 123456)",
    ),
    Template(
        "flights-direct-fares-note", ("flights", "notes", "chatter"),
        "You may fly from Lisbon to {a}, {b} or {c}. In SkyBook, find the cheapest direct "
        "flight to each of them and, on its page, how many seats are left. Write a note titled "
        "'Fares' in Notes with each city's flight, fare and seats left, then tell Mia in "
        "Chatter which of the three cities has the lowest fare, and that fare. Answer with it.",
        "number", direct_fares_note, "price", "cross_app", "compare", "Compare & Decide",
    ),
]  # fmt: skip
