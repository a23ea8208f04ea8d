"""Running an agent run: one Celery task per episode, each on a device of the run's pool.

A run is a job (kind ``agent_run``) whose runner hands each episode not finished yet to a task
of its own and leaves the job running (``DETACHED``); each episode's task touches the job's
heartbeat while it plays, and the last one to finish ends the job. An episode is claimed with a
conditional UPDATE (queued, or running with a silent heartbeat: its worker was lost), so a
message delivered twice plays it once, and an episode played again is still one row, counted
once. If every worker is lost, the job's heartbeat stops, the reaper requeues the job and its
runner hands out what is left.

One episode: lease a device of the pool, reset it to the instance's seed and difficulty level
(``waypoint reset --seed N --level L``: the device poses every task at that level, its
instruction, gold and grading alike) and start a recording of the template's task there (the
device's own ``waypoint`` commands, through the device services: never given to the agent),
then observe (the screen the recording captured: its
screenshot and XML) → ``agent.act`` → ``record_step`` (the recorder's own code path) until the
agent answers, terminates, writes three invalid outputs in a row or hits the step cap; end the
recording (the device grades the answer), score the memory the agent wrote against the
environment's variables (STAMP's M-Acc), release the device.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import connection
from django.db.models import F, Q
from django.utils import timezone

from core.llm import LLMError
from devices.services import DeviceGone, DeviceUnavailable, LeaseConflict, do_heartbeat
from devices.services.adb import DEVICE_ERRORS
from devices.services.environment import reset_apps
from devices.services.environment_memory import find_memory
from devices.services.leases import duration_text, latest_end
from devices.services.packages import prepare_device
from devices.services.recording import (
    Connected,
    RecordingError,
    declared_values,
    do_end_recording,
    do_interrupt,
    do_start_recording,
    record_step,
    virtual_task_named,
)
from evaluation.metrics import TASK_SCORES, memory_match, task_memory, task_memory_verdict
from evaluation.predictions import Prediction
from trajectories import events
from trajectories.blobs import read_blob
from trajectories.jobs import (
    DETACHED,
    end_detached_job,
    touch_detached_job,
    worker_name,
)
from trajectories.labels.protocol import update_metadata
from trajectories.models import Job, Screen, Source, Status, Trajectory
from trajectories.services import record_event
from trajectories.validation import InvalidData

from .base import Agent, AgentStep, Observation
from .models import Episode, EpisodeStatus, FailureKind, Run
from .pool import NoDevice, release_device, take_device
from .registry import AgentSpec, build_agent
from .suites import instance_key, pose_instances

log = logging.getLogger(__name__)

EPISODE_TASK = "agents.run_episode"  # the name of agents.tasks.run_episode_task
INVALID_IN_A_ROW = 3  # invalid outputs in a row that end an episode
MAX_RAW_OUTPUT = 20_000  # characters of a model's answer kept per turn


def spec_of(run: Run) -> AgentSpec:
    return AgentSpec(run.agent, run.regime, dict(run.options))


# ---------------------------------------------------------------- the job


def run_agent_run(job: Job, progress) -> dict[str, Any] | str:
    """Pose the run's instances, then hand every episode not finished yet to a task of its
    own; the last one ends the job."""
    run = job.agent_run
    pose_run_instances(run)
    episodes = Episode.objects.filter(run=run)
    finished = episodes.filter(status=EpisodeStatus.FINISHED).count()
    Job.objects.filter(pk=job.pk).update(done=finished, total=episodes.count())
    to_send = list(playable(run).values_list("pk", flat=True))
    if not to_send and finished == episodes.count():
        return run_counts(run)
    # Episodes being played (a redelivered message may have started one before this job ran)
    # end the job when they finish; if their worker is lost, the reaper runs the job again.
    for episode_id in to_send:
        send_episode(episode_id)
    return DETACHED


def step_cap(run: Run, episode: Episode) -> int:
    """The steps an episode is given: the run's cap when it names one, else its instance's own
    budget (a long template's, ``Template.max_steps``), else ``WAYPOINT_AGENT_MAX_STEPS``."""
    if run.max_steps:
        return run.max_steps
    key = (episode.template, episode.seed, episode.level)
    budget = next((i.get("max_steps") for i in run.instances if instance_key(i) == key), None)
    return budget or settings.WAYPOINT_AGENT_MAX_STEPS


def pose_run_instances(run: Run) -> None:
    """The run's instances given as ``{template, seed, level}`` (a run of task templates) get their
    instruction, rule and gold answer's sha256, as a suite lists them: posed here, by the
    worker, not by the request that started the run. Once: a job run again finds them posed."""
    posed = pose_instances(run.instances)
    if posed is not run.instances:
        Run.objects.filter(pk=run.pk).update(instances=posed)
        run.instances = posed


def _playable() -> Q:
    """Episodes a worker may take: queued, or running with a silent heartbeat (lost)."""
    return (
        Q(status=EpisodeStatus.QUEUED)
        | Q(status=EpisodeStatus.RUNNING, heartbeat_at__lt=_stale_before())
        | Q(status=EpisodeStatus.RUNNING, heartbeat_at__isnull=True)
    )


def playable(run: Run):
    """The run's episodes a worker may take."""
    return Episode.objects.filter(run=run).filter(_playable())


def send_episode(episode_id: int) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        run_episode(episode_id)
    else:
        current_app.send_task(EPISODE_TASK, args=(episode_id,))


def run_counts(run: Run) -> dict[str, Any]:
    """What the job's page says the run did."""
    finished = Episode.objects.filter(run=run, status=EpisodeStatus.FINISHED)
    succeeded = finished.filter(success=True).count()
    return {"episodes": finished.count(), "succeeded": succeeded}


def stop_queued_episodes(run: Run, message: str) -> int:
    """End the run's episodes no worker has taken yet as device errors saying ``message`` (their
    devices are gone: a command that started them stopped); a worker that gets one of their
    tasks later skips it. Episodes being played end on their own. Returns how many ended."""
    now = timezone.now()
    ended = Episode.objects.filter(run=run, status=EpisodeStatus.QUEUED).update(
        status=EpisodeStatus.FINISHED,
        finished_at=now,
        success=False,
        failure_kind=FailureKind.DEVICE_ERROR,
        message=message[:500],
    )
    if ended:
        touch_detached_job(run.job_id, done=ended)
        end_detached_job(run.job_id, run_counts(run))
    return ended


def _stale_before():
    return timezone.now() - timedelta(seconds=settings.WAYPOINT_JOB_STALE_S)


# ---------------------------------------------------------------- one episode


def claim_episode(episode_id: int) -> Episode | None:
    """Take the episode for this worker, or None when another has it or it is finished."""
    token = f"{worker_name()}:{uuid.uuid4().hex[:8]}"
    now = timezone.now()
    claimed = (
        Episode.objects.filter(pk=episode_id)
        .filter(_playable())
        .update(
            status=EpisodeStatus.RUNNING,
            worker=token,
            heartbeat_at=now,
            started_at=now,
            starts=F("starts") + 1,
        )
    )
    if not claimed:
        return None
    return Episode.objects.select_related(
        "run__project", "run__created_by", "run__job", "trajectory"
    ).get(pk=episode_id)


class Beat:
    """While an episode plays, its claim, its run's job and its device's lease stay fresh."""

    def __init__(self, episode: Episode):
        self.episode = episode
        self.lease = None
        self.stop_event = threading.Event()
        self.lease_lost = threading.Event()  # set by the beat: the episode must stop
        self.thread = threading.Thread(target=self._beat, name=f"episode-{episode.pk}-beat")

    def _beat(self) -> None:
        episode = self.episode
        try:
            while not self.stop_event.wait(settings.WAYPOINT_JOB_HEARTBEAT_S):
                Episode.objects.filter(
                    pk=episode.pk, status=EpisodeStatus.RUNNING, worker=episode.worker
                ).update(heartbeat_at=timezone.now())
                touch_detached_job(episode.run.job_id)
                if self.lease is not None:
                    try:
                        do_heartbeat(self.lease.serial, episode.run.created_by)
                    except LeaseConflict:
                        log.warning("episode %s lost its lease on %s", episode.pk, self.lease)
                        self.lease_lost.set()
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self) -> Beat:
        touch_detached_job(self.episode.run.job_id)
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop_event.set()
        self.thread.join()


