"""Cross-app templates: a value read in one app is typed, compared or answered in another."""

from __future__ import annotations

from ..templates import Resolved, Template
from ..world import World, slugify
from . import agenda, contacts, mail


def _emailed_parcel(world: World, rng) -> tuple[int, dict]:
    i = rng.randrange(2)  # the parcels whose shipping emails are in Mailbox
    return i, world.data("parcels")["parcels"][i]


def emailed_delivery(world: World, rng) -> Resolved:
    i, parcel = _emailed_parcel(world, rng)
    return Resolved(parcel["day"], [f"mail.tracking_{i}", f"parcels.day_{i}"],
                    {"shop": parcel["shop"]},
                    [p["day"] for p in world.data("parcels")["parcels"]])  # fmt: skip


def emailed_pickup(world: World, rng) -> Resolved:
    i, parcel = _emailed_parcel(world, rng)
    return Resolved(parcel["pickup_code"], [f"mail.tracking_{i}", f"parcels.pickup_{i}"],
                    {"shop": parcel["shop"]},
                    [p["pickup_code"] for p in world.data("parcels")["parcels"]])  # fmt: skip


def agency_seat(world: World, rng) -> Resolved:
    bookings = world.data("flights")["bookings"]
    return Resolved(bookings[-1]["seat"], ["mail.agency_ref", "flights.agency_seat"],
                    candidates=[b["seat"] for b in bookings])  # fmt: skip


def pay_invoice(world: World, rng) -> Resolved:
    invoices = mail.invoices(world)
    i = rng.randrange(len(invoices))
    refs = [f"mail.invoice{i}_ref", f"mail.invoice{i}_amount", f"bank.confirmation_{i}"]
    return Resolved(invoices[i]["confirmation"], refs, {"company": invoices[i]["company"]},
                    [v["confirmation"] for v in invoices])  # fmt: skip


def card_expiry(world: World, rng) -> Resolved:
    card = world.data("bank")["card"]
    return Resolved(card["expiry"], ["mail.ledger_code", "bank.card_expiry"],
                    candidates=[card["expiry"], card["limit"]])  # fmt: skip


def invoice_to_notes(world: World, rng) -> Resolved:
    invoices = mail.invoices(world)
    i = rng.randrange(len(invoices))
    return Resolved(invoices[i]["amount"], [f"mail.invoice{i}_amount"],
                    {"company": invoices[i]["company"]},
                    [v["amount"] for v in invoices])  # fmt: skip


def trip_weather(world: World, rng) -> Resolved:
    trips = world.data("flights")["trips"]
    i = rng.randrange(len(trips))
    city = next(c for c in world.data("weather")["cities"] if c["name"] == trips[i]["city"])
    day = next(d for d in city["week"] if d["day"] == trips[i]["day"])
    refs = [f"flights.trip{i}_city", f"weather.high_{city['slug']}_{day['day'].lower()}"]
    return Resolved(day["high"].rstrip("°"), refs, {"day": trips[i]["day"]},
                    [d["high"] for d in city["week"]])  # fmt: skip


def person_weather(world: World, rng) -> Resolved:
    cities = {c["name"]: c for c in world.data("weather")["cities"]}
    person = rng.choice([p for p in contacts.people(world) if p["city"] in cities])
    city = cities[person["city"]]
    refs = [contacts.ref(person, "city"), f"weather.temp_{slugify(city['name'])}"]
    return Resolved(city["temp"].rstrip("°"), refs, {"name": person["name"]},
                    [c["temp"] for c in cities.values()])  # fmt: skip


def phone_to_mia(world: World, rng) -> Resolved:
    people = [p for p in contacts.people(world) if p["name"] != "Mia Santos"]
    person = rng.choice(people)
    return Resolved(person["phone"], [contacts.ref(person, "phone")], {"name": person["name"]},
                    [p["phone"] for p in contacts.people(world)])  # fmt: skip


def noah_meeting(world: World, rng) -> Resolved:
    friday = agenda.events_on(world, "Friday")
    meeting = world.value("chatter.meeting_time")
    event = next(e for e in friday if e["start"] == meeting)
    return Resolved(event["title"], ["chatter.meeting_time", f"agenda.start_{event['n']}"],
                    candidates=[e["title"] for e in friday])  # fmt: skip


