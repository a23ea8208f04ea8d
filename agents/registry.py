"""Agents by their spec: ``KIND[:REGIME][,key=value...]``, as the command, the API and the
page name them.

- ``solver``: the template's scripted solver (``agents.solvers``);
- ``window[,k=K]`` and ``window+memory[,k=K]``: the benchmark's controls, the solver seeing only
  its last K observations (``WAYPOINT_MEMORY_WINDOW``), without and with its memory field
  (``agents.window_agent``);
- ``random[,seed=N]``: the random agent (the floor);
- ``replay[,run=N]``: each instance's recording played back: the newest successful trajectory of
  the project recorded at that template and seed (``run=N``: run N's episode of it);
- ``openai:REGIME[,endpoint=NAME][,model=NAME][,graph=V][,appgraph=V][,xml=1][,k=K]``: an
  OpenAI-compatible chat model, the registered endpoint ``NAME`` (``agents.endpoints``) or else
  ``LLM_BASE_URL``, ``LLM_MODEL`` and ``LLM_API_KEY``, in a prompt regime of ``agents.chat``
  (a spec never carries a URL: the server's keys go to registered endpoints only), optionally
  with the memory block of the
  project's memory graph ``V`` retrieved at each step, and with the page and options of the
  screen's app graph (``appgraph=V``: version ``V`` of each app's graph; the ``app-graph``
  regime always has them, from the newest ready version of each app's graph unless told).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from graphs.appkg import AppGraphLocator
from graphs.appkg_jobs import app_graph_locator
from graphs.models import AppGraph, GraphStatus, MemoryGraph
from trajectories.models import Outcome, Project, Source, Trajectory
from trajectories.validation import InvalidData

from . import chat
from .base import Agent
from .endpoints import resolve_endpoint
from .memory_need import window
from .models import Episode
from .random_agent import RandomAgent
from .reference import has_solver, solver_for
from .replay import ReplayAgent, recorded_steps
from .suites import instance_name
from .window_agent import WindowAgent

KINDS = ("openai", "replay", "random", "solver", "window", "window+memory")
WINDOWED = ("window", "window+memory")  # the solver under a window of K observations
OPTIONS: dict[str, tuple[str, ...]] = {
    "openai": ("endpoint", "model", "graph", "appgraph", "xml", "k"),
    "replay": ("run",),
    "random": ("seed",),
    "solver": (),
    "window": ("k",),
    "window+memory": ("k",),
}
INT_OPTIONS = ("graph", "appgraph", "k", "run", "seed")


@dataclass(frozen=True)
class AgentSpec:
    kind: str
    regime: str = ""
    options: dict[str, Any] = field(default_factory=dict)

    def model_in(self, project: Project) -> str:
        """The model its episodes ask: ``model=``, else its endpoint's."""
        if self.kind != "openai":
            return ""
        endpoint = resolve_endpoint(project, self.options.get("endpoint"))
        return str(self.options.get("model") or endpoint.model)

    @property
    def source(self) -> str:
        """The source of its episodes' trajectories."""
        return Source.SOLVER if self.kind == "solver" else Source.AGENT


def _option(kind: str, item: str) -> tuple[str, Any]:
    name, sep, value = item.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name:
        raise InvalidData(f"agent: {item!r} is not an option (write key=value)")
    if kind == "openai" and name == "url":
        raise InvalidData(
            "agent: a spec names no URL: a site admin registers the model endpoint, and the "
            "spec names it with endpoint=NAME (without it, LLM_BASE_URL)"
        )
    if name not in OPTIONS[kind]:
        known = ", ".join(OPTIONS[kind]) or "none"
        raise InvalidData(f"agent: {kind} has no option {name!r} (its options: {known})")
    if name in INT_OPTIONS:
        if not value.isdigit():
            raise InvalidData(f"agent: {name} must be a whole number, got {value!r}")
        return name, int(value)
    if name == "xml":
        if value not in ("0", "1"):
            raise InvalidData(f"agent: xml must be 0 or 1, got {value!r}")
        return name, value == "1"
    if not value:
        raise InvalidData(f"agent: {name} must not be empty")
    return name, value