@dataclass
class Played:
    """How an episode went."""

    success: bool = False
    failure_kind: str = ""
    answer: str = ""
    message: str = ""
    steps: int = 0
    invalid_outputs: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    model_ms: float = 0.0
    memory_score: float | None = None
    device_serial: str = ""
    trajectory: Trajectory | None = None
    turns: list[dict[str, Any]] = field(default_factory=list)


def run_episode(episode_id: int) -> bool:
    """Claim and play one episode; False when another worker has it or it is finished."""
    episode = claim_episode(episode_id)
    if episode is None:
        log.info("episode %s is not playable (running elsewhere or finished): skipped", episode_id)
        return False
    run = episode.run
    if episode.starts > 1:
        _forget_earlier_play(episode)
    began = time.perf_counter()
    if episode.starts > settings.WAYPOINT_JOB_MAX_ATTEMPTS:
        played = Played(
            failure_kind=FailureKind.WORKER_LOST,
            message=f"its worker stopped {episode.starts - 1} times; it is not run again",
        )
    else:
        with Beat(episode) as beat:
            try:
                played = play(run, episode, beat)
            except Exception as exc:  # noqa: BLE001 - the episode ends; the worker goes on
                log.exception("episode %s failed", episode.pk)
                played = Played(
                    failure_kind=FailureKind.HARNESS_ERROR,
                    message=f"internal error ({type(exc).__name__}); the worker's log has it",
                )
    finish_episode(episode, played, time.perf_counter() - began)
    return True


