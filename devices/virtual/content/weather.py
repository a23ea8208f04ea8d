"""SkyCast: saved cities with the temperature now, and each city's page with a 7-day forecast."""

from __future__ import annotations

from ..templates import Resolved, Template
from ..world import WEEKDAYS, Content, World, slugify, unique_best

CITY_POOL = [
    "Lisbon", "Osaka", "Denver", "Tallinn", "Porto", "Seville", "Quito", "Oslo", "Cairo",
    "Dublin", "Hanoi", "Lima", "Nairobi", "Perth", "Vienna", "Zagreb",
]  # fmt: skip
CONDITIONS = ["Sunny", "Partly cloudy", "Cloudy", "Windy", "Foggy"]
SAVED = 6


def build(content: Content, world: World) -> None:
    rng = content.rng("cities")
    names = rng.sample(CITY_POOL, SAVED)
    temps = rng.sample(range(4, 33), SAVED)  # no two cities equally warm
    cities = []
    for name, temp in zip(names, temps, strict=True):
        slug = slugify(name)
        where = f"{name}'s page"
        highs = rng.sample(range(temp - 4, temp + 9), 7)  # one warmest day
        rain = rng.randrange(7)
        week = []
        for i, (day, high) in enumerate(zip(WEEKDAYS, highs, strict=True)):
            week.append(
                {
                    "day": day,
                    "condition": "Rain" if i == rain else rng.choice(CONDITIONS),
                    "high": content.var(
                        f"high_{slug}_{day.lower()}",
                        "number",
                        f"{high}°",
                        f"{where}, 7-day forecast, {day}",
                        f"the forecast high in {name} on {day}",
                    ),
                    "low": f"{high - rng.randint(5, 11)}°",
                }
            )
        cities.append(
            {
                "slug": slug,
                "name": name,
                "temp": content.var(
                    f"temp_{slug}",
                    "number",
                    f"{temp}°",
                    "the list of saved cities",
                    f"the temperature in {name} now",
                ),
                "condition": rng.choice(CONDITIONS),
                "humidity": content.var(
                    f"humidity_{slug}",
                    "number",
                    f"{rng.randint(40, 95)}%",
                    f"{where}, under the temperature",
                    f"the humidity in {name}",
                ),
                "wind": f"{rng.randint(3, 35)} km/h",
                "rain_day": content.var(
                    f"rain_{slug}",
                    "date",
                    WEEKDAYS[rain],
                    f"{where}, 7-day forecast",
                    f"the day it rains in {name}",
                ),
                "week": week,
            }
        )
    content.data = {"cities": cities}


def _cities(world: World) -> list[dict]:
    return world.data("weather")["cities"]


def _degrees(text: str) -> int:
    return int(text.rstrip("°%"))


def warmest_city(world: World, rng) -> Resolved:
    cities = _cities(world)
    warmest = unique_best(cities, lambda c: _degrees(c["temp"]), max)
    return Resolved(
        warmest["name"],
        [f"weather.temp_{c['slug']}" for c in cities],
        candidates=[c["name"] for c in cities],
    )


def temp_now(world: World, rng) -> Resolved:
    cities = _cities(world)
    city = rng.choice(cities)
    return Resolved(
        str(_degrees(city["temp"])),
        [f"weather.temp_{city['slug']}"],
        {"city": city["name"]},
        [c["temp"] for c in cities],
    )


def high_on_day(world: World, rng) -> Resolved:
    city = rng.choice(_cities(world))
    day = rng.choice(city["week"])
    return Resolved(
        str(_degrees(day["high"])),
        [f"weather.high_{city['slug']}_{day['day'].lower()}"],
        {"city": city["name"], "day": day["day"]},
        [d["high"] for d in city["week"]],
    )


def rainy_day(world: World, rng) -> Resolved:
    city = rng.choice(_cities(world))
    return Resolved(
        city["rain_day"],
        [f"weather.rain_{city['slug']}"],
        {"city": city["name"]},
        [d["day"] for d in city["week"]],
    )


def temp_difference(world: World, rng) -> Resolved:
    a, b = rng.sample(_cities(world), 2)
    warm, cold = (a, b) if _degrees(a["temp"]) > _degrees(b["temp"]) else (b, a)
    return Resolved(
        str(_degrees(warm["temp"]) - _degrees(cold["temp"])),
        [f"weather.temp_{warm['slug']}", f"weather.temp_{cold['slug']}"],
        {"warm": warm["name"], "cold": cold["name"]},
        [str(_degrees(warm["temp"]) - _degrees(cold["temp"]))],
    )


def humidity(world: World, rng) -> Resolved:
    cities = _cities(world)
    city = rng.choice(cities)
    return Resolved(
        city["humidity"],
        [f"weather.humidity_{city['slug']}"],
        {"city": city["name"]},
        [city["humidity"], city["temp"], city["wind"]],
    )


def warmest_day(world: World, rng) -> Resolved:
    city = rng.choice(_cities(world))
    day = unique_best(city["week"], lambda d: _degrees(d["high"]), max)
    return Resolved(
        day["day"],
        [f"weather.high_{city['slug']}_{d['day'].lower()}" for d in city["week"]],
        {"city": city["name"]},
        [d["day"] for d in city["week"]],
    )


APPS = ("weather",)
DEGREES = "the number of degrees only (e.g. 21)"
TEMPLATES = [
    Template(
        "weather-warmest-city", APPS,
        "Which of your saved cities in SkyCast is the warmest right now? "
        "Answer with the city's name.",
        "iexact", warmest_city, "number", "same_screen", "compare", "Compare & Decide",
        "the city's name only (e.g. Lisbon)",
    ),
    Template(
        "weather-temp-now", APPS,
        "What is the temperature in {city} right now, according to SkyCast?",
        "number", temp_now, "number", "same_screen", "answer", "Lookup", DEGREES,
    ),
    Template(
        "weather-high-on-day", APPS,
        "What is the forecast high in {city} on {day} in SkyCast?",
        "number", high_on_day, "number", "later_page", "answer", "Lookup", DEGREES,
    ),
    Template(
        "weather-rainy-day", APPS,
        "On which day this week will it rain in {city}, according to SkyCast? Answer with the day.",
        "iexact", rainy_day, "date", "later_page", "answer", "Lookup",
        "the day only (e.g. Tuesday)",
    ),
    Template(
        "weather-temp-difference", APPS,
        "How many degrees warmer is it in {warm} than in {cold} right now, according to SkyCast?",
        "number", temp_difference, "number", "same_screen", "compare", "Compare & Decide", DEGREES,
    ),
    Template(
        "weather-humidity", APPS,
        "What is the humidity in {city} now, according to SkyCast?",
        "number", humidity, "number", "later_page", "answer", "Lookup",
        "the percentage only (e.g. 64%)",
    ),
    Template(
        "weather-warmest-day", APPS,
        "Which day this week will be the warmest in {city}, according to SkyCast? "
        "Answer with the day.",
        "iexact", warmest_day, "number", "later_page", "compare", "Compare & Decide",
        "the day only (e.g. Tuesday)",
    ),
]  # fmt: skip
