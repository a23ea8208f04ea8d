"""Benchmark suites: a named, versioned list of task instances (a template of the virtual device
at a seed), so that two labs run the same benchmark.

An instance is a template at a seed and a difficulty level: ``{template, seed, level}``, the
level STAMP's L1, L2 or L3 (``devices/virtual/templates.py``; an instance without ``level``, as
documents written before levels, is at L3). A suite is a JSON document (``make_suite``);
``check_suite`` validates one read from a file or an API request and checks that this
Waypoint's virtual device poses the same instances: the same app versions, and at each seed and
level the same instruction and the same gold answer (by its sha256, so the document does not
give the answers away). Pure functions over documents; the ``Suite`` model stores them.

A suite may also carry what ``make_suite --check-memory`` measured (``agents.memory_check``):
each instance's ``memory`` block and the suite's ``memory`` summary; ``check_suite`` keeps them.

Posing an instance (the apps' data generated at its seed) is the costly part, a few
milliseconds per seed: every size is counted first (seeds ranges arithmetically, a document's
instances by its list's length) and refused over its limit (``WAYPOINT_MAX_SUITE_INSTANCES``,
``WAYPOINT_MAX_RUN_EPISODES``) before anything is posed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

from core.limits import limit
from devices.services.packages import installed_manifests, installed_versions
from devices.virtual import apps as virtual_apps
from devices.virtual.apps import all_templates, read_manifests
from devices.virtual.templates import NATURAL_LEVEL, Task, Template, level_error
from trajectories.validation import InvalidData, InvalidRequest

SUITE_FORMAT = "waypoint-suite"
MAX_STEPS = 200  # the most steps an episode may be given (a run's cap, an instance's budget)
SCHEMA_VERSION = 1
MAX_SEED = 2**31 - 1  # what `waypoint reset --seed` accepts
MAX_INSTANCES = 100_000  # seeds one text may name (a run and a suite hold fewer: core/limits)
NAME_CHARS = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
SEED_RANGE = re.compile(r"\s*([0-9]+)\s*(?:\.\.\s*([0-9]+)\s*)?")


def gold_digest(gold: str) -> str:
    return hashlib.sha256(gold.encode()).hexdigest()


def seed_ranges(text: Any) -> list[tuple[int, int]]:
    """Seeds as the command line writes them, as the ranges given: ``"1..3,7"`` ->
    ``[(1, 3), (7, 7)]`` (ranges include both ends); the API may also send a list of seeds and
    ranges. Nothing is expanded: ``"0..99999999999"`` is one pair."""
    if isinstance(text, str):
        parts: list[Any] = text.split(",")
    elif isinstance(text, list):
        parts = text
    else:
        raise InvalidData(f"seeds: write them as 1..5 or 1,2,7, got {str(text)[:80]!r}")
    if len(parts) > MAX_INSTANCES:  # each part is at least one seed
        raise InvalidData(f"seeds: more than {MAX_INSTANCES} seeds")
    ranges: list[tuple[int, int]] = []
    for part in parts:
        if type(part) is int and part >= 0:  # a list of seeds, read at once
            ranges.append((part, part))
            continue
        if isinstance(part, int) and not isinstance(part, bool):
            part = str(part)
        match = SEED_RANGE.fullmatch(part) if isinstance(part, str) else None
        if match is None:
            shown = str(part.strip() if isinstance(part, str) else part)[:80]
            raise InvalidData(
                f"seeds: {shown!r} is no seed or range of seeds (write e.g. 1..5 or 1,2,7)"
            )
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        if last < first:
            raise InvalidData(f"seeds: the range {first}..{last} runs backwards")
        ranges.append((first, last))
    return ranges


def parse_levels(text: Any) -> list[int]:
    """Difficulty levels as the command line writes them (``"1,2,3"``, ``"3"``) or the API
    sends them (a list of numbers); each one of 1, 2, 3, kept once in the order given."""
    if isinstance(text, int) and not isinstance(text, bool):
        parts: list[Any] = [text]
    elif isinstance(text, str):
        parts = [p.strip() for p in text.split(",")]
    elif isinstance(text, list):
        parts = text
    else:
        raise InvalidData(f"levels: write them as 1,2,3 (the levels are 1, 2 and 3), got {text!r}")
    levels = []
    for part in parts:
        level = int(part) if isinstance(part, str) and part.isdigit() else part
        message = level_error(level, "levels")
        if message is not None:
            raise InvalidData(message)
        levels.append(level)
    if not levels:
        raise InvalidData("levels: give at least one of 1, 2 and 3")
    return list(dict.fromkeys(levels))


def level_of(instance: dict[str, Any]) -> int:
    """An instance's difficulty level: 3 (the task alone) when the document does not say."""
    return instance.get("level", NATURAL_LEVEL)


