"""Virtual apps: manifests, memory variables generated from a seed, tasks with a gold answer.

An app is a folder in ``fixtures/virtual_apps/<slug>/`` with ``index.html`` (a single-file
mobile web app) and ``manifest.json``::

    {"package": "com.waypoint.freshcart", "label": "FreshCart", "activity": ".MainActivity",
     "variables": [{"name": "price_aerosound", "kind": "price", "min": 180, "max": 260,
                    "where": "product page of the AeroSound X5 headphones"}],
     "tasks": [{"id": "cheapest-aerosound", "instruction": "...",
                "gold": {"op": "min", "vars": ["freshcart.price_aerosound",
                                               "megamart.price_aerosound"]},
                "rule": "number"}]}

A page shows a variable's value in an element with ``data-var="<name>"``; that is how the device
reports which variables were visible in a capture, and where.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import asdict, dataclass, field
from pathlib import Path

from trajectories.grading import answer_matches, number_of

APPS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "virtual_apps"
ANSWER_PACKAGE = "com.waypoint.answers"
# The rules the Answers page grades by (its grade() knows no regex).
GRADING_RULES = ("exact", "iexact", "number", "contains")


class ManifestError(ValueError):
    pass


@dataclass
class Variable:
    app: str
    name: str
    kind: str
    value: str
    where: str = ""
    description: str = ""

    @property
    def ref(self) -> str:
        return f"{self.app}.{self.name}"

    def to_dict(self) -> dict:
        return {**asdict(self), "ref": self.ref}


@dataclass
class Task:
    id: str
    app: str
    instruction: str
    gold: str
    rule: str
    variables: list[str] = field(default_factory=list)
    apps: list[str] = field(default_factory=list)
    # Memory-World's task fields (STAMP appendix A.7 and Table 18): what to follow, the pages
    # that must be visited, and the final action's output format.
    guideline: str = ""
    must_visit: list[str] = field(default_factory=list)
    output_format: str = ""

    def grade(self, answer: str) -> bool:
        return grade(self.rule, self.gold, answer)

    def to_dict(self) -> dict:
        return asdict(self)


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
        if self.package == ANSWER_PACKAGE:
            data["tasks"] = [t.to_dict() for t in catalog.tasks]
        return data


@dataclass
class Catalog:
    seed: int
    apps: list[App]

    @property
    def variables(self) -> list[Variable]:
        return [v for app in self.apps for v in app.variables]

    @property
    def tasks(self) -> list[Task]:
        return [t for app in self.apps for t in app.tasks]

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


def grade(rule: str, gold: str, answer: str) -> bool:
    """Waypoint's grading (:func:`trajectories.grading.answer_matches`) for the rules the
    Answers page knows; it must agree with ``grade()`` there (fixtures/virtual_apps/answers)."""
    if rule not in GRADING_RULES:
        raise ManifestError(
            f"unknown grading rule {rule!r} (the Answers page grades by: "
            f"{', '.join(GRADING_RULES)})"
        )
    return answer_matches(rule, gold, answer)


def _gold(spec: dict, variables: dict[str, Variable], where: str) -> tuple[str, list[str]]:
    op = spec.get("op", "var")
    refs = spec.get("vars") or [spec.get("var")]
    missing = [r for r in refs if r not in variables]
    if missing:
        raise ManifestError(f"{where}: gold refers to unknown variables {missing}")
    values = [variables[r].value for r in refs]
    if op == "var":
        return values[0], refs
    if op in ("min", "max"):
        pick = min if op == "min" else max
        return pick(values, key=lambda v: number_of(v) or 0.0), refs
    if op == "format":
        return spec["template"].format(*values), refs
    if op == "holder":  # the label of the variable holding the min/max, e.g. which shop is cheaper
        pick = min if spec.get("of", "min") == "min" else max
        index = values.index(pick(values, key=lambda v: number_of(v) or 0.0))
        return spec["labels"][index], refs
    raise ManifestError(f"{where}: unknown gold op {op!r}")


ANSWERS_SLUG = "answers"
# The final answer's format by the kind of value it is (a manifest's task may say its own).
OUTPUT_FORMATS = {
    "price": "the price only, as the app shows it (e.g. $42.10)",
    "holder": "the name only (e.g. FreshCart)",
    "time": "the time only, as written (e.g. 14:30)",
}


def load_apps(seed: int = 0, names: list[str] | None = None, apps_dir: Path = APPS_DIR) -> Catalog:
    """Read every app's manifest, generate its variables from ``seed``, resolve task answers.

    ``names`` selects apps by slug or package (empty: all). Tasks whose apps are not all
    selected are left out. The answers app is always included.
    """
    raw: list[tuple[Path, dict]] = []
    for manifest_path in sorted(apps_dir.glob("*/manifest.json")):
        try:
            raw.append((manifest_path.parent, json.loads(manifest_path.read_text())))
        except json.JSONDecodeError as exc:
            raise ManifestError(f"{manifest_path}: {exc}") from exc
    wanted = set(names or [])
    if wanted:
        known = {d.name for d, _ in raw} | {m.get("package") for _, m in raw}
        unknown = wanted - known
        if unknown:
            raise ManifestError(f"unknown virtual apps: {', '.join(sorted(unknown))}")
        raw = [(d, m) for d, m in raw if not wanted or d.name in wanted or m["package"] in wanted
               or m["package"] == ANSWER_PACKAGE]  # fmt: skip

    variables: dict[str, Variable] = {}
    apps: list[App] = []
    for folder, manifest in raw:
        slug = folder.name
        app_vars = []
        for spec in manifest.get("variables", []):
            rng = random.Random(f"{seed}/{slug}/{spec['name']}")
            variable = Variable(
                app=slug,
                name=spec["name"],
                kind=spec.get("kind", "word"),
                value=generate_value(spec, rng),
                where=spec.get("where", ""),
                description=spec.get("description", ""),
            )
            variables[variable.ref] = variable
            app_vars.append(variable)
        apps.append(
            App(
                slug=slug,
                package=manifest["package"],
                label=manifest["label"],
                activity=manifest.get("activity", ".MainActivity"),
                version=manifest.get("version", "1.0"),
                color=manifest.get("color", "#455a64"),
                html_path=folder / "index.html",
                variables=app_vars,
                tasks=[],
            )
        )
    selected = {app.slug for app in apps}
    for (folder, manifest), app in zip(raw, apps, strict=True):
        for spec in manifest.get("tasks", []):
            where = f"{folder.name}/manifest.json task {spec.get('id')}"
            task_apps = spec.get("apps", [folder.name])
            if not set(task_apps) <= selected:
                continue
            rule = spec.get("rule", "exact")
            if rule not in GRADING_RULES:
                raise ManifestError(f"{where}: unknown grading rule {rule!r}")
            gold, refs = _gold(spec["gold"], variables, where)
            used = [variables[r] for r in refs]
            must_visit = [f"{v.app}: {v.where}" for v in used if v.where]
            must_visit.append(f"{ANSWERS_SLUG}: the task's answer page")
            output_format = spec.get("output_format") or OUTPUT_FORMATS.get(
                spec["gold"].get("op", "var")
                if spec["gold"].get("op") == "holder"
                else used[0].kind,
                "the value exactly as the app shows it",
            )
            guideline = spec.get("guideline") or (
                "Read "
                + "; ".join(f"{v.description or v.ref} ({v.app}: {v.where})" for v in used)
                + f". Then open the Answers app and submit {output_format}."
            )
            app.tasks.append(
                Task(
                    spec["id"],
                    folder.name,
                    spec["instruction"],
                    gold,
                    rule,
                    refs,
                    task_apps,
                    guideline=guideline,
                    must_visit=must_visit,
                    output_format=output_format,
                )
            )
    return Catalog(seed=seed, apps=apps)