def _forget_earlier_play(episode: Episode) -> None:
    """A lost worker's recording of this episode stays as it was left: interrupted."""
    if episode.trajectory is not None and episode.trajectory.status == Status.RECORDING:
        do_interrupt(episode.trajectory, "its episode's worker was lost; the episode ran again")
    record_event(
        events.EPISODE_RERUN,
        project=episode.run.project,
        obj=episode,
        after={"run": episode.run_id, "starts": episode.starts, "worker": episode.worker},
    )


def finish_episode(episode: Episode, played: Played, seconds: float) -> bool:
    """Record the result, unless another worker took the episode over meanwhile; the run's job
    counts it and ends after the last one."""
    ended = Episode.objects.filter(
        pk=episode.pk, status=EpisodeStatus.RUNNING, worker=episode.worker
    ).update(
        status=EpisodeStatus.FINISHED,
        finished_at=timezone.now(),
        success=played.success,
        failure_kind="" if played.success else played.failure_kind,
        answer=played.answer,
        message=played.message[:2000],
        steps=played.steps,
        invalid_outputs=played.invalid_outputs,
        tokens_in=played.tokens_in,
        tokens_out=played.tokens_out,
        model_ms=round(played.model_ms),
        duration_ms=round(seconds * 1000),
        memory_score=played.memory_score,
        device_serial=played.device_serial,
        trajectory=played.trajectory,
    )
    if not ended:
        log.warning("episode %s was taken over by another worker; not recorded", episode.pk)
        return False
    job_id = episode.run.job_id
    touch_detached_job(job_id, done=1)
    if not end_detached_job(job_id, run_counts(episode.run)):
        # Episodes whose worker was lost while this one played: their turn again.
        for episode_id in (
            playable(episode.run).filter(status=EpisodeStatus.RUNNING).values_list("pk", flat=True)
        ):
            send_episode(episode_id)
    return True


def play(run: Run, episode: Episode, beat: Beat) -> Played:
    spec = spec_of(run)
    user = run.created_by
    if user is None:
        return Played(
            failure_kind=FailureKind.HARNESS_ERROR,
            message="the run's owner is gone: no one can hold its devices",
        )
    try:
        lease, conn = take_device(run.devices, user, first=episode.pk)
    except NoDevice as exc:
        return Played(failure_kind=FailureKind.DEVICE_ERROR, message=str(exc))
    beat.lease = lease
    Episode.objects.filter(pk=episode.pk).update(device_serial=lease.serial)
    try:
        return play_on_device(run, episode, spec, lease, conn, beat.lease_lost)
    finally:
        beat.lease = None
        release_device(lease, user)