def instance_key(instance: dict[str, Any]) -> tuple[str, int, int]:
    """What names an instance: its template, seed and level."""
    return instance["template"], instance["seed"], level_of(instance)


def instance_name(template: str, seed: int, level: int) -> str:
    """``bank-pay-invoice at seed 2`` (at L3), ``bank-pay-invoice at seed 2, L1``."""
    return f"{template} at seed {seed}" + (f", L{level}" if level != NATURAL_LEVEL else "")


def count_seeds(ranges: list[tuple[int, int]]) -> int:
    """How many different seeds ``ranges`` hold, counted without listing them."""
    count, reached = 0, -1
    for first, last in sorted(ranges):
        first = max(first, reached + 1)
        if last >= first:
            count += last - first + 1
            reached = last
    return count


def parse_seeds(text: Any) -> list[int]:
    """Seeds as the command line writes them: ``"1..3,7"`` -> ``[1, 2, 3, 7]`` (ranges include
    both ends); the API may also send a list of seeds and ranges. Repeats are kept once, in the
    order first given."""
    seeds: list[int] = []
    for first, last in seed_ranges(text):
        if last - first >= MAX_INSTANCES:
            raise InvalidData(f"seeds: the range {first}..{last} is longer than {MAX_INSTANCES}")
        seeds.extend(range(first, last + 1))
        if len(seeds) > MAX_INSTANCES:
            raise InvalidData(f"seeds: more than {MAX_INSTANCES} seeds")
    return list(dict.fromkeys(seeds))


def counted(count: int, noun: str) -> str:
    """``counted(1, "seed")`` -> ``"1 seed"``, ``counted(3, "seed")`` -> ``"3 seeds"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def check_suite_size(count: int, where: str, counted: str) -> None:
    """Refuse a suite of more than ``WAYPOINT_MAX_SUITE_INSTANCES`` instances, before any is
    posed."""
    most = limit("WAYPOINT_MAX_SUITE_INSTANCES")
    if count > most:
        raise InvalidRequest(
            f"{where}: a suite holds at most {most} instances (WAYPOINT_MAX_SUITE_INSTANCES); "
            f"{counted}"
        )


def check_run_size(episodes: int, what: str) -> None:
    """Refuse a run of more than ``WAYPOINT_MAX_RUN_EPISODES`` episodes (instances x
    attempts), before any instance is posed."""
    most = limit("WAYPOINT_MAX_RUN_EPISODES")
    if episodes > most:
        raise InvalidRequest(
            f"a run plays at most {most} episodes (WAYPOINT_MAX_RUN_EPISODES); {what} are "
            f"{episodes}"
        )


def catalog_manifests() -> list[tuple]:
    """The apps whose tasks a suite may pose: the built-in ones and the app packages installed
    (generated environments: ``devices.services.packages``)."""
    return read_manifests() + installed_manifests()


def _templates() -> dict[str, Template]:
    return {t.id: t for t in all_templates(catalog_manifests())}


def _app_versions() -> dict[str, dict[str, str]]:
    """Each app's label and version; an app package's content hash too (its ``sha256``)."""
    return {
        folder.name: {"label": m.get("label", folder.name), "version": m.get("version", "1.0")}
        for folder, m in read_manifests()
    } | installed_versions()


def _posed(instances: Iterable[tuple[str, int, int]]) -> dict[tuple[str, int, int], Task]:
    """The tasks the virtual device poses for (template, seed, level) triples: the apps' data
    generated once per seed, and only the templates asked for posed there, at their levels
    (what ``load_apps(seed, level=level)`` poses for them; the templates are independent of
    one another)."""
    raw = catalog_manifests()
    known = {t.id: t for t in all_templates(raw)}
    wanted: dict[int, list[tuple[str, int]]] = {}
    for template_id, seed, level in instances:
        wanted.setdefault(seed, []).append((template_id, level))
    tasks: dict[tuple[str, int, int], Task] = {}
    for seed, asked in wanted.items():
        world = virtual_apps.build_world(seed, raw)
        for template_id, level in asked:
            tasks[(template_id, seed, level)] = known[template_id].instance(world, level)
    return tasks


def posed_instance(template_id: str, seed: int, task: Task) -> dict[str, Any]:
    """An instance as a suite document lists it."""
    posed = {
        "template": template_id,
        "seed": seed,
        "level": task.level,
        "instruction": task.instruction,
        "rule": task.rule,
        "gold_sha256": gold_digest(task.gold),
    }
    if task.max_steps:
        posed["max_steps"] = task.max_steps
    return posed


def select_templates(spec: str | Iterable[str]) -> list[str]:
    """Template ids from what a person writes, comma-separated or as a list: ``memory`` (the
    long templates whose values leave the agent's window, the default suite), ``short`` (the
    first lookups), ``all``, ``app:mail`` (the templates using an app) and template ids, each
    kept once in the order named."""
    parts = spec.split(",") if isinstance(spec, str) else list(spec)
    known = all_templates(catalog_manifests())
    groups = {"all": [t.id for t in known]}
    for template in known:
        groups.setdefault(template.group, []).append(template.id)
    chosen: list[str] = []
    for part in (str(p).strip() for p in parts if str(p).strip()):
        if part in groups:
            chosen += groups[part]
        elif part.startswith("app:"):
            slug = part.removeprefix("app:")
            ids = [t.id for t in known if slug in t.apps]
            if not ids:
                raise InvalidData(f"templates: no template uses an app {slug!r}")
            chosen += ids
        else:
            chosen.append(part)
    return list(dict.fromkeys(chosen))


def check_instances(
    template_ids: list[str], seeds: list[int], levels: Iterable[int] = (NATURAL_LEVEL,)
) -> list[dict[str, Any]]:
    """Every template at every seed and level (template by template, then seed by seed),
    checked but not posed: ``[{template, seed, level}, ...]``."""
    levels = list(levels)
    known = _templates()
    if not template_ids:
        raise InvalidData("templates: a suite needs at least one template")
    unknown = [t for t in template_ids if t not in known]
    if unknown:
        raise InvalidData(f"templates: unknown templates {', '.join(map(repr, unknown))}")
    if len(set(template_ids)) != len(template_ids):
        raise InvalidData("templates: a template is listed twice")
    if not seeds:
        raise InvalidData("seeds: a suite needs at least one seed")
    for i, seed in enumerate(seeds):
        _check_seed(seed, f"seeds[{i}]")
    if len(set(seeds)) != len(seeds):
        raise InvalidData("seeds: a seed is listed twice")
    levels = parse_levels(levels)
    return [
        {"template": t, "seed": seed, "level": level}
        for t in template_ids
        for seed in seeds
        for level in levels
    ]


def pose_instances(instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The instances, those given as ``{template, seed, level}`` alone posed (instruction, rule
    and the gold answer's sha256), the others as they are."""
    known = _templates()
    unposed = [
        instance_key(i) for i in instances if "instruction" not in i and i.get("template") in known
    ]
    if not unposed:
        return instances
    posed = _posed(unposed)
    return [
        posed_instance(i["template"], i["seed"], posed[key])
        if "instruction" not in i and (key := instance_key(i)) in posed
        else i
        for i in instances
    ]


