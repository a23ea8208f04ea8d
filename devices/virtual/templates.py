"""Task templates: a goal with parameters, a grading rule, and a function of the seed's world
that gives an instance (its parameters, gold answer and the memory variables it needs).

An instance is a template at a seed: ``waypoint reset --seed N`` puts every app at that seed's
world, and ``waypoint tasks`` lists each template's instance there (instruction, gold answer,
rule). Each template says which of Memory-World's memory types it exercises (STAMP): *what* is
remembered, *how far* it is carried, and *what is done* with it.

Every instance is posed at one of STAMP's difficulty levels (appendix A.3, tables 12-13: "L1
simplifies the task configuration and provides task-required knowledge, L2 keeps the original
configuration while providing task-required knowledge, and L3 uses the original task setting
without additional assistance"); an instance is (template, seed, level):

- **L3** (the default): the natural task. A template whose goal is guided (the long memory
  templates, whose goal says where to read each value before saying where to write it) has a
  ``natural_goal`` for L3 that says only what to do; the others' goal is their L3.
- **L2**: the guided goal, its sentences untouched and first, then after a blank line the
  task-required knowledge: where each value the task needs is ("Where to find it: ...", the
  template's own ``Resolved.knowledge`` or else the ``guideline``'s "(app: where)" text).
  Scripted solvers parse the goal; the knowledge block starts after ``"\n\n"`` and names no
  value.
- **L1**: L2's text, posed from the template's simplified configuration (``Template.simplify``:
  a second ``make`` with fewer targets or distractors) when it has one; the gold answer and
  the memory variables are the simplified ones. A template without ``simplify`` poses L1 as L2:
  STAMP's L1 is simplified where a simplification exists.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from trajectories.grading import answer_matches, number_of

from .world import AmbiguousInstance, ManifestError, Variable, World

# The rules the Answers page grades by (its grade() knows no regex).
GRADING_RULES = ("exact", "iexact", "number", "contains")
WHAT = ("price", "name", "code", "time", "date", "number", "list")
DISTANCE = ("same_screen", "later_page", "cross_app")
USE = ("compare", "type", "answer")
# AndroTMem's intent classes.
INTENTS = (
    "Lookup", "Compare & Decide", "Purchase / Order", "Booking", "Communication", "Sharing",
    "Content Creation", "Configuration",
)  # fmt: skip
ANSWERS_SLUG = "answers"
LEVELS = (1, 2, 3)  # STAMP's difficulty levels; 3 is the natural task
# The suites' templates (Template.group): the built-in memory and short ones, and the tasks of
# generated app packages (devices/virtual/packages.py).
GROUPS = ("memory", "short", "generated")
NATURAL_LEVEL = 3
KNOWLEDGE = "Where to find it: "  # how the L1/L2 knowledge block begins, after a blank line
# The final answer's format by the kind of value it is (a template may say its own).
OUTPUT_FORMATS = {
    "price": "the price only, as the app shows it (e.g. $42.10)",
    "holder": "the name only (e.g. FreshCart)",
    "time": "the time only, as written (e.g. 14:30)",
}


def level_error(value: object, where: str = "level") -> str | None:
    """Why ``value`` is no difficulty level (None when it is one): the message names them."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in LEVELS:
        return (
            f"{where}: {value!r} is no difficulty level (the levels are 1, 2 and 3: L1 simplified "
            "with the task-required knowledge, L2 the task with the knowledge, L3 the task alone)"
        )
    return None


def check_level(value: object, where: str = "level") -> int:
    """``value`` as a difficulty level; ManifestError (a ValueError) naming the levels if not."""
    message = level_error(value, where)
    if message is not None:
        raise ManifestError(message)
    return value  # type: ignore[return-value]


def unsaid(text: str, variables: list[Variable], goal: str) -> str:
    """``text`` (where each value is) naming none of the values the goal does not say: a
    value a place is named by ("Ava Kim's page", "the tracking result of PT876630568") is
    written as what it is ("[who joins 'Book club']'s page"). L1 and L2 give the knowledge of
    where to look, not what is there: a value in the goal needs no memory."""
    for variable in sorted(variables, key=lambda v: len(v.value), reverse=True):
        if variable.value.strip() and variable.value not in goal:
            what = f"[{variable.description or variable.ref}]"
            text = re.sub(rf"(?<!\w){re.escape(variable.value)}(?!\w)", lambda _, w=what: w, text)
    return text