def play_on_device(
    run: Run,
    episode: Episode,
    spec: AgentSpec,
    lease,
    conn: Connected,
    lease_lost: threading.Event | None = None,
) -> Played:
    try:
        agent = build_agent(spec, run.project, episode.template, episode.seed, episode.level)
    except InvalidData as exc:
        return Played(failure_kind=FailureKind.HARNESS_ERROR, message=str(exc))
    try:
        # A generated environment's package on the device (and no other package), then reset.
        prepare_device(conn.device, lease.serial, episode.template)
        reset_apps(conn.device, lease.serial, episode.seed, episode.level)
        task = virtual_task_named(run.project, conn, episode.template)
        trajectory = do_start_recording(
            lease,
            task,
            None,
            conn,
            reset_seed=episode.seed,
            source=spec.source,
            recorder_name=agent.name,
            reset_level=episode.level,
        )
        values = declared_values(conn)
    except (DeviceUnavailable, RecordingError, *DEVICE_ERRORS) as exc:
        return Played(failure_kind=FailureKind.DEVICE_ERROR, message=str(exc))
    Episode.objects.filter(pk=episode.pk).update(trajectory=trajectory)
    played = drive(trajectory, agent, conn, step_cap(run, episode), Holding(lease, lease_lost))
    played.device_serial = lease.serial
    played.trajectory = trajectory

    def keep(metadata: dict[str, Any]) -> None:
        metadata["agent"] = {
            "run": run.pk,
            "episode": episode.pk,
            "spec": run.agent_spec,
            "agent": agent.name,
            "regime": run.regime,
            "model": run.model,
            "template": episode.template,
            "seed": episode.seed,
            "level": episode.level,
            "attempt": episode.attempt,
            "turns": played.turns,
        }

    update_metadata(trajectory, keep)
    if trajectory.status == Status.RECORDING:
        status = "success" if played.failure_kind == "" else "failure"
        answer = played.answer or None
        do_end_recording(
            trajectory,
            None,
            status=status,
            answer=answer,
            step_memory_from_environment=spec.source == Source.SOLVER,
        )
        grade = trajectory.metadata.get("grade")
        if played.failure_kind == "":
            played.success = bool(grade and grade["correct"])
            if not played.success:
                played.failure_kind = FailureKind.WRONG_ANSWER
                if not played.answer:
                    played.message = "it ended with success but gave no answer"
    played.memory_score = memory_score(trajectory, played.turns, values)
    return played


def observe(trajectory: Trajectory) -> Observation:
    """What the agent sees: the screen the recording shows now."""
    screen = Screen.objects.select_related("screenshot", "ui_xml").get(
        pk=trajectory.final_screen_id
    )
    xml = read_blob(screen.ui_xml).decode("utf-8", "replace") if screen.ui_xml else None
    return Observation(
        goal=trajectory.task.goal,
        screenshot=read_blob(screen.screenshot),
        xml=xml,
        width=screen.width,
        height=screen.height,
        step=trajectory.step_count,
        package=screen.package,
    )


def resolve_app(action: dict[str, Any], trajectory: Trajectory) -> dict[str, Any]:
    """An ``open_app`` that names the app as people do (its label) opens its package."""
    if action.get("type") != "open_app" or not isinstance(action.get("package"), str):
        return action
    named = action["package"].strip().lower()
    for app in trajectory.metadata.get("virtual_device", {}).get("apps", []):
        if named in (app["package"].lower(), app["slug"].lower(), app.get("label", "").lower()):
            return {**action, "package": app["package"]}
    return action


def _turn(step: AgentStep, agent_ms: float) -> dict[str, Any]:
    return {
        "step": None,
        "action": step.action,
        "memory": step.memory,
        "raw_output": step.raw_output[:MAX_RAW_OUTPUT],
        "prompt_chars": step.prompt_chars,
        "tokens_in": step.tokens_in,
        "tokens_out": step.tokens_out,
        "latency_ms": round(step.latency_ms or agent_ms, 1),
    }


