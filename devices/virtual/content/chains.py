"""Long-horizon templates (issue 35): chains of sub-tasks across apps, where values read at the
start are typed or answered many screens later, after other work (another email read, a form
filled, another person looked up), so that they have left the agent's last K screens when they
are used. Each instance carries 3 to 6 memory values among distractors of the same kind (other
invoices' references and amounts, other people's phones), chosen and ordered by the seed."""

from __future__ import annotations

from ..templates import Resolved, Template
from ..world import AmbiguousInstance, World, cents_of
from . import contacts, legs, mail
from .legs import (
    account,
    answer_first,
    answer_lowest,
    attendee_phone,
    code,
    contact,
    event,
    flight,
    invoice,
    message,
    note,
    pay,
    payment,
    room,
    shipping,
    track,
    weather,
)  # fmt: skip


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
    for candidate in events:
        if all(candidate["day"] != c["day"] and candidate["attendee"] != c["attendee"]
               for c in chosen):  # fmt: skip
            chosen.append(candidate)
        if len(chosen) == 3:
            break
    else:
        raise AmbiguousInstance("no three events on different days with different attendees")
    persons = [people[e["attendee"]] for e in chosen]
    refs = [f"agenda.attendee_{e['n']}" for e in chosen]
    refs += [contacts.ref(p, "phone") for p in persons]
    params = {}
    for i, chosen_event in enumerate(chosen, 1):
        params[f"title{i}"], params[f"day{i}"] = chosen_event["title"], chosen_event["day"]
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
        max_steps=60, group="memory",
    ),
    Template(
        "agenda-attendees-to-mia", ("agenda", "contacts", "chatter"),
        "Three people join you this week, according to Agenda: at '{title1}' on {day1}, at "
        "'{title2}' on {day2} and at '{title3}' on {day3}. Send Mia, in one Chatter message, "
        "the three people's phone numbers from Contacts. Then answer with the phone number "
        "of the person who joins you at '{title1}'.",
        "exact", attendees_to_mia, "name", "cross_app", "type", "Sharing",
        "the number exactly as Contacts shows it",
        max_steps=60, group="memory",
    ),
    Template(
        "parcels-pickups-note", ("mail", "parcels", "notes"),
        "Your {first} and {second} orders have shipped: their emails in Mailbox give the "
        "tracking numbers. Track both parcels in ParcelTrack, the {first} one first, then write "
        "a note titled 'Pickups' in Notes with each parcel's locker and pickup code. Answer "
        "with the pickup code of the {first} parcel.",
        "exact", parcel_pickups_note, "code", "cross_app", "type", "Content Creation",
        "the pickup code only (e.g. 123456)",
        max_steps=60, group="memory",
    ),
    Template(
        "flights-direct-fares-note", ("flights", "notes", "chatter"),
        "You may fly from Lisbon to {a}, {b} or {c}. In SkyBook, find the cheapest direct "
        "flight to each of them and, on its page, how many seats are left. Write a note titled "
        "'Fares' in Notes with each city's flight, fare and seats left, then tell Mia in "
        "Chatter which of the three cities has the lowest fare, and that fare. Answer with it.",
        "number", direct_fares_note, "price", "cross_app", "compare", "Compare & Decide",
        max_steps=60, group="memory",
    ),
]  # fmt: skip


# --- chains of sentences (legs.py): one sub-task per line of the goal -----------------------


def budget(sentences: int) -> int:
    """A chain's step budget: about twice what the solver takes (3 to 5 steps a sentence,
    more where a list is scrolled), and room to find the way in each app."""
    return 10 + 8 * sentences


def chained(
    id: str, intent: str, what: str, parts: list, answer=answer_first, rule: str = ""
) -> Template:
    """A long template whose goal is the sentences of ``parts`` (legs.py), then the answer."""
    apps = tuple(dict.fromkeys(legs.app_of(p) for p in parts))
    compares = getattr(answer, "compares", False)
    use = (
        "compare"
        if compares
        else "type"
        if any(p in (note, message, pay) or getattr(p, "leg", "") == "track" for p in parts)
        else "answer"
    )
    rule = rule or ("number" if what in ("price", "number") else "exact")

    def make(world: World, rng) -> Resolved:
        return legs.resolve(world, rng, parts, answer)

    simpler = legs.simplified(parts, answer)

    def simplify(world: World, rng) -> Resolved:
        return legs.resolve(world, rng, simpler, answer)

    return Template(
        id,
        apps if len(apps) > 1 else (*apps, "answers"),
        "{steps}",
        rule,
        make,
        what,
        "cross_app",
        use,
        intent,
        simplify=simplify if simpler != parts else None,
        max_steps=budget(len(parts)),
        group="memory",
        natural_goal="{task}",
    )


