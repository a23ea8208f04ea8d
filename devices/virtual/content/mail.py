"""Mailbox: an inbox (sender, subject, date; codes and amounts only inside the emails) whose
emails carry what other apps ask for: tracking numbers, a booking reference, invoices, a
security code."""

from __future__ import annotations

from ..templates import Resolved, Template
from ..world import (
    AmbiguousInstance,
    Content,
    World,
    cents_of,
    distinct_codes,
    distinct_times,
    unique_best,
)

SERVICES = ["CloudDrive", "StreamBox", "PhotoVault", "GameHub", "NoteSync", "FitTrack"]
NEWSLETTERS = [
    ("BookNook", "New arrivals for your weekend"),
    ("Gadgetry", "Our summer sale ends Sunday"),
    ("Homely", "Ideas for a brighter living room"),
    ("PetPal", "Treats your dog will love"),
]
COLLEAGUES = ["Priya Shah", "Marcus Webb", "Elena Rossi", "Kofi Mensah", "Hana Sato"]
TOPICS = ["Budget", "Roadmap", "Hiring", "Marketing", "Launch", "Security"]
ROOMS = ["Room 2A", "Room 3C", "Room 4B", "Room 5D", "Room 6F", "Boardroom"]
DATES = ["09:41", "08:15", "Yesterday", "Yesterday", "Mon", "Mon", "Sun", "Sat", "Fri", "Thu",
         "Wed", "Tue", "12 Jun", "9 Jun"]  # fmt: skip


def build(content: Content, world: World) -> None:
    """The inbox. A body is a list of paragraphs, each a list of parts: text, or a memory
    variable ``{"v": name, "t": value}`` the page marks with ``data-var``."""
    rng = content.rng("mail")
    emails: list[dict] = []

    def email(sender: str, subject: str, body: list, **facts) -> None:
        emails.append({"sender": sender, "subject": subject, "body": body, **facts})

    def var(name: str, kind: str, value: str, where: str, description: str) -> dict:
        return {"v": name, "t": content.var(name, kind, value, where, description)}

    services = rng.sample(SERVICES, 2)
    card = world.data("bank")["card"]
    codes = [c for c in distinct_codes(rng, 3, 6) if c != card["security_code"]][:2]
    for service, value in zip(services, codes, strict=True):
        code = var(
            f"code_{service.lower()}",
            "code",
            value,
            f"{service}'s email",
            f"the verification code from {service}",
        )
        email(service, f"Your {service} verification code",
              [["Hi Alex,"], ["Use ", code, f" to finish signing in to {service}."],
               ["The code expires in 10 minutes. If this wasn't you, ignore this email."]],
              code=value)  # fmt: skip
    security = var(
        "ledger_code",
        "code",
        card["security_code"],
        "Ledger's security email",
        "the security code Ledger emailed",
    )
    email("Ledger", "Your Ledger security code",
          [["Hi Alex,"], ["Your code to see your card details is ", security, "."],
           ["Never share it with anyone, not even with Ledger staff."]],
          code=card["security_code"])  # fmt: skip
    for i, parcel in enumerate(world.data("parcels")["parcels"][:2]):
        number = var(
            f"tracking_{i}",
            "code",
            parcel["number"],
            f"{parcel['shop']}'s shipping email",
            f"the tracking number of the {parcel['shop']} parcel",
        )
        email(parcel["shop"], f"Your {parcel['shop']} order has shipped",
              [["Good news: your order is on its way."], ["Tracking number: ", number],
               ["Track it any time in the ParcelTrack app."]])  # fmt: skip
    booking = world.data("flights")["bookings"][-1]
    ref = var(
        "agency_ref",
        "code",
        booking["ref"],
        "TravelNest's booking email",
        "the booking reference TravelNest sent",
    )
    email("TravelNest", f"Your flight to {booking['city']} is booked",
          [[f"Thank you for booking with TravelNest. Your flight {booking['flight']} to "
            f"{booking['city']} on {booking['day']} is confirmed."],
           ["Booking reference: ", ref],
           ["Choose your seat and check in with the airline: SkyBook, Manage booking."]],
          )  # fmt: skip
    for i, invoice in enumerate(world.data("bank")["invoices"]):
        company, where = invoice["company"], f"{invoice['company']}'s invoice email"
        due = [["Amount due: ", var(f"invoice{i}_amount", "price", invoice["amount"], where,
                                    f"the amount due to {company}")],
               ["Reference: ", var(f"invoice{i}_ref", "code", invoice["ref"], where,
                                   f"the reference of {company}'s invoice")]]  # fmt: skip
        previous = invoice.get("previous")
        if previous:  # the last invoice, paid: another reference and amount, above or below
            paid = [f"Your previous invoice {previous['ref']} of {previous['amount']} has been "
                    "paid. Thank you."]  # fmt: skip
            due = [paid, *due] if previous["first"] else [*due, paid]
        email(company, f"{company}: your invoice is ready",
              [["Dear customer,"], *due,
               ["Please pay by ", var(f"invoice{i}_due", "date", invoice["due"], where,
                                      f"when {company}'s invoice is due"),
                ", in your banking app with the reference above."]])  # fmt: skip
    colleagues = rng.sample(COLLEAGUES, 2)
    topics = rng.sample(TOPICS, 2)
    rooms = rng.sample(ROOMS, 2)
    times = distinct_times(rng, 2, 9, 17, 30)
    for i in range(2):
        room = var(
            f"room_{i}",
            "name",
            rooms[i],
            f"the invitation to the {topics[i]} meeting",
            f"the room of the {topics[i]} meeting",
        )
        email(colleagues[i], f"Invitation: {topics[i]} meeting",
              [[f"Hi Alex, let's meet about the {topics[i].lower()} plans."],
               [f"When: Thursday at {times[i]}"], ["Where: ", room],
               [colleagues[i].split()[0]]],
              room=rooms[i], room_var=f"room_{i}", topic=topics[i])  # fmt: skip
    shops = {p["shop"] for p in world.data("parcels")["parcels"][:2]}
    for sender, subject in rng.sample([n for n in NEWSLETTERS if n[0] not in shops], 2):
        email(sender, subject, [[subject + "."], ["Unsubscribe at any time in your settings."]])
    rng.shuffle(emails)
    for n, item in enumerate(emails):
        item["n"] = n
        item["date"] = DATES[n]
        content.var(
            f"sender_{n}", "name", item["sender"], "the inbox", f'who sent "{item["subject"]}"'
        )
        if rng.random() < 0.4 or n == 0:  # the newest is always unread
            item["unread"] = content.var(
                f"unread_{n}", "name", "Unread", "the inbox", f'that "{item["subject"]}" is unread'
            )
    content.data = {"emails": emails}


