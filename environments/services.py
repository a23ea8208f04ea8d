"""Starting a generation of environments: check what is asked (the count, the seed, the
generator and its model, the domains, the devices that verify), write the generation and its
job in a transaction, audit it, and queue the job (``pipeline.run_generation_job``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from agents.pool import check_pool
from trajectories import events
from trajectories.jobs import enqueue_job
from trajectories.models import Job, JobKind, Project
from trajectories.services import record_event
from trajectories.validation import InvalidData, shown

from .models import Generation, GeneratorKind
from .procedural import GenerationError, check_domains

MAX_COUNT = 10_000
MAX_SEED = 2**31 - 1
# An environment that fails is replaced by the next index, up to this many more in all.
SPARE = 0.25


def attempts_for(count: int) -> int:
    """How many environments a generation of ``count`` may make in all (failures replaced)."""
    return count + max(2, round(count * SPARE))


def check_count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
        raise InvalidData(f"count: a whole number of environments from 1 to {MAX_COUNT}, got "
                          f"{shown(value)}")  # fmt: skip
    return value


def check_generator(value: Any) -> str:
    if value in (None, ""):
        return GeneratorKind.PROCEDURAL
    if value not in GeneratorKind.values:
        raise InvalidData(
            f"generator: {shown(value)} is no generator (known: {', '.join(GeneratorKind.values)})"
        )
    if value == GeneratorKind.LLM and not settings.LLM_BASE_URL:
        raise InvalidData(
            "generator: llm needs a model: set LLM_BASE_URL (and LLM_MODEL, LLM_API_KEY)"
        )
    return value


def parse_domains(value: Any) -> list[str]:
    if value in (None, "", []):
        return []
    parts = value.split(",") if isinstance(value, str) else value
    if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
        raise InvalidData(f"domains: a comma-separated list of domains, got {shown(value)}")
    try:
        return check_domains([p.strip() for p in parts if p.strip()])
    except GenerationError as exc:
        raise InvalidData(str(exc)) from None


def do_start_generation(
    project: Project,
    actor,
    *,
    count: Any,
    seed: Any = 0,
    generator: Any = None,
    domains: Any = None,
    devices: list[str] | None = None,
    reasoning: bool = True,
    critic: bool = True,
) -> Generation:
    """Check the request and queue the generation's job; the pool is the named devices of the
    project (or every connected one)."""
    count = check_count(count)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise InvalidData(f"seed: a whole number from 0 to {MAX_SEED}, got {shown(seed)}")
    generator = check_generator(generator)
    domains = parse_domains(domains)
    pool = check_pool(project, devices)
    with transaction.atomic():
        job = Job.objects.create(
            project=project,
            kind=JobKind.GENERATE,
            format=generator,
            created_by=actor,
            params={"count": count, "seed": seed, "generator": generator, "domains": domains},
            total=count,
        )
        generation = Generation.objects.create(
            project=project,
            job=job,
            generator=generator,
            seed=seed,
            count=count,
            max_attempts=attempts_for(count),
            domains=domains,
            devices=pool,
            options={"reasoning": reasoning, "critic": critic},
            created_by=actor,
        )
        record_event(
            events.JOB_GENERATION_QUEUED,
            actor=actor,
            project=project,
            obj=job,
            after={
                "generation": generation.pk,
                "count": count,
                "seed": seed,
                "generator": generator,
                "domains": domains,
            },  # fmt: skip
        )
        enqueue_job(job)
    return generation
