"""The procedural generator (no model): an environment drawn from a seed configuration, as
STAMP's are (§3.3): a domain and its content vocabulary, page archetypes, a style (palette,
typography, density, spacing, icon set), memory items injected by construction (what must be
remembered, on which page, where it is used) and distractors.

:func:`generate` gives a :class:`Draft`: STAMP's scenario and task_spec (Tables 18 and 19's
structures), the manifest of the app package and the page model ``render.py`` writes the HTML
from. Everything is drawn from ``random.Random(f"procedural/{seed}/{index}")``: the same seed
and index give the same environment, byte for byte.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from typing import Any

from devices.virtual.packages import FORMAT, SCHEMA_VERSION
from devices.virtual.world import cents_of, money, slugify

from .vocab import (
    DENSITIES,
    DOMAINS,
    FONTS,
    HEADERS,
    ICON_SETS,
    LIST_STYLES,
    LISTING,
    OTHER,
    PALETTES,
    PEOPLE,
    RADII,
    Collection,
    Domain,
)

GENERATOR = "procedural"
VERSION = "1.0.0"
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip
SEPARATORS = ("-", ";", "/")
# The memory type (templates.WHAT) of each field kind.
WHAT = {"code": "code", "price": "price", "time": "time", "date": "date", "number": "number",
        "name": "name"}  # fmt: skip
# A number ("42") may show inside another text ("42 km"): numbers are compared, never joined.
JOINABLE = ("code", "time", "date", "name")
COMPARABLE = ("price", "number")
MAX_STEPS = 40
LATER_STEPS = 3  # the fewest steps of the reads after the first (see generate)
SUBMIT = {
    "open": "go-submit-answer",
    "input": "answer-input",
    "submit": "answer-submit",
    "result": "result",
    "back": "submit-back",
}
DOMAIN_NAMES = tuple(d.name for d in DOMAINS)


class GenerationError(ValueError):
    """A configuration the generator cannot use (an unknown domain, say)."""


@dataclass
class Draft:
    """One generated environment before it is rendered and packaged."""

    slug: str
    seed: int
    index: int
    domain: str
    style: dict[str, Any]
    scenario: dict[str, Any]
    task_spec: dict[str, Any]
    manifest: dict[str, Any]
    pages: dict[str, Any]  # the page model render.py writes the HTML from
    memory_types: list[str] = field(default_factory=list)


def check_domains(names: list[str] | None) -> list[str]:
    """The domains asked for (all when none), each known; GenerationError names the others."""
    if not names:
        return list(DOMAIN_NAMES)
    unknown = [n for n in names if n not in DOMAIN_NAMES]
    if unknown:
        raise GenerationError(
            f"domains: unknown domain {unknown[0]!r} (known: {', '.join(DOMAIN_NAMES)})"
        )
    return list(dict.fromkeys(names))


def draw_value(kind: str, extra: str, rng: random.Random) -> str:
    """A value of a field: a code shaped by its pattern, a price, a time, a date, a number
    (with its unit) or a person's name."""
    if kind == "code":
        return "".join(
            rng.choice(string.ascii_uppercase.replace("O", "").replace("I", ""))
            if c == "A"
            else str(rng.randint(0, 9))
            if c == "9"
            else c
            for c in extra
        )
    if kind == "price":
        return money(rng.randint(5, 480) * 100 + rng.choice((0, 49, 95, 99)))
    if kind == "time":
        return f"{rng.randint(7, 21):02d}:{rng.choice((0, 10, 15, 20, 30, 40, 45, 50)):02d}"
    if kind == "date":
        return f"{rng.randint(1, 28)} {rng.choice(MONTHS)}"
    if kind == "number":  # three digits without a unit: no "2" of "2 nights" is one
        return f"{rng.randint(12, 96)}{extra}" if extra else str(rng.randint(100, 999))
    if kind == "name":  # a first and a last name of two people: 400 names
        return f"{rng.choice(PEOPLE).split()[0]} {rng.choice(PEOPLE).split()[1]}"
    raise GenerationError(f"unknown field kind {kind!r}")


def _number(value: str) -> float:
    return cents_of(value) / 100 if value.startswith("$") else float(value.split()[0].rstrip("%"))


