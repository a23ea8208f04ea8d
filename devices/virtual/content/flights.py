"""SkyBook: flights from Lisbon (search by destination, a flight's page with its gate), your
trips (each with its seat), and Manage booking, which finds a booking by its reference."""

from __future__ import annotations

import string

from ..templates import Resolved, Template
from ..world import (
    WEEKDAYS,
    Content,
    World,
    cents_of,
    distinct_codes,
    distinct_prices,
    distinct_times,
    minutes,
    unique_best,
)

HOME = "Lisbon"
DESTINATIONS = [
    "Paris", "Madrid", "Rome", "Berlin", "Amsterdam", "Prague", "Athens", "London", "Milan",
    "Warsaw", "Brussels", "Geneva",
]  # fmt: skip
AIRCRAFT = ["A320neo", "A321", "B737-800", "E195", "A220-300"]
LETTERS = string.ascii_uppercase.replace("I", "").replace("O", "")


def _seat(number: int, letter: str) -> str:
    return f"{number}{letter}"


def build(content: Content, world: World) -> None:
    rng = content.rng("flights")
    cities = rng.sample(DESTINATIONS, 5)
    counts = [rng.choice([3, 4, 4]) for _ in cities]
    total = sum(counts) + 3  # and the booked flights
    codes = [f"WY{n}" for n in rng.sample(range(101, 999), total)]
    prices = distinct_prices(rng, sum(counts), 39, 420)
    gates = [f"{rng.choice('ABCD')}{n}" for n in rng.sample(range(1, 60), sum(counts))]
    results, index = {}, 0
    for city, count in zip(cities, counts, strict=True):
        departures = distinct_times(rng, count, 6, 22)  # listed as "recommended", not by time
        seats_left = rng.sample(range(2, 80), count)
        flights = []
        for depart, seats in zip(departures, seats_left, strict=True):
            code = codes[index]
            key = code.lower()
            arrive = minutes(depart) + rng.randint(80, 240)
            flights.append(
                {
                    "code": code,
                    "depart": content.var(
                        f"depart_{key}", "time", depart,
                        f"the results for {city}", f"when flight {code} leaves",
                    ),
                    "arrive": f"{arrive // 60 % 24:02d}:{arrive % 60:02d}",
                    "price": content.var(
                        f"price_{key}", "price", prices[index],
                        f"the results for {city}", f"the fare of flight {code}",
                    ),
                    "stops": content.var(
                        f"stops_{key}", "name", rng.choice(["Direct", "Direct", "1 stop"]),
                        f"the results for {city}", f"the stops of flight {code}",
                    ),
                    "gate": content.var(
                        f"gate_{key}", "code", gates[index],
                        f"flight {code}'s page", f"the gate of flight {code}",
                    ),
                    "seats_left": content.var(
                        f"seats_{key}", "number", str(seats),
                        f"flight {code}'s page", f"the seats left on flight {code}",
                    ),
                    "terminal": rng.choice(["T1", "T2"]),
                    "aircraft": rng.choice(AIRCRAFT),
                }
            )  # fmt: skip
            index += 1
        results[city] = flights

    # Your trips fly to cities SkyCast follows (a trip's weather is one task away).
    saved = [c["name"] for c in world.data("weather")["cities"] if c["name"] != HOME]
    seat_numbers = rng.sample(range(3, 39), 3)
    seats = [_seat(n, rng.choice("ABCDEF")) for n in seat_numbers]
    refs = distinct_codes(rng, 3, 6, LETTERS)
    days = rng.sample(WEEKDAYS, 2)
    trips = []
    for i, (city, day) in enumerate(zip(rng.sample(saved, 2), days, strict=True)):
        trips.append(
            {
                "city": content.var(f"trip{i}_city", "name", city, "My trips",
                                    f"where trip {i + 1} flies to"),
                "day": content.var(f"trip{i}_day", "date", day, "My trips",
                                   f"the day of the trip to {city}"),
                "flight": codes[index + i],
                "seat": content.var(f"trip{i}_seat", "code", seats[i], f"the trip to {city}",
                                    f"your seat on the trip to {city}"),
                "ref": refs[i],
            }
        )  # fmt: skip
    agency_city = rng.choice([c for c in DESTINATIONS if c not in {t["city"] for t in trips}])
    agency = {
        "city": agency_city,
        "day": rng.choice([d for d in WEEKDAYS if d not in days]),
        "flight": codes[index + 2],
        "seat": content.var("agency_seat", "code", seats[2], "Manage booking",
                            "your seat on the booking made by TravelNest"),
        "ref": refs[2],
        "agency": "TravelNest",
    }  # fmt: skip
    content.data = {
        "home": HOME,
        "destinations": cities,
        "results": results,
        "trips": trips,
        "bookings": [*trips, agency],
    }


# --- templates ------------------------------------------------------------------------------


def _all_flights(world: World) -> list[tuple[str, dict]]:
    results = world.data("flights")["results"]
    return [(city, f) for city, flights in results.items() for f in flights]