def grade(rule: str, gold: str, answer: str) -> bool:
    """Waypoint's grading (:func:`trajectories.grading.answer_matches`) for the rules the
    Answers page knows; it must agree with ``grade()`` there (fixtures/virtual_apps/answers)."""
    if rule not in GRADING_RULES:
        raise ManifestError(
            f"unknown grading rule {rule!r} (the Answers page grades by: "
            f"{', '.join(GRADING_RULES)})"
        )
    return answer_matches(rule, gold, answer)


@dataclass
class Task:
    """A template's instance at one seed and difficulty level, as the device poses it."""

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
    memory: dict[str, str] = field(default_factory=dict)  # what, distance, use
    intent: str = ""
    level: int = NATURAL_LEVEL  # STAMP's L1, L2 or L3 (the module's docstring)
    max_steps: int = 0  # the instance's step budget (0: the runner's default)

    def grade(self, answer: str) -> bool:
        return grade(self.rule, self.gold, answer)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Resolved:
    """What a template's ``make`` gives for a world: the instance's gold answer, the memory
    variables an agent must carry (refs ``app.name``), the goal's parameters, and the answers
    its screens offer (``candidates``: exactly one of them is right)."""

    gold: str
    variables: list[str]
    params: dict[str, str] = field(default_factory=dict)
    candidates: list[str] = field(default_factory=list)
    # L1/L2's task-required knowledge when the template words it itself ("label (where)" items
    # naming no value); empty: each variable's description and place.
    knowledge: str = ""


Make = Callable[[World, random.Random], Resolved]


@dataclass(frozen=True)
class Template:
    id: str
    apps: tuple[str, ...]
    goal: str  # the instruction; {name} is filled from the instance's params
    rule: str
    make: Make
    what: str
    distance: str
    use: str
    intent: str = "Lookup"
    output_format: str = ""
    # The tasks of the first apps say "submit it in the Answers app"; a template's own goal
    # says what to answer, and the agent answers (the answer action) wherever it is.
    answers_page: bool = False
    home: str = ""  # the app whose manifest declares the task (default: the first app)
    # The simplified configuration L1 is posed from (fewer targets or distractors; the gold
    # and the variables are its own); None: L1 is posed as L2.
    simplify: Make | None = None
    # How many steps an agent is given (as AndroidWorld gives each task a budget); 0: the
    # runner's default (WAYPOINT_AGENT_MAX_STEPS), enough for the short templates.
    max_steps: int = 0
    # The benchmark it belongs to (GROUPS): "memory", long tasks whose values leave the
    # agent's window before they are used (issue 35), or "short", the first lookups.
    group: str = "short"
    # The instruction at L3 when the natural task is worded otherwise than the guided one of
    # L1 and L2 (``goal``): STAMP's L3 instructions say what to do, not where to look.
    natural_goal: str = ""

    def __post_init__(self) -> None:
        where = f"template {self.id}"
        for name, value, known in (
            ("rule", self.rule, GRADING_RULES),
            ("what", self.what, WHAT),
            ("distance", self.distance, DISTANCE),
            ("use", self.use, USE),
            ("intent", self.intent, INTENTS),
            ("group", self.group, GROUPS),
        ):
            if value not in known:
                raise ManifestError(f"{where}: unknown {name} {value!r} (known: {known})")
        if self.distance == "cross_app" and len(set(self.apps)) < 2:
            raise ManifestError(f"{where}: a cross-app template needs two apps")

    def resolve(self, world: World, level: int = NATURAL_LEVEL) -> Resolved:
        """The instance's gold, variables and parameters: ``simplify``'s at L1 when the template
        has one, ``make``'s otherwise (each from the same seeded random numbers)."""
        check_level(level)
        rng = random.Random(f"{world.seed}/template/{self.id}")
        make = self.simplify if level == 1 and self.simplify is not None else self.make
        return make(world, rng)

    def instance(self, world: World, level: int = NATURAL_LEVEL) -> Task:
        """The task this template poses at the world's seed and difficulty ``level`` (1, 2 or
        3; see the module's docstring): at L3 the goal alone, at L2 and L1 the goal then,
        after a blank line, where each value it needs is."""
        resolved = self.resolve(world, level)
        variables = world.variables()
        missing = [r for r in resolved.variables if r not in variables]
        if missing:
            raise ManifestError(f"template {self.id}: unknown variables {missing}")
        used = [variables[r] for r in resolved.variables]
        output_format = self.output_format or OUTPUT_FORMATS.get(
            used[0].kind if used else "", "the value exactly as the app shows it"
        )
        must_visit = [f"{v.app}: {v.where}" for v in used if v.where]
        reads = "; ".join(f"{v.description or v.ref} ({v.app}: {v.where})" for v in used)
        if self.answers_page:
            must_visit.append(f"{ANSWERS_SLUG}: the task's answer page")
            then = f"Then open the Answers app and submit {output_format}."
        else:
            then = f"Then answer with {output_format}."
        goal = self.natural_goal if level == NATURAL_LEVEL and self.natural_goal else self.goal
        try:
            instruction = goal.format(**resolved.params)
        except KeyError as exc:
            raise ManifestError(f"template {self.id}: the goal names {exc}, no parameter") from exc
        if level < NATURAL_LEVEL and used:
            knowledge = resolved.knowledge or unsaid(reads, used, instruction)
            instruction += f"\n\n{KNOWLEDGE}{knowledge}."
        return Task(
            id=self.id,
            app=self.home or self.apps[0],
            instruction=instruction,
            gold=resolved.gold,
            rule=self.rule,
            variables=list(resolved.variables),
            apps=list(self.apps),
            guideline=f"Read {reads}. {then}" if reads else then,
            must_visit=must_visit,
            output_format=output_format,
            memory={"what": self.what, "distance": self.distance, "use": self.use},
            intent=self.intent,
            level=level,
            max_steps=self.max_steps,
        )


