"""The apps' data and task templates, one module per app (cross-app templates in ``cross``).

Each app's module has ``build(content, world)``, which fills the app's ``Content`` (memory
variables, page data) for the world's seed, and ``TEMPLATES``. ``BUILDERS`` runs in its order:
an app whose data mentions another's (an email carrying a booking reference) comes after it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..templates import Template
from ..world import Content, World
from . import flights, weather

BUILDERS: dict[str, Callable[[Content, World], None]] = {
    "weather": weather.build,
    "flights": flights.build,
}
TEMPLATES: list[Template] = [
    *weather.TEMPLATES,
    *flights.TEMPLATES,
]
