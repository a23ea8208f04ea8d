"""The apps' data and task templates, one module per app (cross-app templates in ``cross``).

Each app's module has ``build(content, world)``, which fills the app's ``Content`` (memory
variables, page data) for the world's seed, and ``TEMPLATES``. ``BUILDERS`` runs in its order:
an app whose data mentions another's (an email carrying a booking reference) comes after it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..templates import Template
from ..world import Content, World
from . import agenda, bank, chains, contacts, cross, flights, mail, parcels, weather

BUILDERS: dict[str, Callable[[Content, World], None]] = {
    "weather": weather.build,
    "flights": flights.build,  # trips to cities SkyCast follows
    "parcels": parcels.build,
    "bank": bank.build,
    "contacts": contacts.build,  # people living in cities SkyCast follows
    "agenda": agenda.build,  # a Friday event when Noah (Chatter) wants to meet; contacts join
    "mail": mail.build,  # tracking numbers, a booking, invoices and a security code
}
TEMPLATES: list[Template] = [
    *weather.TEMPLATES,
    *flights.TEMPLATES,
    *parcels.TEMPLATES,
    *bank.TEMPLATES,
    *contacts.TEMPLATES,
    *agenda.TEMPLATES,
    *mail.TEMPLATES,
    *cross.TEMPLATES,
    *chains.TEMPLATES,  # the long-horizon ones (issue 35)
]