def _style(rng: random.Random) -> dict[str, Any]:
    palette = list(rng.choice(PALETTES))
    density = rng.choice(sorted(DENSITIES))
    font_px, pad, gap = DENSITIES[density]
    icon_set = rng.choice(sorted(ICON_SETS))
    return {
        "palette": {
            "primary": palette[0],
            "accent": palette[1],
            "background": palette[2],
            "surface": palette[3],
            "text": palette[4],
            "muted": palette[5],
        },
        "font": rng.choice(FONTS),
        "font_px": font_px + rng.choice((0, 0, 1)),
        "density": density,
        "pad": pad,
        "gap": gap,
        "spacing": rng.choice((4, 8, 12)),
        "radius": rng.choice(RADII),
        "icon_set": icon_set,
        "header": rng.choice(HEADERS),
        "list_style": rng.choice(LIST_STYLES),
        "grid_columns": rng.choice((2, 2, 3)),
    }


class _Values:
    """Values drawn for the whole app, none twice (so no distractor equals a task's value)."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.taken: set[str] = set()

    def draw(self, kind: str, extra: str) -> str:
        for _ in range(200):
            value = draw_value(kind, extra, self.rng)
            if value not in self.taken:
                self.taken.add(value)
                return value
        raise GenerationError(f"no new {kind} value to draw")


def _tab_id(label: str) -> str:
    return slugify(label).replace("_", "-")


def _items(
    collection: Collection, tab: str, rng: random.Random, values: _Values
) -> list[dict[str, Any]]:
    count = rng.randint(4, min(7, len(collection.names)))
    names = rng.sample(collection.names, count)
    items = []
    for i, name in enumerate(names):
        key = f"{tab}-{i + 1}"
        fields = [
            {
                "label": label,
                "kind": kind,
                "key": slugify(label).replace("_", "-"),
                "value": values.draw(kind, extra),
                "testid": f"fact-{key}-{slugify(label).replace('_', '-')}",
            }
            for label, kind, extra in collection.fields
        ]
        items.append(
            {
                "key": key,
                "name": name,
                "subtitle": rng.choice(collection.subtitles),
                "testid": f"item-{key}",
                "page": f"detail-{key}",
                "fields": fields,
                "liked": rng.random() < 0.3,
            }
        )
    return items


def _tabs(domain: Domain, rng: random.Random, values: _Values) -> list[dict[str, Any]]:
    """3 to 5 tabs: two or three listing the domain's collections, the others without task
    values (feed, settings, search, form, dashboard)."""
    collections = rng.sample(domain.collections, rng.choice((2, 3, 3)))
    others = rng.sample(domain.extra_tabs, rng.randint(1, 2))
    tabs = []
    for collection in collections:
        tab = _tab_id(collection.tab)
        tabs.append(
            {
                "id": tab,
                "label": collection.tab,
                "kind": rng.choice(LISTING),
                "collection": collection,
                "items": _items(collection, tab, rng, values),
            }
        )
    for label in others:
        tabs.append({"id": _tab_id(label), "label": label, "kind": rng.choice(OTHER), "items": []})
    searching = [t for t in tabs if t["kind"] in ("search", "search_list")]
    for tab in searching[1:]:  # one search field per app: its test id is search-input
        tab["kind"] = "list" if tab["items"] else "dashboard"
    rng.shuffle(tabs)
    # The first tab is the home screen: a listing one is as likely first as any other.
    return tabs


def _reads(tabs: list[dict[str, Any]], rng: random.Random) -> tuple[str, list[dict], dict]:
    """The task's memory items: (answer op, the facts read, the answer's parameters)."""
    listing = [t for t in tabs if t["items"]]
    comparable = [
        (t, f["key"]) for t in listing for f in t["items"][0]["fields"] if f["kind"] in COMPARABLE
    ]
    if comparable and rng.random() < 0.4:
        tab, key = rng.choice(comparable)
        chosen = rng.sample(tab["items"], min(len(tab["items"]), rng.choice((2, 3, 3))))
        facts = [(tab, item, next(f for f in item["fields"] if f["key"] == key)) for item in chosen]
        numbers = [_number(f["value"]) for _, _, f in facts]
        if len(set(numbers)) == len(numbers):
            return "holder", facts, {"of": rng.choice(("min", "max"))}
    count = 3 if len(listing) >= 3 and rng.random() < 0.35 else 2
    facts = []
    used_tabs = rng.sample(listing, min(count, len(listing)))
    while len(used_tabs) < count:
        used_tabs.append(rng.choice(listing))
    seen: set[str] = set()  # one fact per item: a page seen again would show the other too
    for tab in used_tabs:
        free = [i for i in tab["items"] if i["key"] not in seen]
        item = rng.choice(free)
        seen.add(item["key"])
        fact = rng.choice([f for f in item["fields"] if f["kind"] in JOINABLE])
        facts.append((tab, item, fact))
    return "join", facts, {"sep": rng.choice(SEPARATORS)}


def _locator(tab: dict[str, Any], item: dict[str, Any], detail: dict[str, Any]) -> dict:
    """How an automaton finds a fact: the taps (or the search) from the app's home, then the
    element to read, by data-testid."""
    if tab["kind"] == "search_list":
        path = [{"tap": f"tab-{tab['id']}"}, {"search": "search-input", "query": item["name"]}]
    else:
        path = [{"tap": f"tab-{tab['id']}"}]
    path.append({"tap": item["testid"]})
    if detail.get("subtabs"):
        path.append({"tap": detail["subtabs"][1]["testid"]})
    return {"path": path}


def _example(op: str, facts: list, params: dict) -> str:
    if op == "holder":
        return "Sample Name"
    pieces = {"code": "AB12", "time": "09:05", "date": "3 May", "name": "Jane Doe",
              "number": "42"}  # fmt: skip
    return params["sep"].join(pieces.get(f["kind"], "X1") for _, _, f in facts)


def generate(seed: int, index: int, domains: list[str] | None = None) -> Draft:
    """The environment of ``index`` in a generation of seed ``seed`` over ``domains``."""
    domains = check_domains(domains)
    rng = random.Random(f"procedural/{seed}/{index}")
    chosen = rng.choice(domains)
    domain = next(d for d in DOMAINS if d.name == chosen)
    label = rng.choice(domain.prefixes) + rng.choice(domain.suffixes)
    slug = f"gen-{seed}-{index:04d}"
    package = f"com.waypoint.gen.s{seed}.e{index}"
    style = _style(rng)
    values = _Values(rng)
    values.taken |= {name for c in domain.collections for name in c.names}
    tabs = _tabs(domain, rng, values)
    op, facts, params = _reads(tabs, rng)

    # Detail pages; the targets' may hide their facts behind a "Details" sub-tab, and may show
    # a near miss (an earlier value of the same kind) beside the one the task asks.
    details: dict[str, dict[str, Any]] = {}
    for tab in tabs:
        for item in tab["items"]:
            details[item["key"]] = {
                "id": item["page"],
                "key": item["key"],
                "title": item["name"],
                "subtitle": item["subtitle"],
                "tab": tab["id"],
                "fields": item["fields"],
                "layout": rng.choice(("table", "cards", "hero")),
                "subtabs": [],
                "near_miss": None,
                "liked": item["liked"],
            }
    targets = {item["key"] for _, item, _ in facts}
    for key in targets:
        detail = details[key]
        if rng.random() < 0.3:
            detail["subtabs"] = _subtabs(key)
    if op == "join":
        # Memory by construction: after the first value is read, the steps to the later ones
        # and to the answer field (open the answer page, tap the field) must take it out of
        # the agent's last K=5 screens before it is typed: the later reads take 3 steps or
        # more (a sub-tab on their page adds one).
        later = facts[1:]
        for _, item, _ in reversed(later):
            if sum(_path_length(t, details[i["key"]]) for t, i, _ in later) >= LATER_STEPS:
                break
            details[item["key"]]["subtabs"] = _subtabs(item["key"])
    if op == "join" and rng.random() < 0.4:
        _, item, fact = rng.choice(facts)
        if fact["kind"] == "code":
            details[item["key"]]["near_miss"] = {
                "label": f"Previous {fact['label'].lower()}",
                "value": values.draw("code", _pattern_of(fact["value"])),
                "testid": f"old-{item['key']}-{fact['key']}",
            }

    variables, memory_items, reads = [], [], []
    for n, (tab, item, fact) in enumerate(facts):
        name = f"fact{n + 1}_{slugify(fact['label'])}"
        fact["var"] = name
        where = f"{tab['label']} > {item['name']} > {fact['label']}"
        description = f"the {fact['label'].lower()} of the {tab['collection'].noun} {item['name']}"
        variables.append(
            {
                "name": name,
                "kind": WHAT[fact["kind"]],
                "value": fact["value"],
                "where": where,
                "description": description,
            }  # fmt: skip
        )
        locator = _locator(tab, item, details[item["key"]])
        memory_items.append(
            {
                "page_id": item["page"],
                "fact_key": name,
                "how_to_find": f"{where}: data-testid {fact['testid']}",
                "locator": {**locator, "testid": fact["testid"]},
            }
        )
        reads.append(
            {
                "key": name,
                **locator,
                "testid": fact["testid"],
                "label": item["name"],
                "what": description,
            }  # fmt: skip
        )

    refs = [f"{slug}.{v['name']}" for v in variables]
    noun = lambda tab, item: f'the {tab["collection"].noun} "{item["name"]}"'  # noqa: E731
    if op == "holder":
        field_label = facts[0][2]["label"].lower()
        names = [item["name"] for _, item, _ in facts]
        numbers = [_number(f["value"]) for _, _, f in facts]
        pick = min if params["of"] == "min" else max
        gold = names[numbers.index(pick(numbers))]
        which = "lowest" if params["of"] == "min" else "highest"
        listed = ", ".join(f'"{n}"' for n in names[:-1]) + f' and "{names[-1]}"'
        tab = facts[0][0]
        question = (
            f"In {label}, open the {tab['label']} tab and compare the {field_label} of the "
            f"{tab['collection'].noun}s {listed} (each on its own page). Which one has the "
            f"{which} {field_label}?"
        )
        output_format = f"the {tab['collection'].noun}'s name exactly as shown (e.g. Sample Name)"
        gold_spec = {"op": "holder", "vars": refs, "labels": names, "of": params["of"]}
        what, use, intent = WHAT[facts[0][2]["kind"]], "compare", "Compare & Decide"
        explain = f"the {which} {field_label} among {listed}"
        for read in reads:
            read["compare"] = True
        answer = {"op": "holder", "of": params["of"], "labels": {r["key"]: r["label"] for r in
                                                                 reads}}  # fmt: skip
    else:
        sep = params["sep"]
        gold = sep.join(f["value"] for _, _, f in facts)
        parts = [f"the {f['label'].lower()} of {noun(t, i)} ({t['label']})" for t, i, f in facts]
        listed = ", ".join(parts[:-1]) + " and " + parts[-1]
        question = f"In {label}, look up {listed}."
        output_format = (
            f'the {len(facts)} values in that order, joined by "{sep}" with no spaces '
            f"(e.g. {_example(op, facts, params)})"
        )
        gold_spec = {"op": "format", "vars": refs, "template": sep.join("{}" for _ in facts)}
        kinds = {f["kind"] for _, _, f in facts}
        what = WHAT[kinds.pop()] if len(kinds) == 1 else "list"
        use, intent = "answer", "Lookup"
        explain = f"the values joined by {sep!r}, in the order asked"
        answer = {"op": "join", "sep": sep}
    natural = (
        f"{question} Then open the answer page (Submit, at the top right), enter {output_format} "
        "and submit it; finally give the same text as your answer."
    )
    guideline = " ".join(
        [f"Open {label}."]
        + [
            f"Find the value {f['value']} in {v['where']}."
            for (_, _, f), v in zip(facts, variables, strict=True)
        ]  # fmt: skip
        + [
            f"The answer is {explain}: {gold}.",
            "Tap Submit at the top right, type it into the answer field, tap Submit answer "
            "and check that the page says Success!",
        ]
    )
    pages = _page_model(label, tabs, details, style, rng)
    required = sorted(
        {f"tab-{t['id']}" for t in tabs}
        | set(SUBMIT.values())
        | {f["testid"] for _, _, f in facts}
        | {i["testid"] for _, i, _ in facts}
        | ({"search-input"} if any(t["kind"] in ("search", "search_list") for t in tabs) else set())
    )
    extra = pages["interactives"]
    task_spec = {
        "platform": {
            "app_name": label,
            "style_keywords": [
                style["density"],
                style["header"],
                style["list_style"],
                style["icon_set"],
            ],  # fmt: skip
            "tabs": [t["label"] for t in tabs],
        },
        "task": {
            "natural_language": natural,
            "guideline": guideline,
            "must_visit_pages": list(dict.fromkeys(i["page"] for _, i, _ in facts)) + ["submit"],
            "memory_items": memory_items,
            "answer": answer,
            "final_action": {
                "page_id": "submit",
                "type": "input_and_submit",
                "open_testid": SUBMIT["open"],
                "input_testid": SUBMIT["input"],
                "submit_testid": SUBMIT["submit"],
                "result_testid": SUBMIT["result"],
                "required_output_format": output_format,
                "gold": gold,
            },
            "grading": {"method": "exact", "gold": gold, "pass_regex": f"^{_regex(gold)}$"},
        },
        "ui_contract": {
            "required_testids": required,
            "navigation_contract": [
                "tab-* must exist and be clickable for navigation on every page but the "
                "submission page",
                "go-submit-answer must show at the top right of every information page",
                "the submission page shows no tabs and has a back button (submit-back) to home",
            ],
        },
        "anti_triviality": {
            "extra_interactives": extra,
            "notes": "sibling items show the same fields with other values; a near miss may "
            "show an earlier value of the same kind beside the one asked",
        },
    }
    scenario = {
        "meta": {
            "seed": seed,
            "index": index,
            "platform_type": "mobile web app",
            "app_name": label,
            "theme_keywords": [domain.name, style["density"], style["header"]],
            "generator": GENERATOR,
        },
        "data": {
            "entities": [
                {
                    "tab": t["label"],
                    "name": i["name"],
                    "fields": {f["label"]: f["value"] for f in i["fields"]},
                }  # fmt: skip
                for t in tabs
                for i in t["items"]
            ],
            "truth": {
                "gold": gold,
                "explain": explain,
                "facts": {v["name"]: v["value"] for v in variables},
            },
        },
        "task": {
            "question": question,
            "must_visit": task_spec["task"]["must_visit_pages"],
            "final_output_format": output_format,
            "gold": gold,
        },
        "ui_requirements": {
            "tabs": [t["label"] for t in tabs],
            "key_testids": required,
            "distraction_interactions": extra,
            "pages": [
                {
                    "id": p["id"],
                    "title": p["title"],
                    "purpose": p["kind"],
                    "must_show_facts": p["facts"],
                }  # fmt: skip
                for p in pages["pages"] + pages["details"]
            ],
        },
    }
    manifest = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "slug": slug,
        "package": package,
        "label": label,
        "activity": ".MainActivity",
        "version": VERSION,
        "color": style["palette"]["primary"],
        "generator": {
            "name": GENERATOR,
            "seed": seed,
            "index": index,
            "domain": domain.name,
            "style": {
                k: style[k]
                for k in (
                    "palette",
                    "font",
                    "font_px",
                    "density",
                    "spacing",
                    "radius",
                    "icon_set",
                    "header",
                    "list_style",
                )
            },
        },  # fmt: skip
        "variables": variables,
        "tasks": [
            {
                "id": slug,
                "apps": [slug],
                "instruction": natural,
                "gold": gold_spec,
                "rule": "exact",
                "memory": {"what": what, "distance": "later_page", "use": use},
                "intent": intent,
                "answers_page": False,
                "output_format": output_format,
                "group": "generated",
                "max_steps": MAX_STEPS,
                # What the generic solver follows (agents/spec_solver.py): locators, never values.
                "plan": {"reads": reads, "answer": answer, "submit": SUBMIT},
            }
        ],
    }
    return Draft(
        slug=slug,
        seed=seed,
        index=index,
        domain=domain.name,
        style=style,
        scenario=scenario,
        task_spec=task_spec,
        manifest=manifest,
        pages=pages,
        memory_types=[f"{what}/{use}"],
    )


def _subtabs(key: str) -> list[dict[str, str]]:
    return [
        {"id": "overview", "label": "Overview", "testid": f"subtab-{key}-overview"},
        {"id": "details", "label": "Details", "testid": f"subtab-{key}-details"},
    ]


def _path_length(tab: dict[str, Any], detail: dict[str, Any]) -> int:
    """The solver's steps from anywhere to a fact: the tab, the search (tap the field, type)
    when the tab is a search list, the item, the sub-tab when the page has them."""
    return 1 + (2 if tab["kind"] == "search_list" else 0) + 1 + (1 if detail["subtabs"] else 0)


def _pattern_of(value: str) -> str:
    return "".join("9" if c.isdigit() else "A" if c.isalpha() else c for c in value)


def _regex(text: str) -> str:
    return "".join("\\" + c if c in r".^$*+?{}[]\|()/" else c for c in text)


def _page_model(
    label: str,
    tabs: list[dict[str, Any]],
    details: dict[str, dict[str, Any]],
    style: dict[str, Any],
    rng: random.Random,
) -> dict[str, Any]:
    """What the template renders: the tab pages (each of its archetype), the detail pages and
    the distractions (likes, chips, switches, expandable rows, sort buttons)."""
    icons = ICON_SETS[style["icon_set"]]
    pages, interactives = [], []
    domain_lines = [
        "New this week",
        "Tips and news",
        "Updated today",
        "Recommended for you",
        "Trending now",
    ]
    for n, tab in enumerate(tabs):
        icon = icons[n % len(icons)] or tab["label"][0]
        page: dict[str, Any] = {
            "id": tab["id"],
            "title": tab["label"],
            "kind": tab["kind"],
            "icon": icon,
            "rows": tab["items"],
            "facts": [],
            "chips": [],
            "switches": [],
            "posts": [],
            "sort": False,
            "form": [],
        }
        if tab["items"]:
            page["chips"] = [
                {"label": c, "testid": f"chip-{tab['id']}-{slugify(c).replace('_', '-')}"}
                for c in ("All", "Recent", "Favorites")
            ]
            page["sort"] = rng.random() < 0.5
            interactives += [c["testid"] for c in page["chips"][1:]]
            interactives += [f"like-{i['key']}" for i in tab["items"][:2]]
            if page["sort"]:
                interactives.append(f"sort-{tab['id']}")
        elif tab["kind"] == "settings":
            page["switches"] = [
                {
                    "label": s,
                    "testid": f"switch-{tab['id']}-{slugify(s).replace('_', '-')}",
                    "on": rng.random() < 0.5,
                }  # fmt: skip
                for s in rng.sample(
                    [
                        "Notifications",
                        "Dark mode",
                        "Location access",
                        "Email updates",
                        "Autoplay",
                        "Data saver",
                        "Biometric login",
                    ],
                    4,
                )  # fmt: skip
            ]
            interactives += [s["testid"] for s in page["switches"]]
        elif tab["kind"] == "form":
            page["form"] = [
                {"label": "Subject", "testid": f"form-{tab['id']}-subject"},
                {"label": "Message", "testid": f"form-{tab['id']}-message"},
            ]
            interactives.append(f"form-{tab['id']}-send")
        else:  # feed, search, dashboard: posts to like and expand
            page["posts"] = [
                {
                    "key": f"{tab['id']}-post-{k}",
                    "title": rng.choice(domain_lines),
                    "body": f"{label} team: "
                    + rng.choice(
                        [
                            "See what changed in the app.",
                            "Three things to try today.",
                            "Thanks for being with us.",
                            "A quick update on our service.",
                        ]
                    ),
                    "more": "Tap the heart to save this post for later.",
                }  # fmt: skip
                for k in range(1, rng.randint(3, 5))
            ]
            interactives += [f"like-{p['key']}" for p in page["posts"]]
            interactives += [f"more-{p['key']}" for p in page["posts"][:1]]
        pages.append(page)
    detail_pages = []
    for detail in details.values():
        facts = [f["var"] for f in detail["fields"] if f.get("var")]
        detail_pages.append({**detail, "facts": facts, "kind": "detail"})
        interactives.append(f"fav-{detail['key']}")
    return {
        "label": label,
        "pages": pages,
        "details": detail_pages,
        "interactives": list(dict.fromkeys(interactives)),
        "style": style,
    }
