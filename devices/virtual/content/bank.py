"""Ledger: two accounts (balance, IBAN), the activity list, a payment form that pays an open
invoice by its reference and amount, and card details unlocked by an emailed security code."""

from __future__ import annotations

from collections import defaultdict

from ..templates import Resolved, Template
from ..world import (
    MONTHS,
    Content,
    World,
    cents_of,
    code,
    distinct_codes,
    distinct_prices,
    money,
    unique_best,
)

MERCHANTS = {
    "Groceries": ["Green Grocer", "Bakery Lune", "Corner Market", "Fishmonger Sal"],
    "Transport": ["Metro Card", "CityBike", "Fuel Stop", "Taxi Now"],
    "Dining": ["Café Nova", "Sushi Go", "Pizza Roma", "Noodle Bar"],
    "Shopping": ["BookNook", "Gadgetry", "Homely", "Shoe Lab"],
}
INVOICERS = ["Northwind Energy", "Blue Fiber Internet", "City Water", "Metro Mobile", "Sunny Gym"]
PAYMENTS = 10


def build(content: Content, world: World) -> None:
    rng = content.rng("bank")
    month = rng.choice(MONTHS)
    pool = [(category, m) for category, names in MERCHANTS.items() for m in names]
    while True:  # no two categories spend the same in total (the totals are asked for)
        picks = rng.sample(pool, PAYMENTS)
        amounts = distinct_prices(rng, PAYMENTS, 4, 240, endings=(5, 20, 49, 75, 90, 99))
        totals: dict[str, int] = defaultdict(int)
        for (category, _), amount in zip(picks, amounts, strict=True):
            totals[category] += cents_of(amount)
        if len(set(totals.values())) == len(totals):
            break
    days = sorted(rng.sample(range(1, 29), PAYMENTS), reverse=True)  # newest first
    payments = []
    for i, ((category, merchant), amount, day) in enumerate(zip(picks, amounts, days, strict=True)):
        payments.append(
            {
                "merchant": merchant,
                "category": category,
                "date": content.var(f"date_{i}", "date", f"{day} {month}", "the Activity tab",
                                    f"the day you paid {merchant}"),
                "amount": "-" + content.var(f"paid_{i}", "price", amount, "the Activity tab",
                                            f"what you paid {merchant}"),
            }
        )  # fmt: skip
    salary_day = rng.randint(1, 28)
    checking, savings = rng.randint(800, 4200), rng.randint(5000, 19000)
    ibans = [f"LD{rng.randint(10, 99)}LEDG{code(rng, 14)}" for _ in range(2)]
    accounts = [
        {"key": "checking", "name": "Checking", "balance": content.var(
            "balance_checking", "price", money(checking * 100 + rng.randint(0, 99)),
            "the Accounts tab", "the balance of the Checking account"),
         "iban": content.var("iban_checking", "code", ibans[0], "the Checking account's page",
                             "the IBAN of the Checking account")},
        {"key": "savings", "name": "Savings", "balance": content.var(
            "balance_savings", "price", money(savings * 100 + rng.randint(0, 99)),
            "the Accounts tab", "the balance of the Savings account"),
         "iban": content.var("iban_savings", "code", ibans[1], "the Savings account's page",
                             "the IBAN of the Savings account")},
    ]  # fmt: skip
    companies = rng.sample(INVOICERS, 3)
    refs = distinct_codes(rng, 3, 5, prefix="INV-")
    confirmations = distinct_codes(rng, 3, 6, prefix="PAY-")
    due_days = rng.sample(range(1, 29), 3)
    invoice_amounts = distinct_prices(rng, 3, 25, 260, endings=(10, 35, 60, 80))
    invoices = [
        {
            "company": company,
            "ref": ref,
            "amount": amount,
            "due": f"{day} {MONTHS[(MONTHS.index(month) + 1) % 12]}",
            "confirmation": content.var(f"confirmation_{i}", "code", confirmation,
                                        "the Pay tab, after paying",
                                        f"the confirmation of the payment to {company}"),
        }
        for i, (company, ref, amount, day, confirmation) in enumerate(
            zip(companies, refs, invoice_amounts, due_days, confirmations, strict=True)
        )
    ]  # fmt: skip
    # Each invoice email also recalls the company's previous invoice, paid (its reference and
    # amount: distractors of the same kind next to the ones to pay), above or below them. A
    # generator of its own, so that the values drawn above stay those of every seed before.
    history = content.rng("previous_invoices")
    previous_refs = [r for r in distinct_codes(history, 6, 5, prefix="INV-") if r not in refs][:3]
    previous_amounts = [
        a for a in distinct_prices(history, 6, 25, 260, endings=(10, 35, 60, 80))
        if a not in invoice_amounts
    ][:3]  # fmt: skip
    for invoice, ref, amount in zip(invoices, previous_refs, previous_amounts, strict=True):
        invoice["previous"] = {"ref": ref, "amount": amount, "first": history.random() < 0.5}
    card = {
        "number": f"•••• {code(rng, 4)}",
        "expiry": content.var("card_expiry", "code",
                              f"{rng.randint(1, 12):02d}/{rng.randint(27, 31)}",
                              "the Cards tab, once unlocked", "the expiry date of your card"),
        "limit": money(rng.choice([1000, 1500, 2000, 3000]) * 100),
        "security_code": code(rng, 6),
    }  # fmt: skip
    content.data = {
        "month": month,
        "salary": {"date": f"{salary_day} {month}", "amount": "+$2,450.00"},
        "accounts": accounts,
        "payments": payments,
        "invoices": invoices,
        "card": card,
    }