PHONE, CITY, BDAY = "phone number", "city", "birthday"
REF, AMOUNT, DUE = "reference", "amount due", "due date"
PLACE, WHO, START = "place", "attendee", "start"
NUMBER, FARE, GATE, SEATS = "flight number", "fare", "gate", "seats left"
LOCKER, PICKUP, DAY = "locker", "pickup code", "delivery day"

CHAINS = [
    # Mailbox and Ledger: invoices read, paid, and what the payments gave.
    chained("chain-invoice-calls-note", "Content Creation", "code",
            [invoice(REF, AMOUNT), contact(PHONE), contact(PHONE, CITY), weather("humidity"),
             event(PLACE),
             note]),
    chained("chain-invoice-pay-meeting-mia", "Purchase / Order", "price",
            [invoice(AMOUNT, REF), event(PLACE, START), contact(PHONE), pay, message]),
    chained("chain-two-invoices-paid-note", "Purchase / Order", "date",
            [invoice(DUE, REF, AMOUNT), contact(PHONE), invoice(REF, AMOUNT), pay, pay, note]),
    chained("chain-three-invoices-paid-noah", "Purchase / Order", "code",
            [invoice(REF, AMOUNT), invoice(REF, AMOUNT), invoice(REF, AMOUNT, DUE), pay, pay,
             pay, message]),
    chained("chain-iban-invoice-pay-note", "Configuration", "code",
            [account("IBAN"), invoice(REF, AMOUNT), contact(PHONE), pay, note]),
    chained("chain-balances-invoices-compare", "Compare & Decide", "price",
            [invoice(AMOUNT), invoice(AMOUNT), contact(PHONE), account("balance"), payment,
             weather("high"), note],
            answer_lowest("price")),
    chained("chain-invoice-due-agenda-noah", "Communication", "date",
            [invoice(DUE, AMOUNT), event(START, PLACE), contact(BDAY), payment, weather("high"),
             code, message]),
    chained("chain-invoice-payment-compare-ava", "Compare & Decide", "price",
            [invoice(AMOUNT, DUE), payment, contact(CITY), payment, event(START), room, message],
            answer_lowest("price", max)),
    chained("chain-paid-invoice-then-parcel", "Purchase / Order", "code",
            [invoice(REF, AMOUNT), pay, shipping, track(PICKUP, LOCKER), note]),
    chained("chain-iban-both-accounts-mia", "Sharing", "code",
            [account("IBAN", "balance"), code, account("IBAN"), contact(CITY), weather("high"),
             event(PLACE), message]),
    # ParcelTrack: tracking numbers from emails, tracked among others.
    chained("chain-parcel-locker-weather-note", "Content Creation", "code",
            [shipping, contact(CITY), weather("humidity"), event(START), track(LOCKER, PICKUP),
             note]),
    chained("chain-parcels-both-noah", "Sharing", "code",
            [shipping, shipping, track(PICKUP, DAY), event(PLACE), track(PICKUP, LOCKER), message]),
    chained("chain-parcel-day-agenda-note", "Lookup", "date",
            [shipping, track(DAY, LOCKER), event(START, PLACE), contact(PHONE), code, note]),
    chained("chain-parcels-codes-mia-note", "Content Creation", "code",
            [shipping, code, shipping, track(PICKUP), track(PICKUP), message, room, note]),
    chained("chain-parcel-then-invoice-pay", "Purchase / Order", "name",
            [shipping, track(LOCKER, DAY), invoice(REF, AMOUNT), pay, message]),
    # Agenda and Contacts: who joins you, and how to reach them.
    chained("chain-event-attendee-call-note", "Lookup", "name",
            [event(WHO, PLACE), event(START), room, attendee_phone, weather("humidity"), note]),
    chained("chain-events-attendees-mia", "Sharing", "time",
            [event(START, WHO), event(WHO), payment, attendee_phone, attendee_phone,
             weather("humidity"), message]),
    chained("chain-three-attendees-note", "Content Creation", "name",
            [event(WHO), event(WHO), event(WHO, PLACE), attendee_phone, attendee_phone,
             attendee_phone, note]),
    chained("chain-meeting-place-room-ava", "Communication", "name",
            [event(PLACE, START), room, event(PLACE), contact(PHONE), weather("high"), message]),
    chained("chain-event-times-birthdays-note", "Content Creation", "time",
            [event(START), contact(BDAY), event(START, WHO), attendee_phone, note]),
    chained("chain-birthdays-mia-note", "Content Creation", "date",
            [contact(BDAY, CITY), contact(BDAY), message, weather("high"), event(PLACE), note]),
    chained("chain-contacts-cities-weather", "Lookup", "name",
            [contact(CITY), contact(CITY, PHONE), invoice(DUE), weather("humidity"),
             weather("high"),
             room, note]),
    chained("chain-four-phones-noah", "Communication", "code",
            [contact(PHONE), event(PLACE), contact(PHONE), contact(PHONE), code, contact(PHONE),
             message]),
    # SkyBook: the cheapest flight to each city, among dearer ones and ones with stops.
    chained("chain-flight-gate-weather-note", "Booking", "code",
            [flight(NUMBER, FARE, GATE), weather("humidity", "high"), room, contact(PHONE),
             event(PLACE), note]),
    chained("chain-cheapest-of-three-flights", "Compare & Decide", "price",
            [flight(NUMBER, FARE), event(START), flight(NUMBER, FARE), contact(PHONE),
             flight(NUMBER, FARE), note], answer_lowest("price")),
    chained("chain-flight-seats-ava", "Booking", "number",
            [flight(FARE, SEATS), event(PLACE), contact(CITY), code, weather("humidity"), payment,
             message]),
    chained("chain-two-flights-gates-note", "Compare & Decide", "price",
            [flight(FARE, GATE), weather("high"), flight(FARE, GATE), contact(PHONE), note],
            answer_lowest("price")),
    chained("chain-trip-flight-weather-mia", "Booking", "price",
            [flight(FARE, NUMBER), weather("high", "humidity"), invoice(REF, AMOUNT), pay,
             contact(PHONE), message]),
    chained("chain-flights-dearest-noah", "Compare & Decide", "price",
            [flight(FARE), flight(FARE, SEATS), contact(PHONE), flight(FARE), flight(FARE),
             event(START), message],
            answer_lowest("price", max)),
    chained("chain-flight-then-calls", "Booking", "code",
            [flight(NUMBER, GATE, SEATS), contact(PHONE), event(WHO), attendee_phone, room, note]),
    # Mailbox codes and invitations, among other emails of the same kind.
    chained("chain-payment-code-room-note", "Lookup", "price",
            [payment, code, room, weather("humidity"), contact(BDAY), event(PLACE), note]),
    chained("chain-codes-rooms-noah", "Communication", "code",
            [code, room, contact(CITY), code, event(PLACE), weather("humidity"), message]),
    chained("chain-room-event-parcel-note", "Lookup", "name",
            [room, event(PLACE, START), shipping, track(DAY), note]),
    chained("chain-rooms-both-mia", "Communication", "name",
            [room, event(START), flight(FARE), room, contact(PHONE), weather("humidity"), message]),
    chained("chain-code-then-account", "Configuration", "code",
            [code, account("IBAN"), contact(PHONE), payment, event(PLACE), message]),
    # Ledger's activity: what you paid, and when.
    chained("chain-payment-weather-calls", "Communication", "date",
            [payment, weather("humidity"), contact(PHONE), room, contact(PHONE), event(START),
             message]),
    chained("chain-payments-compare-note", "Compare & Decide", "price",
            [payment, payment, event(PLACE), payment, contact(CITY), room, note],
            answer_lowest("price")),
    chained("chain-payment-then-flight", "Compare & Decide", "price",
            [payment, flight(FARE), contact(BDAY), account("balance"), weather("high"), code, note],
            answer_lowest("price", max)),
    # SkyCast: a city's humidity and forecast, with the other days and cities around.
    chained("chain-weather-two-cities-ava", "Lookup", "number",
            [weather("humidity"), weather("high"), code, contact(PHONE), event(START),
             account("IBAN"), message]),
    chained("chain-weather-trip-note", "Booking", "number",
            [weather("high"), flight(NUMBER, FARE), contact(CITY), weather("humidity"),
             invoice(AMOUNT),
             code, note]),
    # The long ones: a day's errands over most of the apps.
    chained("chain-week-errands", "Content Creation", "code",
            [invoice(REF, AMOUNT), shipping, event(WHO, PLACE), contact(PHONE), message,
             track(PICKUP), pay, attendee_phone, weather("high"), note]),
    chained("chain-travel-day", "Booking", "price",
            [flight(FARE, NUMBER, GATE), weather("humidity", "high"), event(START, WHO),
             attendee_phone, room, code, contact(PHONE), shipping, track(PICKUP, LOCKER), message,
             invoice(REF, AMOUNT), pay, contact(CITY), weather("humidity"), note]),
    chained("chain-month-end", "Purchase / Order", "code",
            [invoice(REF, AMOUNT), invoice(REF, AMOUNT), invoice(REF, AMOUNT), account("balance"),
             payment, payment, contact(PHONE), weather("humidity"), message, pay, pay, pay,
             event(PLACE), contact(BDAY), note]),
    chained("chain-team-offsite", "Communication", "name",
            [event(PLACE, WHO), event(WHO), event(WHO), attendee_phone, attendee_phone,
             attendee_phone, message, flight(FARE), flight(FARE), weather("high"), note]),
    chained("chain-moving-house", "Configuration", "code",
            [shipping, shipping, track(LOCKER, PICKUP), track(LOCKER, PICKUP), account("IBAN"),
             flight(FARE), event(PLACE), message, code, code, contact(PHONE), contact(CITY), note]),
    chained("chain-big-week", "Content Creation", "date",
            [invoice(DUE, REF, AMOUNT), contact(BDAY), contact(BDAY), event(START), event(START),
             room, room, flight(FARE), message, payment, pay, weather("humidity"), shipping,
             track(PICKUP), weather("humidity"), note]),
    # More of the apps in between: each value used after other sub-tasks' screens.
    chained("chain-code-parcel-call-ava", "Communication", "code",
            [code, shipping, event(PLACE), track(PICKUP), contact(PHONE), message]),
    chained("chain-room-flight-note", "Booking", "name",
            [room, flight(NUMBER, FARE), contact(PHONE), weather("high"), payment, event(START),
             note]),
    chained("chain-balance-invoices-noah", "Compare & Decide", "price",
            [account("balance"), invoice(AMOUNT, DUE), event(START), invoice(AMOUNT, DUE),
             contact(PHONE),
             room, message], answer_lowest("price")),
    chained("chain-attendee-birthday-note", "Lookup", "name",
            [event(WHO, START), contact(BDAY), weather("humidity"), attendee_phone, payment, note]),
    chained("chain-parcel-pickups-flight-mia", "Sharing", "code",
            [shipping, shipping, track(PICKUP), flight(FARE, GATE), track(PICKUP), message]),
    chained("chain-humidity-three-cities", "Compare & Decide", "number",
            [weather("humidity"), contact(PHONE), weather("humidity"), weather("humidity"),
             contact(CITY),
             note]),
    chained("chain-codes-iban-note", "Configuration", "code",
            [code, code, account("IBAN"), event(PLACE), contact(BDAY), note]),
    chained("chain-invoice-due-payment-mia", "Communication", "date",
            [invoice(DUE), payment, room, event(START, PLACE), contact(PHONE), weather("high"),
             message]),
    chained("chain-fares-meeting-noah", "Compare & Decide", "price",
            [flight(FARE), event(PLACE, WHO), code, flight(FARE), attendee_phone,
             weather("humidity"), message],
            answer_lowest("price")),
    chained("chain-seats-gates-note", "Booking", "number",
            [flight(SEATS, GATE), flight(SEATS, GATE), contact(PHONE), weather("humidity"), code,
             note]),
    chained("chain-birthday-flight-ava", "Booking", "date",
            [contact(BDAY, CITY), flight(FARE, NUMBER), weather("high"), event(START), room,
             code, message]),
    chained("chain-two-rooms-two-codes-note", "Lookup", "name",
            [room, code, room, code, contact(CITY), note]),
    chained("chain-payments-invoice-pay-note", "Purchase / Order", "price",
            [payment, invoice(REF, AMOUNT), payment, pay, contact(CITY), note]),
    chained("chain-weather-event-parcel-mia", "Lookup", "number",
            [weather("high", "humidity"), event(PLACE), shipping, contact(PHONE), track(DAY,
             LOCKER),
             room, message]),
]  # fmt: skip
TEMPLATES += CHAINS