class Holding:
    """Whether the episode still holds its device for one more step: its lease lasts at most
    its maximum length from when it was taken (``latest_end``), and the beat says when it was
    lost to someone else."""

    def __init__(self, lease, lost: threading.Event | None = None) -> None:
        self.lease = lease
        self.lost = lost or threading.Event()
        self.ends_at = latest_end(lease)

    def why_stop(self) -> tuple[str, str] | None:
        if self.lost.is_set():
            return FailureKind.DEVICE_ERROR, f"the lease on device {self.lease.serial} was lost"
        margin = timedelta(seconds=settings.WAYPOINT_EPISODE_LEASE_MARGIN_S)
        if timezone.now() + margin >= self.ends_at:
            longest = round((self.ends_at - self.lease.acquired_at).total_seconds())
            return FailureKind.TIME_CAP, (
                f"the lease on device {self.lease.serial} reaches its maximum length of "
                f"{duration_text(longest)} at {timezone.localtime(self.ends_at):%H:%M:%S}: "
                "stopped before the next step"
            )
        return None


def drive(
    trajectory: Trajectory,
    agent: Agent,
    conn: Connected,
    max_steps: int,
    holding: Holding | None = None,
) -> Played:
    """The loop: observe, act, record, until an answer, a terminate or a limit (the step cap,
    or the end of the device's lease)."""
    played = Played()
    agent.start(trajectory.task.goal)
    in_a_row = 0
    while trajectory.step_count < max_steps:
        stop = holding.why_stop() if holding is not None else None
        if stop is not None:
            played.failure_kind, played.message = stop
            break
        began = time.perf_counter()
        observation = observe(trajectory)
        asked = time.perf_counter()
        try:
            step = agent.act(observation)
        except LLMError as exc:
            played.failure_kind, played.message = FailureKind.MODEL_ERROR, str(exc)
            break
        answered = time.perf_counter()
        turn = _turn(step, (answered - asked) * 1000)
        played.turns.append(turn)
        played.tokens_in += step.tokens_in
        played.tokens_out += step.tokens_out
        played.model_ms += turn["latency_ms"]
        action = resolve_app(step.action, trajectory)
        text = {
            "memory": step.memory,
            "thought": str(step.extra.get("thought") or ""),
            "summary": str(step.extra.get("summary") or ""),
        }
        try:
            recorded = record_step(trajectory, action, None, conn, text=text)
        except InvalidData as exc:
            turn["invalid"] = str(step.extra.get("invalid") or exc)
            played.invalid_outputs += 1
            in_a_row += 1
            if in_a_row >= INVALID_IN_A_ROW:
                played.failure_kind = FailureKind.INVALID_OUTPUT
                played.message = f"{INVALID_IN_A_ROW} invalid outputs in a row: {turn['invalid']}"
                break
            continue
        except (DeviceGone, RecordingError) as exc:
            played.failure_kind, played.message = FailureKind.DEVICE_ERROR, str(exc)
            break
        in_a_row = 0
        turn["step"] = recorded.index
        turn["action"] = {"type": recorded.action_type, **recorded.action}
        turn["timings"] = {
            "observe_ms": round((asked - began) * 1000, 1),
            **recorded.timings,
            "step_ms": round((time.perf_counter() - began) * 1000, 1),
        }
        if recorded.action_type == "answer":
            played.answer = recorded.action["text"]
            record_step(trajectory, {"type": "terminate", "status": "success"}, None, conn)
            break
        if recorded.action_type == "terminate":
            if recorded.action["status"] != "success" and not played.answer:
                played.failure_kind = FailureKind.GAVE_UP
            break
    else:
        played.failure_kind = FailureKind.STEP_CAP
        played.message = f"no answer within {max_steps} steps"
    played.steps = trajectory.step_count
    return played


def memory_score(
    trajectory: Trajectory, turns: list[dict[str, Any]], values: dict[str, str]
) -> float | None:
    """STAMP's g for the episode: what the agent wrote as memory from the first step that showed
    a value on, against each memory variable of the task (1, 0.5 or 0); None without any."""
    keys = [
        str(i["key"])
        for i in trajectory.task.memory_items
        if isinstance(i, dict) and str(i.get("key")) in values
    ]
    if not keys:
        return None
    found = find_memory(trajectory)
    first = min((f.encode_step for f in found), default=0)
    written = {str(t["step"]): Prediction(action=None, memory=t["memory"]) for t in turns}
    steps = [{"step_index": t["step"]} for t in turns if t["step"] is not None]
    text = task_memory(steps, written, first)
    verdicts = [memory_match(text, values[key]) for key in keys]
    return TASK_SCORES[task_memory_verdict(verdicts)]
