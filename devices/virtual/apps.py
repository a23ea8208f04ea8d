"""Virtual apps: manifests, memory variables generated from a seed, tasks with a gold answer.

An app is a folder in ``fixtures/virtual_apps/<slug>/`` with ``index.html`` (a single-file
mobile web app) and ``manifest.json``::

    {"package": "com.waypoint.freshcart", "label": "FreshCart", "activity": ".MainActivity",
     "variables": [{"name": "price_aerosound", "kind": "price", "min": 180, "max": 260,
                    "where": "product page of the AeroSound X5 headphones",
                    "distinct_from": ["megamart.price_aerosound"]}],
     "tasks": [{"id": "cheapest-aerosound", "instruction": "...",
                "gold": {"op": "min", "vars": ["freshcart.price_aerosound",
                                               "megamart.price_aerosound"]},
                "rule": "number",
                "memory": {"what": "price", "distance": "cross_app", "use": "compare"},
                "intent": "Compare & Decide"}]}

A page shows a variable's value in an element with ``data-var="<name>"``; that is how the device
reports which variables were visible in a capture, and where.

Apps with richer pages also have a builder in ``devices/virtual/content/`` that generates their
data from the seed (``window.WP.data``: lists, and which item sits where) and declares task
templates over it (``devices/virtual/templates.py``); a manifest's tasks are templates too.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trajectories.grading import number_of

from .templates import (
    GRADING_RULES,
    NATURAL_LEVEL,
    Task,
    Template,
    check_level,
    grade,
    manifest_template,
)
from .world import Content, ManifestError, Variable, World

__all__ = ["GRADING_RULES", "Catalog", "ManifestError", "Task", "Variable", "grade", "load_apps"]

APPS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "virtual_apps"
ANSWER_PACKAGE = "com.waypoint.answers"


@dataclass
class App:
    slug: str
    package: str
    label: str
    activity: str
    version: str
    color: str
    html_path: Path
    variables: list[Variable]
    tasks: list[Task]
    data: dict | None = None  # what its builder generated for the page (content/)

    @property
    def component(self) -> str:
        return f"{self.package}/{self.activity}"

    def has_activity(self, activity: str) -> bool:
        full = self.package + self.activity if self.activity.startswith(".") else self.activity
        return activity in (self.activity, full)

    def page_data(self, catalog: Catalog) -> dict:
        """What the page receives as ``window.WP``."""
        data = {
            "package": self.package,
            "seed": catalog.seed,
            "vars": {v.name: v.value for v in self.variables},
        }
        if self.data is not None:
            data["data"] = self.data
        if self.package == ANSWER_PACKAGE:
            data["tasks"] = [t.to_dict() for t in catalog.tasks]
        return data


@dataclass
class Catalog:
    seed: int
    apps: list[App]
    template_ids: list[str] = field(default_factory=list)  # the order tasks are listed in
    level: int = NATURAL_LEVEL  # the difficulty level every task is posed at (templates.py)

    @property
    def variables(self) -> list[Variable]:
        return [v for app in self.apps for v in app.variables]

    @property
    def tasks(self) -> list[Task]:
        """Every app's tasks, in the templates' order (the first apps' tasks first)."""
        place = {template_id: i for i, template_id in enumerate(self.template_ids)}
        tasks = [t for app in self.apps for t in app.tasks]
        return sorted(tasks, key=lambda t: place.get(t.id, len(place)))

    @property
    def answer_package(self) -> str:
        return ANSWER_PACKAGE

    def app(self, package_or_slug: str) -> App | None:
        for app in self.apps:
            if package_or_slug in (app.package, app.slug):
                return app
        return None

    def task(self, task_id: str) -> Task | None:
        return next((t for t in self.tasks if t.id == task_id), None)

    def variable(self, ref: str) -> Variable | None:
        return next((v for v in self.variables if v.ref == ref), None)


# --- values ---------------------------------------------------------------------------------

FIRST_NAMES = ["Mia", "Noah", "Ava", "Liam", "Zoe", "Omar", "Lena", "Ravi", "Sofia", "Jonas"]
CITIES = ["Lisbon", "Osaka", "Denver", "Tallinn", "Porto", "Seville", "Kraków", "Quito"]


def generate_value(spec: dict, rng: random.Random) -> str:
    kind = spec.get("kind", "word")
    if kind == "price":
        whole = rng.randint(int(spec.get("min", 5)), int(spec.get("max", 200)))
        cents = rng.choice(spec.get("cents", [0, 49, 95, 99]))
        return f"{spec.get('currency', '$')}{whole}.{cents:02d}"
    if kind == "int":
        return str(rng.randint(int(spec.get("min", 0)), int(spec.get("max", 100))))
    if kind == "code":
        alphabet = spec.get("alphabet", string.digits)
        return spec.get("prefix", "") + "".join(
            rng.choice(alphabet) for _ in range(spec.get("length", 6))
        )
    if kind == "time":
        hour = rng.randint(spec.get("min_hour", 8), spec.get("max_hour", 20))
        return f"{hour:02d}:{rng.choice([0, 15, 30, 45]):02d}"
    if kind == "choice":
        return rng.choice(spec["options"])
    if kind == "name":
        return rng.choice(spec.get("options", FIRST_NAMES))
    if kind == "city":
        return rng.choice(spec.get("options", CITIES))
    raise ManifestError(f"unknown variable kind {kind!r}")


def manifest_value(spec: dict, world: World, slug: str) -> str:
    """A manifest variable's value at the world's seed; never one of the values it must differ
    from (``avoid``: values another part of the app shows, such as an old door code;
    ``distinct_from``: variables of apps read before, such as the other shop's price), so
    that no task has two right answers."""
    if "value" in spec:  # a generated app's data is fixed when it is generated
        return str(spec["value"])
    rng = random.Random(f"{world.seed}/{slug}/{spec['name']}")
    known = world.variables()
    avoid = {str(v) for v in spec.get("avoid", [])}
    avoid |= {known[ref].value for ref in spec.get("distinct_from", []) if ref in known}
    taken = {number_of(v) for v in avoid} if spec.get("kind") == "price" else avoid
    for _ in range(100):
        value = generate_value(spec, rng)
        if (number_of(value) if spec.get("kind") == "price" else value) not in taken:
            return value
    raise ManifestError(f"{slug}: variable {spec['name']} cannot avoid {sorted(avoid)}")


# --- loading --------------------------------------------------------------------------------


def read_manifests(apps_dir: Path = APPS_DIR) -> list[tuple[Path, dict]]:
    raw: list[tuple[Path, dict]] = []
    for manifest_path in sorted(apps_dir.glob("*/manifest.json")):
        try:
            raw.append((manifest_path.parent, json.loads(manifest_path.read_text())))
        except json.JSONDecodeError as exc:
            raise ManifestError(f"{manifest_path}: {exc}") from exc
    return raw


def build_world(seed: int, raw: list[tuple[Path, dict]]) -> World:
    """Every app's variables and page data at ``seed``: its manifest's variables, then its
    builder's (content/), builders in the order that lets one read another's data."""
    from .content import BUILDERS

    world = World(seed)
    for folder, manifest in raw:
        content = world.contents[folder.name] = Content(folder.name, seed)
        for spec in manifest.get("variables", []):
            content.var(
                spec["name"],
                spec.get("kind", "word"),
                manifest_value(spec, world, folder.name),
                spec.get("where", ""),
                spec.get("description", ""),
            )
    for slug, build in BUILDERS.items():
        if slug in world.contents:
            build(world.contents[slug], world)
    return world


def all_templates(raw: list[tuple[Path, dict]] | None = None) -> list[Template]:
    """Every task template: the manifests' tasks, then the builders' (content/)."""
    from .content import TEMPLATES

    raw = read_manifests() if raw is None else raw
    templates = [
        manifest_template(spec, folder.name)
        for folder, manifest in raw
        for spec in manifest.get("tasks", [])
    ]
    templates += TEMPLATES
    seen: set[str] = set()
    for template in templates:
        if template.id in seen:
            raise ManifestError(f"two task templates are called {template.id}")
        seen.add(template.id)
    return templates


def load_apps(
    seed: int = 0,
    names: list[str] | None = None,
    apps_dir: Path = APPS_DIR,
    level: int = NATURAL_LEVEL,
    packages: Sequence[tuple[Path, dict]] = (),
) -> Catalog:
    """Read every app's manifest, generate the apps' data from ``seed``, pose every template's
    instance at that seed and at difficulty ``level`` (1, 2 or 3; templates.py).

    ``names`` selects apps by slug or package (empty: all). Tasks whose apps are not all
    selected are left out. The answers app is always included, and so are ``packages``: the
    (folder, manifest) of each app package installed (``packages.py``), after the built-ins.
    """
    check_level(level)
    installed = list(packages)
    raw = read_manifests(apps_dir) + installed
    world = build_world(seed, raw)
    templates = all_templates(raw)
    wanted = set(names or [])
    if wanted:
        known = {d.name for d, _ in raw} | {m.get("package") for _, m in raw}
        unknown = wanted - known
        if unknown:
            raise ManifestError(f"unknown virtual apps: {', '.join(sorted(unknown))}")
        raw = [(d, m) for d, m in raw if d.name in wanted or m["package"] in wanted
               or m["package"] == ANSWER_PACKAGE or (d, m) in installed]  # fmt: skip
    apps = [
        App(
            slug=folder.name,
            package=manifest["package"],
            label=manifest["label"],
            activity=manifest.get("activity", ".MainActivity"),
            version=manifest.get("version", "1.0"),
            color=manifest.get("color", "#455a64"),
            html_path=folder / "index.html",
            variables=world.content(folder.name).variables,
            tasks=[],
            data=world.content(folder.name).data or None,
        )
        for folder, manifest in raw
    ]
    by_slug = {app.slug: app for app in apps}
    for template in templates:
        if set(template.apps) <= set(by_slug):
            task = template.instance(world, level)
            by_slug[task.app].tasks.append(task)
    return Catalog(seed=seed, apps=apps, template_ids=[t.id for t in templates], level=level)