# --- templates ------------------------------------------------------------------------------


def _payments(world: World) -> list[dict]:
    return world.data("bank")["payments"]


def balance(world: World, rng) -> Resolved:
    accounts = world.data("bank")["accounts"]
    return Resolved(accounts[0]["balance"], ["bank.balance_checking"],
                    candidates=[a["balance"] for a in accounts])  # fmt: skip


def largest_payment(world: World, rng) -> Resolved:
    payments = _payments(world)
    top = unique_best(payments, lambda p: cents_of(p["amount"][1:]), max)
    return Resolved(top["merchant"], [f"bank.paid_{i}" for i in range(len(payments))],
                    candidates=[p["merchant"] for p in payments])  # fmt: skip


def paid_merchant(world: World, rng) -> Resolved:
    payments = _payments(world)
    i = rng.randrange(len(payments))
    return Resolved(payments[i]["amount"][1:], [f"bank.paid_{i}"],
                    {"merchant": payments[i]["merchant"]},
                    [p["amount"][1:] for p in payments])  # fmt: skip


def category_total(world: World, rng) -> Resolved:
    payments = _payments(world)
    totals: dict[str, int] = defaultdict(int)
    for p in payments:
        totals[p["category"]] += cents_of(p["amount"][1:])
    several = sorted(c for c in totals if sum(p["category"] == c for p in payments) > 1)
    category = rng.choice(several or sorted(totals))
    refs = [f"bank.paid_{i}" for i, p in enumerate(payments) if p["category"] == category]
    return Resolved(money(totals[category]), refs, {"category": category},
                    [money(t) for t in totals.values()])  # fmt: skip


def savings_iban(world: World, rng) -> Resolved:
    accounts = world.data("bank")["accounts"]
    return Resolved(accounts[1]["iban"], ["bank.iban_savings"],
                    candidates=[a["iban"] for a in accounts])  # fmt: skip


def paid_date(world: World, rng) -> Resolved:
    payments = _payments(world)
    i = rng.randrange(len(payments))
    return Resolved(payments[i]["date"], [f"bank.date_{i}"], {"merchant": payments[i]["merchant"]},
                    [p["date"] for p in payments])  # fmt: skip


def balance_difference(world: World, rng) -> Resolved:
    checking, savings = (cents_of(a["balance"]) for a in world.data("bank")["accounts"])
    shown = [money(savings - checking), money(checking), money(savings)]
    refs = ["bank.balance_checking", "bank.balance_savings"]
    return Resolved(money(savings - checking), refs, candidates=shown)


APPS = ("bank",)
TEMPLATES = [
    Template(
        "bank-balance", APPS, "What is the balance of your Checking account in Ledger?",
        "number", balance, "price", "same_screen", "answer", "Lookup",
    ),
    Template(
        "bank-largest-payment", APPS,
        "To which merchant did you make your largest payment, according to Ledger's activity? "
        "Answer with the merchant's name.",
        "iexact", largest_payment, "price", "later_page", "compare", "Compare & Decide",
        "the merchant's name only",
    ),
    Template(
        "bank-paid-merchant", APPS, "How much did you pay {merchant}, according to Ledger?",
        "number", paid_merchant, "price", "same_screen", "answer", "Lookup",
    ),
    Template(
        "bank-category-total", APPS,
        "How much did you spend on {category} in total, according to Ledger's activity?",
        "number", category_total, "list", "later_page", "compare", "Compare & Decide",
        "the total only (e.g. $42.10)",
    ),
    Template(
        "bank-savings-iban", APPS, "What is the IBAN of your Savings account in Ledger?",
        "exact", savings_iban, "code", "later_page", "answer", "Lookup",
        "the IBAN exactly as Ledger shows it",
    ),
    Template(
        "bank-paid-date", APPS, "On which day did you pay {merchant}, according to Ledger?",
        "iexact", paid_date, "date", "same_screen", "answer", "Lookup",
        "the date as Ledger shows it (e.g. 12 May)",
    ),
    Template(
        "bank-balance-difference", APPS,
        "How much more money is in your Savings account than in your Checking account, "
        "according to Ledger?",
        "number", balance_difference, "price", "same_screen", "compare", "Compare & Decide",
        "the amount only (e.g. $42.10)",
    ),
]  # fmt: skip