def make_suite(
    name: str,
    version: str,
    template_ids: Iterable[str],
    seeds: Iterable[int],
    levels: Iterable[int] = (NATURAL_LEVEL,),
) -> dict[str, Any]:
    """The suite document: every template at every seed and level (template by template, then
    seed by seed)."""
    template_ids, seeds, levels = list(template_ids), list(seeds), parse_levels(list(levels))
    _check_name(name, "name", 100)
    _check_name(version, "version", 40)
    count = len(template_ids) * len(seeds) * len(levels)
    sizes = f"{counted(len(template_ids), 'template')} x {counted(len(seeds), 'seed')}"
    if len(levels) > 1:
        sizes += f" x {counted(len(levels), 'level')}"
    check_suite_size(count, "seeds", f"{sizes} are {count}")
    triples = [instance_key(i) for i in check_instances(template_ids, seeds, levels)]
    known = _templates()
    posed = _posed(triples)
    apps = sorted({app for t in template_ids for app in known[t].apps})
    versions = _app_versions()
    return {
        "format": SUITE_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "version": version,
        "apps": {slug: versions[slug] for slug in apps},
        "templates": [_template_summary(known[t]) for t in template_ids],
        "instances": [posed_instance(t, seed, posed[(t, seed, lv)]) for t, seed, lv in triples],
    }


def _template_summary(template: Template) -> dict[str, Any]:
    return {
        "id": template.id,
        "apps": list(template.apps),
        "rule": template.rule,
        "memory": {"what": template.what, "distance": template.distance, "use": template.use},
        "intent": template.intent,
    }


