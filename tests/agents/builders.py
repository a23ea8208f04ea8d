"""Runs with finished episodes, written directly (no device, no worker), for the results'
pages and API."""

from __future__ import annotations

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
