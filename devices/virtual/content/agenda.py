"""Agenda: this week's events, day by day (title and times in the day's list; where, and who
joins, on the event's page)."""

from __future__ import annotations

from ..templates import Resolved, Template
from ..world import WEEKDAYS, Content, World, distinct_times, minutes, unique_best

TITLES = [
    "Team standup", "Dentist", "Yoga class", "Project review", "Lunch with a client",
    "Piano lesson", "Budget planning", "Haircut", "Book club", "Design workshop",
    "Parent meeting", "Car service", "Coffee catch-up", "Tax advisor", "Football practice",
    "Language class", "Doctor's appointment", "Quarterly planning", "Gym session", "Volunteering",
    "Board game night", "Wine tasting",
]  # fmt: skip
PLACES = [
    "Room 2A", "Room 4B", "City Clinic", "Studio 9", "Café Nova", "Main Library", "Town Hall",
    "Garage Leal", "Sports Centre", "Harbour Office", "Community Hall", "Online",
]  # fmt: skip


def _end(start: str, length: int) -> str:
    end = minutes(start) + length
    return f"{end // 60:02d}:{end % 60:02d}"


def build(content: Content, world: World) -> None:
    rng = content.rng("agenda")
    counts = {day: rng.choice([1, 2, 2, 3]) for day in WEEKDAYS}
    counts["Friday"] = 3
    titles = iter(rng.sample(TITLES, sum(counts.values())))
    meeting = world.value("chatter.meeting_time")  # what Noah proposed in Chatter
    people = [p["name"] for p in world.data("contacts")["people"]]
    events, n = [], 0
    for day in WEEKDAYS:
        if day == "Friday":  # one of Friday's events starts when Noah wants to meet
            others = [t for t in distinct_times(rng, 6, 8, 19) if t != meeting]
            starts = [meeting, *others[:2]]
            rng.shuffle(starts)
        else:
            starts = distinct_times(rng, counts[day], 8, 19)
        lengths = rng.sample([30, 45, 60, 75, 90, 120], counts[day])
        places = rng.sample(PLACES, counts[day])
        day_events = []
        for start, length, place in zip(starts, lengths, places, strict=True):
            title = next(titles)
            where = f"'{title}' on {day}"
            day_events.append(
                {
                    "n": n,
                    "title": title,
                    "day": day,
                    "start": content.var(f"start_{n}", "time", start, f"{day} in Agenda",
                                         f"when '{title}' starts"),
                    "end": content.var(f"end_{n}", "time", _end(start, length),
                                       f"{day} in Agenda", f"when '{title}' ends"),
                    "location": content.var(f"location_{n}", "name", place, f"{where}'s page",
                                            f"where '{title}' takes place"),
                    "attendee": content.var(f"attendee_{n}", "name", rng.choice(people),
                                            f"{where}'s page", f"who joins '{title}'"),
                }
            )  # fmt: skip
            n += 1
        events += sorted(day_events, key=lambda e: minutes(e["start"]))
    content.data = {"days": WEEKDAYS, "events": events}


def events_on(world: World, day: str) -> list[dict]:
    return [e for e in world.data("agenda")["events"] if e["day"] == day]


def _event(world: World, rng) -> tuple[dict, list[dict]]:
    day = rng.choice(WEEKDAYS)
    return rng.choice(events_on(world, day)), events_on(world, day)


def event_start(world: World, rng) -> Resolved:
    event, same_day = _event(world, rng)
    return Resolved(event["start"], [f"agenda.start_{event['n']}"],
                    {"title": event["title"], "day": event["day"]},
                    [e["start"] for e in same_day])  # fmt: skip


def event_location(world: World, rng) -> Resolved:
    event, same_day = _event(world, rng)
    return Resolved(event["location"], [f"agenda.location_{event['n']}"],
                    {"title": event["title"], "day": event["day"]},
                    [e["location"] for e in same_day])  # fmt: skip


def first_event(world: World, rng) -> Resolved:
    day = rng.choice([d for d in WEEKDAYS if len(events_on(world, d)) > 1])
    same_day = events_on(world, day)
    first = unique_best(same_day, lambda e: minutes(e["start"]))
    return Resolved(first["title"], [f"agenda.start_{e['n']}" for e in same_day], {"day": day},
                    [e["title"] for e in same_day])  # fmt: skip


def count_day(world: World, rng) -> Resolved:
    day = rng.choice(WEEKDAYS)
    same_day = events_on(world, day)
    return Resolved(str(len(same_day)), [f"agenda.start_{e['n']}" for e in same_day],
                    {"day": day}, [str(n) for n in range(6)])  # fmt: skip


def longest_event(world: World, rng) -> Resolved:
    day = rng.choice([d for d in WEEKDAYS if len(events_on(world, d)) > 1])
    same_day = events_on(world, day)
    longest = unique_best(same_day, lambda e: minutes(e["end"]) - minutes(e["start"]), max)
    refs = [f"agenda.{what}_{e['n']}" for e in same_day for what in ("start", "end")]
    return Resolved(longest["title"], refs, {"day": day}, [e["title"] for e in same_day])


APPS = ("agenda",)
TEMPLATES = [
    Template(
        "agenda-event-start", APPS, "At what time does '{title}' start on {day}, according to "
        "Agenda?", "exact", event_start, "time", "same_screen", "answer", "Lookup",
    ),
    Template(
        "agenda-event-location", APPS, "Where does '{title}' on {day} take place, according to "
        "Agenda?", "iexact", event_location, "name", "later_page", "answer", "Lookup",
        "the place only, as Agenda shows it",
    ),
    Template(
        "agenda-first-event", APPS, "What is your first event on {day} in Agenda? Answer with "
        "its title.", "iexact", first_event, "time", "same_screen", "compare",
        "Compare & Decide", "the event's title only",
    ),
    Template(
        "agenda-count-day", APPS, "How many events do you have on {day}, according to Agenda?",
        "number", count_day, "list", "same_screen", "answer", "Lookup", "the number only",
    ),
    Template(
        "agenda-longest-event", APPS, "Which of your events on {day} in Agenda lasts longest? "
        "Answer with its title.", "iexact", longest_event, "time", "same_screen", "compare",
        "Compare & Decide", "the event's title only",
    ),
]  # fmt: skip