def _city(world: World, rng) -> tuple[str, list[dict]]:
    results = world.data("flights")["results"]
    city = rng.choice(sorted(results))
    return city, results[city]


def _ref(flight: dict, what: str) -> str:
    return f"flights.{what}_{flight['code'].lower()}"


def cheapest(world: World, rng) -> Resolved:
    city, flights = _city(world, rng)
    best = unique_best(flights, lambda f: cents_of(f["price"]))
    return Resolved(best["code"], [_ref(f, "price") for f in flights], {"city": city},
                    [f["code"] for f in flights])  # fmt: skip


def earliest(world: World, rng) -> Resolved:
    city, flights = _city(world, rng)
    first = unique_best(flights, lambda f: minutes(f["depart"]))
    return Resolved(first["depart"], [_ref(f, "depart") for f in flights], {"city": city},
                    [f["depart"] for f in flights])  # fmt: skip


def gate(world: World, rng) -> Resolved:
    city, flights = _city(world, rng)
    flight = rng.choice(flights)
    return Resolved(flight["gate"], [_ref(flight, "gate")], {"code": flight["code"], "city": city},
                    [f["gate"] for _, f in _all_flights(world)])  # fmt: skip


def price_of(world: World, rng) -> Resolved:
    city, flights = _city(world, rng)
    flight = rng.choice(flights)
    params = {"code": flight["code"], "city": city}
    return Resolved(flight["price"], [_ref(flight, "price")], params,
                    [f["price"] for f in flights])  # fmt: skip


def cheaper_city(world: World, rng) -> Resolved:
    results = world.data("flights")["results"]
    a, b = rng.sample(sorted(results), 2)

    def lowest(city: str) -> int:
        return min(cents_of(f["price"]) for f in results[city])

    winner = unique_best([a, b], lowest)
    refs = [_ref(f, "price") for city in (a, b) for f in results[city]]
    return Resolved(winner, refs, {"a": a, "b": b}, [a, b])


def trip_seat(world: World, rng) -> Resolved:
    trips = world.data("flights")["trips"]
    i = rng.randrange(len(trips))
    return Resolved(trips[i]["seat"], [f"flights.trip{i}_seat"], {"city": trips[i]["city"]},
                    [b["seat"] for b in world.data("flights")["bookings"]])  # fmt: skip


def direct_count(world: World, rng) -> Resolved:
    city, flights = _city(world, rng)
    direct = sum(f["stops"] == "Direct" for f in flights)
    return Resolved(str(direct), [_ref(f, "stops") for f in flights], {"city": city},
                    [str(n) for n in range(len(flights) + 1)])  # fmt: skip


def seats_left(world: World, rng) -> Resolved:
    city, flights = _city(world, rng)
    flight = rng.choice(flights)
    return Resolved(flight["seats_left"], [_ref(flight, "seats")],
                    {"code": flight["code"], "city": city},
                    [f["seats_left"] for f in flights])  # fmt: skip


APPS = ("flights",)
TEMPLATES = [
    Template(
        "flights-cheapest", APPS,
        "Which SkyBook flight from Lisbon to {city} is the cheapest? "
        "Answer with its flight number.",
        "iexact", cheapest, "price", "same_screen", "compare", "Compare & Decide",
        "the flight number only (e.g. WY123)",
    ),
    Template(
        "flights-earliest", APPS,
        "At what time does the first SkyBook flight of the day from Lisbon to {city} leave?",
        "exact", earliest, "time", "same_screen", "compare", "Compare & Decide",
    ),
    Template(
        "flights-gate", APPS,
        "From which gate does SkyBook flight {code} from Lisbon to {city} leave?",
        "iexact", gate, "code", "later_page", "answer", "Lookup", "the gate only (e.g. B12)",
    ),
    Template(
        "flights-price", APPS,
        "How much is a seat on SkyBook flight {code} from Lisbon to {city}?",
        "number", price_of, "price", "same_screen", "answer", "Lookup",
    ),
    Template(
        "flights-cheaper-city", APPS,
        "Is the cheapest SkyBook flight from Lisbon cheaper to {a} or to {b}? "
        "Answer with the city.",
        "iexact", cheaper_city, "price", "later_page", "compare", "Compare & Decide",
        "the city's name only",
    ),
    Template(
        "flights-trip-seat", APPS,
        "What seat do you have on your SkyBook trip to {city}?",
        "iexact", trip_seat, "code", "later_page", "answer", "Lookup", "the seat only (e.g. 14C)",
    ),
    Template(
        "flights-direct-count", APPS,
        "How many direct SkyBook flights are there from Lisbon to {city}?",
        "number", direct_count, "list", "same_screen", "answer", "Lookup", "the number only",
    ),
    Template(
        "flights-seats-left", APPS,
        "How many seats are left on SkyBook flight {code} from Lisbon to {city}?",
        "number", seats_left, "number", "later_page", "answer", "Lookup", "the number only",
    ),
]  # fmt: skip
