"""Runs with finished episodes, written directly (no device, no worker), for the results'
pages and API; a registered model endpoint for the runs that ask a local test server."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from agents.endpoints import do_register_endpoint
from agents.models import Episode, EpisodeStatus, Run
from trajectories.models import Job, JobKind, JobStatus, Source, Trajectory
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task


def finished_run(project, user, outcomes: dict[tuple[str, int], str], agent: str = "random"):
    """A succeeded run whose episode (template, seed) succeeded ("ok") or failed with the
    failure kind given; each episode has a trajectory."""
    job = Job.objects.create(
        project=project,
        kind=JobKind.AGENT_RUN,
        format=agent,
        created_by=user,
        status=JobStatus.SUCCEEDED,
        total=len(outcomes),
        done=len(outcomes),
    )
    run = Run.objects.create(
        project=project,
        job=job,
        created_by=user,
        agent_spec=agent,
        agent=agent,
        instances=[{"template": t, "seed": s} for t, s in outcomes],
        devices=[{"serial": "emulator-5554", "adb_server": "127.0.0.1:5037"}],
    )
    for (template, seed), outcome in outcomes.items():
        task = get_or_create_task(project, TaskRecord(uid=f"{template}:{seed}", goal=template))
        trajectory = Trajectory.objects.create(
            project=project,
            task=task,
            source=Source.AGENT,
            outcome="success" if outcome == "ok" else "failure",
        )
        Episode.objects.create(
            run=run,
            template=template,
            seed=seed,
            status=EpisodeStatus.FINISHED,
            success=outcome == "ok",
            failure_kind="" if outcome == "ok" else outcome,
            answer="FC-1" if outcome in ("ok", "wrong_answer") else "",
            steps=4 if outcome == "ok" else 10,
            tokens_in=100,
            tokens_out=20,
            duration_ms=2500,
            memory_score=1.0 if outcome == "ok" else 0.0,
            trajectory=trajectory,
        )
    return run


def register_endpoint(url: str, name: str = "lab", model: str = "m", key: str = "sk-lab"):
    """``url`` registered by a site admin as endpoint ``name`` (the test server is on loopback:
    the test lists 127.0.0.1 in WAYPOINT_ENDPOINT_ALLOWED_HOSTS, as an operator would)."""
    admin, _ = get_user_model().objects.get_or_create(
        username="site-admin", defaults={"is_staff": True}
    )
    return do_register_endpoint(admin, name=name, url=url, model=model, api_key=key)
