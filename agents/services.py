"""Starting agent runs and keeping suites: validate, write in a transaction, audit, enqueue."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from trajectories import events
from trajectories.jobs import enqueue_job
from trajectories.models import Job, JobKind, Project
from trajectories.services import record_event
from trajectories.validation import InvalidData

from .calibration import control_specs
from .models import Episode, Run, Suite
from .pool import check_pool
from .registry import check_agent, parse_agent_spec
from .suites import (
    MAX_STEPS,
    check_instances,
    check_run_size,
    check_suite,
    count_seeds,
    counted,
    level_of,
    make_suite,
    parse_levels,
    parse_seeds,
    seed_ranges,
    select_templates,
)

MAX_ATTEMPTS = 20


def suite_named(project: Project, name: str) -> Suite:
    """The project's suite ``name`` (its newest version) or ``name@version``."""
    name, _, version = str(name).partition("@")
    found = Suite.objects.filter(project=project, name=name.strip())
    if version:
        found = found.filter(version=version.strip())
    suite = found.order_by("-created_at", "-id").first()
    if suite is None:
        raise InvalidData(
            f"suite: the project has no suite {name!r}"
            + (f" version {version!r}" if version else "")
        )
    return suite


def do_import_suite(project: Project, actor, document: Any) -> tuple[Suite, bool]:
    """Keep a suite document (checked); True when it is new. The same document again is the
    same suite; another one under a name and version already taken is refused."""
    document = check_suite(document)
    key = {"project": project, "name": document["name"], "version": document["version"]}
    existing = Suite.objects.filter(**key).first()
    if existing is not None:
        if existing.document["instances"] == document["instances"]:
            return existing, False
        raise InvalidData(
            f"suite: {document['name']} version {document['version']} already exists with other "
            "instances; give the new one another version"
        )
    try:
        with transaction.atomic(durable=True):
            suite = Suite.objects.create(**key, document=document, created_by=actor)
            record_event(
                events.SUITE_IMPORTED,
                actor=actor,
                project=project,
                obj=suite,
                after={
                    "name": suite.name,
                    "version": suite.version,
                    "instances": len(document["instances"]),
                },
            )
    except IntegrityError:  # imported at the same moment by someone else
        return Suite.objects.get(**key), False
    return suite, True


def do_make_suite(
    project: Project,
    actor,
    name: str,
    version: str,
    templates: list[str],
    seeds: Any,
    levels: Any = None,
) -> Suite:
    """A suite of every template named (ids, or ``memory``, ``short``, ``all``, ``app:SLUG``) at
    every seed and difficulty level (default: L3 only)."""
    levels = parse_levels(levels) if levels not in (None, "", []) else [3]
    document = make_suite(name, version, select_templates(templates), parse_seeds(seeds), levels)
    suite, _ = do_import_suite(project, actor, document)
    return suite


