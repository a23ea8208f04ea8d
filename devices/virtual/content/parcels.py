"""ParcelTrack: type a tracking number, see where the parcel is (its delivery day, the locker
it waits in and the locker's pickup code). It lists no parcels: a number must be known."""

from __future__ import annotations

from ..templates import Resolved, Template
from ..world import WEEKDAYS, Content, World, distinct_codes

SHOPS = ["FreshCart", "MegaMart", "BookNook", "Gadgetry", "PetPal", "Homely"]
LOCKERS = [
    "Central Station", "Riverside Mall", "Oak Street", "Harbour Square", "North Campus",
    "Market Hall", "Park Avenue",
]  # fmt: skip
STATUSES = ["In transit", "Out for delivery", "At the sorting centre", "Arrived in your city"]
PARCELS = 4


def build(content: Content, world: World) -> None:
    rng = content.rng("parcels")
    shops = rng.sample(SHOPS, PARCELS)
    numbers = distinct_codes(rng, PARCELS, 9, prefix="PT")
    days = rng.sample(WEEKDAYS, PARCELS)
    lockers = rng.sample(LOCKERS, PARCELS)
    pickups = distinct_codes(rng, PARCELS, 6)
    parcels = []
    for i in range(PARCELS):
        where = f"the tracking result of {numbers[i]}"
        parcels.append(
            {
                "number": numbers[i],
                "shop": shops[i],
                "status": rng.choice(STATUSES),
                "day": content.var(f"day_{i}", "date", days[i], where,
                                   f"the delivery day of the {shops[i]} parcel"),
                "locker": content.var(f"locker_{i}", "name", f"Locker {lockers[i]}", where,
                                      f"the locker of the {shops[i]} parcel"),
                "pickup_code": content.var(f"pickup_{i}", "code", pickups[i], where,
                                           f"the pickup code of the {shops[i]} parcel"),
            }
        )  # fmt: skip
    content.data = {"parcels": parcels}


def delivery_day(world: World, rng) -> Resolved:
    parcels = world.data("parcels")["parcels"]
    i = rng.randrange(len(parcels))
    return Resolved(parcels[i]["day"], [f"parcels.day_{i}"], {"number": parcels[i]["number"]},
                    [p["day"] for p in parcels])  # fmt: skip


TEMPLATES = [
    Template(
        "parcels-delivery-day", ("parcels",),
        "When will the parcel with tracking number {number} be delivered? Track it in "
        "ParcelTrack and answer with the day.",
        "iexact", delivery_day, "code", "same_screen", "type", "Lookup",
        "the day only (e.g. Tuesday)",
    ),
]  # fmt: skip