def parse_agent_spec(text: Any) -> AgentSpec:
    """The spec's parts; :class:`InvalidData` says what is wrong with it."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidData("agent: give an agent, e.g. solver, random, replay or openai:mobile_use")
    head, *items = [part.strip() for part in text.strip().split(",")]
    kind, _, regime = head.partition(":")
    if kind not in KINDS:
        raise InvalidData(f"agent: unknown agent {kind!r} (known: {', '.join(KINDS)})")
    if kind == "openai":
        if regime not in chat.REGIMES:
            raise InvalidData(
                f"agent: openai needs a regime, one of {', '.join(chat.REGIMES)} "
                f"(e.g. openai:mobile_use), got {regime!r}"
            )
    elif regime:
        raise InvalidData(f"agent: {kind} has no regime (got {kind}:{regime})")
    options = dict(_option(kind, item) for item in items if item)
    return AgentSpec(kind, regime, options)


def replay_source(
    project: Project, spec: AgentSpec, template: str, seed: int, level: int = 3
) -> Trajectory | None:
    """The recording the replay agent plays for an instance: one of the template at the seed
    and difficulty level (a recording at L3 keeps no level in ``virtual_device``)."""
    found = Trajectory.objects.filter(
        project=project,
        metadata__virtual_task=template,
        metadata__virtual_device__seed=seed,
    )
    if level == 3:
        found = found.exclude(metadata__virtual_device__has_key="level")
    else:
        found = found.filter(metadata__virtual_device__level=level)
    if spec.options.get("run"):
        episodes = Episode.objects.filter(
            run_id=spec.options["run"],
            template=template,
            seed=seed,
            level=level,
            trajectory__isnull=False,
        )
        found = found.filter(pk__in=episodes.values("trajectory_id"))
    return found.filter(outcome=Outcome.SUCCESS).order_by("-created_at", "-id").first()


def memory_graph(project: Project, version: int) -> MemoryGraph:
    graph = MemoryGraph.objects.filter(project=project, version=version).first()
    if graph is None:
        raise InvalidData(f"agent: the project has no memory graph v{version}")
    if graph.status != GraphStatus.READY:
        raise InvalidData(f"agent: memory graph v{version} is {graph.status}, not ready")
    return graph


def app_graphs_of(project: Project, version: int | None) -> QuerySet[AppGraph]:
    """The project's ready app graphs an agent may use: version ``version`` of each app, or
    all (the newest of an app is the one taken)."""
    graphs = AppGraph.objects.filter(project=project, status=GraphStatus.READY)
    return graphs.filter(version=version) if version is not None else graphs


def app_graph_finder(
    project: Project, version: int | None
) -> Callable[[str], AppGraphLocator | None]:
    """The app graph of a package for an agent, looked up once per package per episode."""
    found: dict[str, AppGraphLocator | None] = {}

    def find(package: str) -> AppGraphLocator | None:
        if package not in found:
            graph = app_graphs_of(project, version).filter(app=package).order_by("-version")
            first = graph.first()
            found[package] = app_graph_locator(first) if first is not None else None
        return found[package]

    return find


def wants_app_graphs(spec: AgentSpec) -> bool:
    return spec.kind == "openai" and (spec.regime in chat.GUIDED or "appgraph" in spec.options)


def check_agent(spec: AgentSpec, project: Project, instances: list[dict[str, Any]]) -> None:
    """What the agent needs for these instances is there, before any episode runs."""
    if spec.kind == "solver" or spec.kind in WINDOWED:
        if spec.options.get("k") == 0:
            raise InvalidData("agent: k must be 1 or more (the observations the window holds)")
        missing = sorted({i["template"] for i in instances if not has_solver(i["template"])})
        if missing:
            raise InvalidData(f"agent: no scripted solver for {', '.join(missing)}")
    elif spec.kind == "replay":
        for instance in instances:
            key = (instance["template"], instance["seed"], instance.get("level", 3))
            if replay_source(project, spec, *key) is None:
                raise InvalidData(
                    f"agent: no successful recording of {instance_name(*key)} to replay"
                )
    elif spec.kind == "openai":
        if not resolve_endpoint(project, spec.options.get("endpoint")).url:
            raise InvalidData(
                "agent: no OpenAI-compatible endpoint: set LLM_BASE_URL or name a registered "
                "one with endpoint=NAME"
            )
        if "graph" in spec.options:
            memory_graph(project, spec.options["graph"])
        if (
            wants_app_graphs(spec)
            and not app_graphs_of(project, spec.options.get("appgraph")).exists()
        ):
            version = spec.options.get("appgraph")
            which = f"app graph v{version}" if version is not None else "app graph"
            raise InvalidData(
                f"agent: the project has no ready {which} (build one from recordings of the "
                "apps on the graphs page)"
            )


def build_agent(
    spec: AgentSpec, project: Project, template: str, seed: int, level: int = 3
) -> Agent:
    """A fresh agent for one episode (of ``template`` at ``seed`` and difficulty ``level``)."""
    if spec.kind == "solver":
        return solver_for(template)
    if spec.kind in WINDOWED:
        k = spec.options.get("k") or window()
        return WindowAgent(solver_for(template), k, memory=spec.kind == "window+memory")
    if spec.kind == "random":
        return RandomAgent(spec.options.get("seed", 0))
    if spec.kind == "replay":
        source = replay_source(project, spec, template, seed, level)
        if source is None:
            raise InvalidData(
                f"agent: no successful recording of {instance_name(template, seed, level)}"
            )
        return ReplayAgent(recorded_steps(source), str(source.uid))
    graph = memory_graph(project, spec.options["graph"]) if "graph" in spec.options else None
    endpoint = resolve_endpoint(project, spec.options.get("endpoint"))
    return chat.ChatAgent(
        spec.regime,
        base_url=endpoint.url,
        model=spec.options.get("model") or endpoint.model,
        api_key=endpoint.api_key,
        registered=endpoint.registered,
        with_xml=spec.options.get("xml", False),
        k=spec.options.get("k", chat.DEFAULT_K),
        graph=graph,
        app_graphs=app_graph_finder(project, spec.options.get("appgraph"))
        if wants_app_graphs(spec)
        else None,
    )