def attendee_phone(world: World, rng) -> Resolved:
    event = rng.choice(world.data("agenda")["events"])
    person = next(p for p in contacts.people(world) if p["name"] == event["attendee"])
    return Resolved(person["phone"], [f"agenda.attendee_{event['n']}",
                                      contacts.ref(person, "phone")],
                    {"title": event["title"], "day": event["day"]},
                    [p["phone"] for p in contacts.people(world)])  # fmt: skip


TEMPLATES = [
    Template(
        "parcels-emailed-delivery", ("mail", "parcels"),
        "{shop} emailed you that your order has shipped. Track the parcel in ParcelTrack and "
        "answer with the day it will be delivered.",
        "iexact", emailed_delivery, "code", "cross_app", "type", "Lookup",
        "the day only (e.g. Tuesday)",
    ),
    Template(
        "parcels-emailed-pickup", ("mail", "parcels"),
        "Your {shop} parcel will wait in a locker. Its tracking number is in {shop}'s shipping "
        "email in Mailbox: find the locker's pickup code in ParcelTrack and answer with it.",
        "exact", emailed_pickup, "code", "cross_app", "type", "Lookup",
        "the pickup code only (e.g. 123456)",
    ),
    Template(
        "flights-agency-seat", ("mail", "flights"),
        "TravelNest emailed you the booking reference of a flight. Find that booking in "
        "SkyBook's Manage booking and answer with your seat.",
        "iexact", agency_seat, "code", "cross_app", "type", "Booking", "the seat only (e.g. 14C)",
    ),
    Template(
        "bank-pay-invoice", ("mail", "bank"),
        "Pay the invoice {company} emailed you in Mailbox: in Ledger's Pay tab, enter its "
        "reference and amount. Answer with the payment's confirmation number.",
        "exact", pay_invoice, "code", "cross_app", "type", "Purchase / Order",
        "the confirmation number only (e.g. PAY-123456)",
    ),
    Template(
        "bank-card-expiry", ("mail", "bank"),
        "Unlock the Cards tab in Ledger with the security code Ledger emailed you, and answer "
        "with your card's expiry date.",
        "exact", card_expiry, "code", "cross_app", "type", "Lookup",
        "the expiry date as Ledger shows it (e.g. 09/28)",
    ),
    Template(
        "mail-invoice-to-notes", ("mail", "notes"),
        "Write the amount due on the invoice from {company} (in Mailbox) in a new note titled "
        "'Bills' in Notes, then answer with the amount.",
        "number", invoice_to_notes, "price", "cross_app", "type", "Content Creation",
    ),
    Template(
        "flights-trip-weather", ("flights", "weather"),
        "You fly with SkyBook on {day} (My trips). What is SkyCast's forecast high for that day "
        "in the city you fly to?",
        "number", trip_weather, "name", "cross_app", "answer", "Lookup",
        "the number of degrees only (e.g. 21)",
    ),
    Template(
        "contacts-city-weather", ("contacts", "weather"),
        "How warm is it right now in the city where {name} lives? Find the city in Contacts "
        "and the temperature in SkyCast.",
        "number", person_weather, "name", "cross_app", "answer", "Lookup",
        "the number of degrees only (e.g. 21)",
    ),
    Template(
        "contacts-phone-to-mia", ("contacts", "chatter"),
        "Send {name}'s phone number from Contacts to Mia in Chatter, then answer with the "
        "number.",
        "exact", phone_to_mia, "code", "cross_app", "type", "Sharing",
        "the number exactly as Contacts shows it",
    ),
    Template(
        "agenda-noah-meeting", ("chatter", "agenda"),
        "Noah told you in Chatter when he wants to meet on Friday. Which event in your Agenda "
        "on Friday starts at that time? Answer with its title.",
        "iexact", noah_meeting, "time", "cross_app", "compare", "Compare & Decide",
        "the event's title only",
    ),
    Template(
        "agenda-attendee-phone", ("agenda", "contacts"),
        "Who joins you at '{title}' on {day} in Agenda? Answer with that person's phone number "
        "from Contacts.",
        "exact", attendee_phone, "name", "cross_app", "answer", "Lookup",
        "the number exactly as Contacts shows it",
    ),
]  # fmt: skip