def _emails(world: World) -> list[dict]:
    return world.data("mail")["emails"]


def invoices(world: World) -> list[dict]:
    return world.data("bank")["invoices"]


def verification_code(world: World, rng) -> Resolved:
    coded = [e for e in _emails(world) if e["sender"] in SERVICES]
    chosen = rng.choice(coded)
    codes = [e["code"] for e in _emails(world) if "code" in e]
    return Resolved(chosen["code"], [f"mail.code_{chosen['sender'].lower()}"],
                    {"service": chosen["sender"]}, codes)  # fmt: skip


def meeting_room(world: World, rng) -> Resolved:
    invites = [e for e in _emails(world) if "room" in e]
    chosen = rng.choice(invites)
    return Resolved(chosen["room"], [f"mail.{chosen['room_var']}"], {"topic": chosen["topic"]},
                    [e["room"] for e in invites])  # fmt: skip


def unread_count(world: World, rng) -> Resolved:
    emails = _emails(world)
    unread = [f"mail.unread_{e['n']}" for e in emails if e.get("unread")]
    return Resolved(str(len(unread)), unread,
                    candidates=[str(n) for n in range(len(emails) + 1)])  # fmt: skip


def sender_of(world: World, rng) -> Resolved:
    """The sender of an email named by its subject: one whose subject does not name its sender
    (a subject like "City Water: your invoice is ready" would give the answer away)."""
    emails = _emails(world)
    unnamed = [e for e in emails if e["sender"].lower() not in e["subject"].lower()]
    if not unnamed:
        raise AmbiguousInstance("every email's subject names its sender")
    chosen = rng.choice(unnamed)
    return Resolved(chosen["sender"], [f"mail.sender_{chosen['n']}"],
                    {"subject": chosen["subject"]},
                    sorted({e["sender"] for e in emails}))  # fmt: skip


def invoice_amount(world: World, rng) -> Resolved:
    i = rng.randrange(3)
    return Resolved(invoices(world)[i]["amount"], [f"mail.invoice{i}_amount"],
                    {"company": invoices(world)[i]["company"]},
                    [v["amount"] for v in invoices(world)])  # fmt: skip


def largest_invoice(world: World, rng) -> Resolved:
    top = unique_best(invoices(world), lambda v: cents_of(v["amount"]), max)
    return Resolved(top["company"], [f"mail.invoice{i}_amount" for i in range(3)],
                    candidates=[v["company"] for v in invoices(world)])  # fmt: skip


def invoice_due(world: World, rng) -> Resolved:
    i = rng.randrange(3)
    return Resolved(invoices(world)[i]["due"], [f"mail.invoice{i}_due"],
                    {"company": invoices(world)[i]["company"]},
                    [v["due"] for v in invoices(world)])  # fmt: skip


APPS = ("mail",)
TEMPLATES = [
    Template(
        "mail-verification-code", APPS,
        "Find the verification code {service} emailed you in Mailbox and answer with it.",
        "exact", verification_code, "code", "later_page", "answer", "Lookup",
        "the code only (e.g. 123456)",
    ),
    Template(
        "mail-meeting-room", APPS,
        "In which room is the {topic} meeting, according to its invitation in Mailbox?",
        "iexact", meeting_room, "name", "later_page", "answer", "Lookup",
        "the room only (e.g. Room 2A)",
    ),
    Template(
        "mail-unread-count", APPS, "How many unread emails are in your Mailbox inbox?",
        "number", unread_count, "list", "later_page", "answer", "Lookup", "the number only",
    ),
    Template(
        "mail-sender", APPS,
        "Who sent you the email \"{subject}\" in Mailbox? Answer with the sender's name.",
        "iexact", sender_of, "name", "same_screen", "answer", "Lookup",
        "the sender's name as Mailbox shows it",
    ),
    Template(
        "mail-invoice-amount", APPS,
        "How much does the invoice {company} emailed you ask you to pay?",
        "number", invoice_amount, "price", "later_page", "answer", "Lookup",
    ),
    Template(
        "mail-largest-invoice", APPS,
        "Which company's invoice in your Mailbox asks for the most money? "
        "Answer with the company's name.",
        "iexact", largest_invoice, "price", "later_page", "compare", "Compare & Decide",
        "the company's name only",
    ),
    Template(
        "mail-invoice-due", APPS, "By which date must the invoice from {company} be paid, "
        "according to its email in Mailbox?", "iexact", invoice_due, "date", "later_page",
        "answer", "Lookup", "the date as the email writes it (e.g. 14 June)",
    ),
]  # fmt: skip