def right_answers(template: Template, world: World) -> list[str]:
    """The candidates of the instance at ``world`` that its rule grades right."""
    resolved = template.resolve(world)
    return [c for c in resolved.candidates if grade(template.rule, resolved.gold, c)]


# --- the first apps' tasks, declared in their manifests -------------------------------------


def manifest_gold(spec: dict, world: World, where: str) -> Resolved:
    """A manifest task's gold answer: ``{"op": "var"|"min"|"max"|"format"|"holder", ...}``."""
    variables = world.variables()
    op = spec.get("op", "var")
    refs = spec.get("vars") or [spec.get("var")]
    missing = [r for r in refs if r not in variables]
    if missing:
        raise ManifestError(f"{where}: gold refers to unknown variables {missing}")
    values = [variables[r].value for r in refs]
    if op == "var":  # distractors: other values its screens show (an old door code)
        return Resolved(values[0], refs, candidates=values + spec.get("distractors", []))
    if op in ("min", "max"):
        pick = min if op == "min" else max
        return Resolved(pick(values, key=lambda v: number_of(v) or 0.0), refs, candidates=values)
    if op == "format":
        return Resolved(spec["template"].format(*values), refs)
    if op == "holder":  # the label of the variable holding the min/max, e.g. which shop is cheaper
        pick = min if spec.get("of", "min") == "min" else max
        numbers = [number_of(v) or 0.0 for v in values]
        if numbers.count(pick(numbers)) > 1:
            raise AmbiguousInstance(f"{where}: {len(values)} values tie")
        gold = spec["labels"][numbers.index(pick(numbers))]
        return Resolved(gold, refs, candidates=spec["labels"])
    raise ManifestError(f"{where}: unknown gold op {op!r}")


def manifest_template(spec: dict, slug: str) -> Template:
    where = f"{slug}/manifest.json task {spec.get('id')}"
    gold = spec["gold"]
    memory = spec.get("memory", {})
    op = gold.get("op", "var")
    return Template(
        id=spec["id"],
        apps=tuple(spec.get("apps", [slug])),
        goal=spec["instruction"].replace("{", "{{").replace("}", "}}"),
        rule=spec.get("rule", "exact"),
        make=lambda world, rng: manifest_gold(gold, world, where),
        what=memory.get("what", "code"),
        distance=memory.get("distance", "later_page"),
        use=memory.get("use", "answer"),
        intent=spec.get("intent", "Lookup"),
        output_format=spec.get("output_format")
        or (OUTPUT_FORMATS["holder"] if op == "holder" else ""),
        # A generated app has its own submission page: its task is answered where it is.
        answers_page=spec.get("answers_page", True),
        home=slug,
        max_steps=spec.get("max_steps", 0),
        group=spec.get("group", "short"),
    )