def check_suite(document: Any) -> dict[str, Any]:
    """An imported suite document, validated; InvalidData names the place of the first problem.

    Beyond its shape, the suite must be one this Waypoint runs as its makers did: the apps at
    the same versions, every template known, and every instance posed with the same
    instruction and gold answer.
    """
    if not isinstance(document, dict):
        raise InvalidData(f"the suite must be a JSON object, got {type(document).__name__}")
    if document.get("format") != SUITE_FORMAT:
        raise InvalidData(
            f"format: must be {SUITE_FORMAT!r}, got {document.get('format')!r} "
            "(is this a suite made by make_suite?)"
        )
    if document.get("schema_version") != SCHEMA_VERSION:
        raise InvalidData(
            f"schema_version: this Waypoint reads suites of version {SCHEMA_VERSION}, "
            f"got {document.get('schema_version')!r}"
        )
    _check_name(document.get("name"), "name", 100)
    _check_name(document.get("version"), "version", 40)
    instances = document.get("instances")
    if not isinstance(instances, list) or not instances:
        raise InvalidData("instances: must be a non-empty list")
    check_suite_size(len(instances), "instances", f"this one has {len(instances)}")
    apps = document.get("apps")
    if not isinstance(apps, dict):
        raise InvalidData("apps: must be an object of app versions")
    local = _app_versions()
    for slug, app in apps.items():
        where = f"apps.{slug}"
        if not isinstance(app, dict) or not isinstance(app.get("version"), str):
            raise InvalidData(f"{where}: must be an object with the app's version")
        if slug not in local:
            raise InvalidData(f"{where}: this Waypoint's virtual device has no app {slug!r}")
        if app["version"] != local[slug]["version"]:
            raise InvalidData(
                f"{where}: the suite was made with {local[slug]['label']} {app['version']}; "
                f"this Waypoint has {local[slug]['version']}, whose data may differ"
            )
        if "sha256" in local[slug] and app.get("sha256") != local[slug]["sha256"]:
            raise InvalidData(
                f"{where}: the suite was made with the app package {slug} of sha256 "
                f"{str(app.get('sha256'))[:12]}...; this Waypoint has "
                f"{local[slug]['sha256'][:12]}..., another content"
            )
    known = _templates()
    seen: set[tuple[str, int, int]] = set()
    for i, item in enumerate(instances):
        where = f"instances[{i}]"
        if not isinstance(item, dict):
            raise InvalidData(f"{where}: must be an object with template and seed")
        template = item.get("template")
        if not isinstance(template, str) or template not in known:
            raise InvalidData(f"{where}.template: unknown template {template!r}")
        missing = [a for a in known[template].apps if a not in apps]
        if missing:
            raise InvalidData(f"{where}.template: {template} uses {missing[0]}, not in apps")
        _check_seed(item.get("seed"), f"{where}.seed")
        message = level_error(level_of(item), f"{where}.level")
        if message is not None:
            raise InvalidData(message)
        key = instance_key(item)
        if key in seen:
            raise InvalidData(f"{where}: {instance_name(*key)} is listed twice")
        seen.add(key)
        for name in ("instruction", "rule", "gold_sha256"):
            if not isinstance(item.get(name), str):
                raise InvalidData(f"{where}.{name}: must be a string")
        budget = item.get("max_steps", 1)
        if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_STEPS:
            raise InvalidData(f"{where}.max_steps: a whole number of steps from 1 to {MAX_STEPS}")
    posed = _posed(seen)
    for i, item in enumerate(instances):
        task = posed[instance_key(item)]
        where = f"instances[{i}]"
        here = instance_name(*instance_key(item))
        if task.instruction != item["instruction"] or task.rule != item["rule"]:
            raise InvalidData(
                f"{where}: {here} is posed otherwise here: {task.instruction!r} ({task.rule})"
            )
        if gold_digest(task.gold) != item["gold_sha256"]:
            raise InvalidData(f"{where}: {here} has another gold answer here")
    return {
        "format": SUITE_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "name": document["name"],
        "version": document["version"],
        "apps": {
            slug: {"label": local[slug]["label"], "version": apps[slug]["version"]}
            | ({"sha256": local[slug]["sha256"]} if "sha256" in local[slug] else {})
            for slug in sorted(apps)
        },  # fmt: skip
        "templates": [
            _template_summary(known[t]) for t in dict.fromkeys(i["template"] for i in instances)
        ],
        "instances": [_checked_instance(item) for item in instances],
        **({"memory": document["memory"]} if isinstance(document.get("memory"), dict) else {}),
    }


def _checked_instance(item: dict[str, Any]) -> dict[str, Any]:
    """An instance as a checked suite keeps it: level 3 written out when the document left it
    out, and the ``memory`` block a memory check wrote (``agents.memory_check``)."""
    kept = {
        "template": item["template"],
        "seed": item["seed"],
        "level": level_of(item),
        **{name: item[name] for name in ("instruction", "rule", "gold_sha256")},
    }
    if "max_steps" in item:
        kept["max_steps"] = item["max_steps"]
    if isinstance(item.get("memory"), dict):
        kept["memory"] = item["memory"]
    return kept


def _check_name(value: Any, where: str, longest: int) -> None:
    if not isinstance(value, str) or not NAME_CHARS.fullmatch(value) or len(value) > longest:
        raise InvalidData(
            f"{where}: must be 1 to {longest} letters, digits, '.', '_' or '-', starting with "
            f"a letter or digit, got {value!r}"
        )


def _check_seed(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise InvalidData(f"{where}: must be a whole number from 0 to {MAX_SEED}, got {value!r}")