def _bounded(value: Any, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidData(f"{field}: must be a whole number from {low} to {high}, got {value!r}")
    return value


def run_instances(
    suite: Suite | None,
    tasks: list[str] | None,
    seeds: Any,
    attempts: int = 1,
    levels: Any = None,
) -> list[dict[str, Any]]:
    """The instances a run plays: a suite's (only those at ``seeds`` and ``levels`` when
    given), or every task template named (ids, or ``memory``, ``short``, ``all``, ``app:SLUG``:
    :func:`~agents.suites.select_templates`) at every seed and difficulty level (default: L3),
    given as ``{template, seed, level}``: the run's job poses them (``agents.runner``), not the
    request. A run of more than ``WAYPOINT_MAX_RUN_EPISODES`` episodes (instances x attempts)
    is refused first, counted without listing its seeds."""
    times = counted(attempts, "attempt")
    asked_levels = parse_levels(levels) if levels not in (None, "", []) else None
    if suite is not None:
        if tasks:
            raise InvalidData("tasks: give a suite or task templates, not both")
        instances = suite.instances
        if seeds not in (None, "", []):
            ranges = seed_ranges(seeds)
            instances = [i for i in instances if any(a <= i["seed"] <= b for a, b in ranges)]
            if not instances:
                asked = count_seeds(ranges)
                named = sorted(parse_seeds(seeds)) if asked <= 20 else f"given ({asked} seeds)"
                raise InvalidData(f"seeds: suite {suite} has no instance at seeds {named}")
        if asked_levels is not None:
            instances = [i for i in instances if level_of(i) in asked_levels]
            if not instances:
                named = ", ".join(map(str, asked_levels))
                raise InvalidData(f"levels: suite {suite} has no instance at levels {named}")
        check_run_size(
            len(instances) * attempts, f"{counted(len(instances), 'instance')} x {times}"
        )
        return instances
    tasks = select_templates(tasks or [])
    if not tasks:
        raise InvalidData("suite: give a suite, or task templates (tasks) and seeds")
    seeds = seeds if seeds else "0"
    count = count_seeds(seed_ranges(seeds))
    asked_levels = asked_levels or [3]
    sizes = f"{counted(len(tasks), 'template')} x {counted(count, 'seed')}"
    if len(asked_levels) > 1:
        sizes += f" x {counted(len(asked_levels), 'level')}"
    check_run_size(len(tasks) * count * len(asked_levels) * attempts, f"{sizes} x {times}")
    return check_instances(tasks, parse_seeds(seeds), asked_levels)


def do_start_run(
    project: Project,
    actor,
    *,
    agent: str,
    suite: Suite | None = None,
    tasks: list[str] | None = None,
    seeds: Any = None,
    attempts: int = 1,
    max_steps: int | None = None,
    devices: list[str] | None = None,
    levels: Any = None,
) -> Run:
    """Queue a run of ``agent`` over the instances, one episode per instance and attempt, on
    the project's devices (``devices``: these serials only). ``levels`` (e.g. ``"1,2,3"``):
    the difficulty levels to play, as ``seeds`` are chosen (default: a suite's every level,
    or L3 for task templates)."""
    spec = parse_agent_spec(agent)
    attempts = _bounded(attempts, "attempts", 1, MAX_ATTEMPTS)
    instances = run_instances(suite, tasks, seeds, attempts, levels)
    if max_steps is not None:  # else each instance's own budget (agents.runner.step_cap)
        max_steps = _bounded(max_steps, "max_steps", 1, MAX_STEPS)
    check_agent(spec, project, instances)
    pool = check_pool(project, devices)
    with transaction.atomic(durable=True):
        job = Job.objects.create(
            project=project,
            kind=JobKind.AGENT_RUN,
            format=spec.kind,
            created_by=actor,
            total=len(instances) * attempts,
        )
        run = Run.objects.create(
            project=project,
            job=job,
            created_by=actor,
            agent_spec=agent.strip(),
            agent=spec.kind,
            regime=spec.regime,
            model=spec.model_in(project),
            options=spec.options,
            suite=suite,
            suite_name=suite.name if suite else "",
            suite_version=suite.version if suite else "",
            instances=instances,
            max_steps=max_steps,
            devices=pool,
        )
        Episode.objects.bulk_create(
            Episode(run=run, template=i["template"], seed=i["seed"], level=level_of(i), attempt=a)
            for i in instances
            for a in range(1, attempts + 1)
        )
        job.params = {"run": run.pk}
        job.save(update_fields=["params"])
        record_event(
            events.JOB_AGENT_RUN_QUEUED,
            actor=actor,
            project=project,
            obj=job,
            after={
                "run": run.pk,
                "agent": run.agent_spec,
                "suite": run.suite_label,
                "episodes": job.total,
                "devices": [d["serial"] for d in pool],
            },
        )
        enqueue_job(job)
    return run


def do_calibrate_suite(
    project: Project, actor, suite: Suite, devices: list[str] | None = None
) -> list[Run]:
    """Queue the suite's calibration: a run of each control agent (solver, window+memory,
    window, random: ``agents.calibration``) over every instance, on the project's devices.
    Every run is checked before the first is queued."""
    specs = list(control_specs(suite).values())
    instances = run_instances(suite, None, None)
    for spec in specs:
        check_agent(parse_agent_spec(spec), project, instances)
    check_pool(project, devices)
    return [
        do_start_run(project, actor, agent=spec, suite=suite, devices=devices) for spec in specs
    ]
