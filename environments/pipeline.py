"""One environment through the pipeline (issue 37), in a Celery task of its own:

1. **generate** it (``procedural.py``, or STAMP's three agents through the LLM client:
   ``llm_agents.py``) as an app package, kept in blob storage whatever happens next;
2. **inspect** it statically (``inspection.py``; with a model, STAMP's inspector prompt too);
3. **solve** it on a virtual device of the generation's pool: the package pushed and
   installed there, the generic solver (``agents/spec_solver.py``) playing its task through adb
   as any agent does (screen and XML only), recorded as a trajectory (source ``solver``) whose
   memory labels come from the environment, graded by the device;
4. check that it **needs memory**: on the solver's path a value has left the last K screens
   when it is used (``agents.memory_need``);
5. **install** it (``devices.services.packages``): its task joins the catalog;
6. with the generation's options, synthesize each step's reasoning and run the step critic on
   the verified run (``training.py``).

An environment that fails a stage is kept with the stage and the reason, and never installed;
the next index replaces it while the generation has attempts left. The generation's job counts
the verified ones and ends with the last environment.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Greatest
from django.utils import timezone
from lxml import etree

from agents.memory_check import trajectory_path
from agents.memory_need import measure, window
from agents.pool import NoDevice, release_device, take_device
from agents.runner import Holding, drive
from agents.spec_solver import spec_solver
from devices.services import DeviceUnavailable, LeaseConflict, do_heartbeat
from devices.services.adb import DEVICE_ERRORS
from devices.services.packages import (
    install_on_device,
    install_package,
    plan_of,
    uninstall_from_device,
)
from devices.services.recording import (
    RecordingError,
    do_end_recording,
    do_start_recording,
    virtual_task_named,
)
from devices.virtual.packages import Package
from trajectories.blobs import put_blobs, read_blob
from trajectories.jobs import DETACHED, end_detached_job, touch_detached_job, worker_name
from trajectories.models import Job, Screen, Source, Trajectory
from trajectories.validation import InvalidData

from .inspection import inspect_package
from .llm_agents import client_for, inspect_with_model, llm_package
from .models import EnvironmentStatus, GeneratedEnvironment, Generation, GeneratorKind, Stage
from .procedural import generate
from .render import package_of
from .training import prepare_training

log = logging.getLogger(__name__)

BUILD_TASK = "environments.build_environment"  # the name of environments.tasks.build_task
SOLVER_NAME = "generic solver"
PACKAGE_TYPE = "application/zip"
RESET_SEED = 0  # a generated app's data is fixed: any seed poses the same task


class Failed(Exception):
    """The environment failed a stage; the message says why."""

    def __init__(self, stage: str, reason: str):
        super().__init__(reason)
        self.stage = stage
        self.reason = reason


# ---------------------------------------------------------------- the job


def run_generation_job(job: Job, progress) -> dict[str, Any] | str:
    """Make the generation's first ``count`` environments (once) and hand every environment
    not finished to a task of its own; the last one ends the job."""
    generation = job.generation
    with transaction.atomic():
        have = set(generation.environments.values_list("index", flat=True))
        GeneratedEnvironment.objects.bulk_create(
            GeneratedEnvironment(generation=generation, index=i)
            for i in range(generation.count)
            if i not in have
        )
        Generation.objects.filter(pk=generation.pk).update(
            next_index=Greatest(F("next_index"), generation.count)
        )
    verified = generation.environments.filter(status=EnvironmentStatus.VERIFIED).count()
    Job.objects.filter(pk=job.pk).update(done=verified, total=generation.count)
    to_send = list(playable(generation).values_list("pk", flat=True))
    if not to_send:
        return generation_counts(generation)
    for pk in to_send:
        send_environment(pk)
    return DETACHED


def _stale_before():
    return timezone.now() - timedelta(seconds=settings.WAYPOINT_JOB_STALE_S)


def _playable() -> Q:
    return (
        Q(status=EnvironmentStatus.QUEUED)
        | Q(status=EnvironmentStatus.RUNNING, heartbeat_at__lt=_stale_before())
        | Q(status=EnvironmentStatus.RUNNING, heartbeat_at__isnull=True)
    )


def playable(generation: Generation):
    return generation.environments.filter(_playable())


def send_environment(pk: int) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        build_environment(pk)
    else:
        current_app.send_task(BUILD_TASK, args=(pk,))


def generation_counts(generation: Generation) -> dict[str, Any]:
    """What the job's page says the generation did."""
    envs = generation.environments
    failed = envs.filter(status=EnvironmentStatus.FAILED)
    reasons: dict[str, int] = {}
    for stage in failed.values_list("stage", flat=True):
        reasons[stage] = reasons.get(stage, 0) + 1
    return {
        "asked": generation.count,
        "verified": envs.filter(status=EnvironmentStatus.VERIFIED).count(),
        "failed": failed.count(),
        "failed_by_stage": reasons,
    }


# ---------------------------------------------------------------- one environment


def claim_environment(pk: int) -> GeneratedEnvironment | None:
    token = f"{worker_name()}:{uuid.uuid4().hex[:8]}"
    now = timezone.now()
    claimed = (
        GeneratedEnvironment.objects.filter(pk=pk)
        .filter(_playable())
        .update(
            status=EnvironmentStatus.RUNNING,
            worker=token,
            heartbeat_at=now,
            starts=F("starts") + 1,
        )
    )
    if not claimed:
        return None
    return GeneratedEnvironment.objects.select_related(
        "generation__project", "generation__created_by", "generation__job"
    ).get(pk=pk)


class Beat:
    """While an environment is built, its claim, its generation's job and the device's lease
    stay fresh."""

    def __init__(self, env: GeneratedEnvironment):
        self.env = env
        self.lease = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, name=f"environment-{env.pk}-beat")

    def _beat(self) -> None:
        try:
            while not self.stop.wait(settings.WAYPOINT_JOB_HEARTBEAT_S):
                GeneratedEnvironment.objects.filter(pk=self.env.pk, worker=self.env.worker).update(
                    heartbeat_at=timezone.now()
                )
                touch_detached_job(self.env.generation.job_id)
                if self.lease is not None:
                    try:
                        do_heartbeat(self.lease.serial, self.env.generation.created_by)
                    except LeaseConflict:
                        log.warning("environment %s lost its lease", self.env.pk)
        finally:
            connection.close()

    def __enter__(self) -> Beat:
        touch_detached_job(self.env.generation.job_id)
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop.set()
        self.thread.join()


def build_environment(pk: int) -> bool:
    """Claim and build one environment; False when another worker has it or it is done."""
    env = claim_environment(pk)
    if env is None:
        return False
    began = time.perf_counter()
    report: dict[str, Any] = {"timings": {}}
    with Beat(env) as beat:
        try:
            _build(env, beat, report)
        except Failed as failure:
            _end(env, EnvironmentStatus.FAILED, failure.stage, failure.reason, report, began)
        except Exception as exc:  # noqa: BLE001 - the environment fails; the worker goes on
            log.exception("environment %s failed", env.pk)
            _end(
                env,
                EnvironmentStatus.FAILED,
                env.stage,
                f"internal error ({type(exc).__name__}); the worker's log has it",
                report,
                began,
            )
        else:
            _end(env, EnvironmentStatus.VERIFIED, Stage.DONE, "", report, began)
    after_environment(env)
    return True


def _stage(env: GeneratedEnvironment, stage: str, report: dict[str, Any]) -> Callable[[], None]:
    GeneratedEnvironment.objects.filter(pk=env.pk).update(stage=stage)
    env.stage = stage
    began = time.perf_counter()

    def done() -> None:
        report["timings"][stage] = round(time.perf_counter() - began, 3)

    return done


def make_package(generation: Generation, index: int) -> Package:
    """The environment of ``index`` in the generation, as a package (GenerationError,
    LLMError or PackageError when the generator cannot make it)."""
    if generation.generator == GeneratorKind.LLM:
        return llm_package(generation.seed, index, generation.domains, generation.options)
    return package_of(generate(generation.seed, index, generation.domains))


def _build(env: GeneratedEnvironment, beat: Beat, report: dict[str, Any]) -> None:
    generation = env.generation
    done = _stage(env, Stage.GENERATE, report)
    package = generate_stage(env)
    done()

    done = _stage(env, Stage.INSPECT, report)
    problems = inspect_package(
        package.files["index.html"].decode("utf-8"),
        _json(package, "task_spec.json"),
        _json(package, "scenario.json"),
    )
    if not problems and generation.generator == GeneratorKind.LLM:
        problems = inspect_with_model(
            package.files["index.html"].decode("utf-8"),
            _json(package, "task_spec.json"),
            _json(package, "scenario.json"),
            client_for(generation.options),
        )
    report["inspection"] = [str(p) for p in problems]
    if problems:
        raise Failed(Stage.INSPECT, "; ".join(str(p) for p in problems[:3]))
    done()

    done = _stage(env, Stage.SOLVE, report)
    trajectory = solve_on_device(env, package, beat)
    done()

    done = _stage(env, Stage.MEMORY, report)
    check_memory(env, package, trajectory, report)
    report.update(describe(package, trajectory))
    done()

    done = _stage(env, Stage.INSTALL, report)
    try:
        install_package(package)
    except InvalidData as exc:
        raise Failed(Stage.INSTALL, str(exc)) from None
    done()

    done = _stage(env, Stage.TRAINING, report)
    report["training"] = prepare_training(trajectory, generation.options)
    done()


def _json(package: Package, name: str) -> dict[str, Any]:
    return json.loads(package.files.get(name, b"{}"))


def generate_stage(env: GeneratedEnvironment) -> Package:
    try:
        package = make_package(env.generation, env.index)
    except Exception as exc:  # noqa: BLE001 - a generator's refusal, said as it is
        raise Failed(Stage.GENERATE, str(exc) or type(exc).__name__) from None
    archive = package.archive()
    blob = put_blobs([(archive, PACKAGE_TYPE)])[hashlib.sha256(archive).hexdigest()]
    fields = {
        "slug": package.slug,
        "label": package.manifest["label"],
        "version": package.version,
        "sha256": package.sha256,
        "archive": blob,
        "domain": str((package.manifest.get("generator") or {}).get("domain", "")),
    }
    GeneratedEnvironment.objects.filter(pk=env.pk).update(**fields)
    for name, value in fields.items():
        setattr(env, name, value)
    return package


def solve_on_device(env: GeneratedEnvironment, package: Package, beat: Beat) -> Trajectory:
    """The generic solver's run of the package's task on a device of the pool, recorded."""
    generation = env.generation
    user = generation.created_by
    [task] = package.manifest["tasks"][:1]
    plan = plan_of(package.manifest, task)
    try:
        lease, conn = take_device(generation.devices, user, first=env.index)
    except NoDevice as exc:
        raise Failed(Stage.SOLVE, str(exc)) from None
    beat.lease = lease
    try:
        install_on_device(conn.device, lease.serial, package)
        try:
            posed = virtual_task_named(generation.project, conn, task["id"])
            trajectory = do_start_recording(
                lease,
                posed,
                None,
                conn,
                reset_seed=RESET_SEED,
                source=Source.SOLVER,
                recorder_name=SOLVER_NAME,
            )
            played = drive(
                trajectory,
                spec_solver(task["id"], plan),
                conn,
                int(task.get("max_steps") or settings.WAYPOINT_AGENT_MAX_STEPS),
                Holding(lease),
            )
            do_end_recording(
                trajectory,
                None,
                status="success" if not played.failure_kind else "failure",
                answer=played.answer or None,
                step_memory_from_environment=True,
            )
        finally:
            uninstall_from_device(conn.device, lease.serial, package.package)
    except (DeviceUnavailable, RecordingError, *DEVICE_ERRORS) as exc:
        raise Failed(Stage.SOLVE, f"device: {exc}") from None
    finally:
        beat.lease = None
        release_device(lease, user)
    GeneratedEnvironment.objects.filter(pk=env.pk).update(trajectory=trajectory)
    env.trajectory = trajectory
    grade = trajectory.metadata.get("grade") or {}
    if played.failure_kind or not grade.get("correct"):
        why = played.message or played.failure_kind or "its answer was graded wrong"
        if played.failure_kind == "gave_up" and played.turns:  # the solver says where it stuck
            why = f"it gave up: {played.turns[-1]['raw_output']}"
        if not played.failure_kind and played.answer:
            why = f"its answer {played.answer!r} was graded wrong"
        raise Failed(Stage.SOLVE, f"the generic solver did not solve it: {why}")
    return trajectory


def check_memory(
    env: GeneratedEnvironment, package: Package, trajectory: Trajectory, report: dict[str, Any]
) -> None:
    """Fail unless a value has left the last K screens when it is used (agents.memory_need)."""
    k = window()
    values = {f"{package.slug}.{v['name']}": str(v["value"]) for v in package.manifest["variables"]}
    need = measure(trajectory_path(trajectory), values, k)
    report["memory"] = {
        "k": k,
        "steps": need.steps,
        "needs_memory": need.needs_memory,
        "distances": {v.ref: v.distance for v in need.values},
    }
    if not need.needs_memory:
        far = ", ".join(f"{v.ref.split('.', 1)[1]} {v.distance}" for v in need.values)
        raise Failed(
            Stage.MEMORY,
            f"no value leaves the last {k} screens before it is used (distances: {far})",
        )


# ---------------------------------------------------------------- what it is like


def skeleton(xml: str) -> str:
    """A screen's structure without its text: each node's depth, class and resource id (digits
    out, so the third item of a list is the first's), one line each."""
    try:
        root = etree.fromstring(xml.encode())
    except etree.XMLSyntaxError:
        return ""
    lines = []
    for node in root.iter("node"):
        depth = sum(1 for _ in node.iterancestors())
        rid = "".join(c for c in node.get("resource-id", "") if not c.isdigit())
        lines.append(f"{depth}:{node.get('class', '')}:{rid}:{node.get('clickable', '')}")
    return "\n".join(lines)


def describe(package: Package, trajectory: Trajectory) -> dict[str, Any]:
    """The environment's figures for the generator's report: its domain, style and memory type,
    and the structural hash of every page its verified run showed (the XML of each screen of
    the app, text left out) and of the whole (its layout)."""
    generator = package.manifest.get("generator") or {}
    [task] = package.manifest["tasks"][:1]
    pages = set()
    screens = Screen.objects.filter(trajectory=trajectory, package=package.package).select_related(
        "ui_xml"
    )
    for screen in screens:
        if screen.ui_xml is not None:
            shape = skeleton(read_blob(screen.ui_xml).decode("utf-8", "replace"))
            if shape:
                pages.add(hashlib.sha256(shape.encode()).hexdigest()[:16])
    layout = hashlib.sha256("\n".join(sorted(pages)).encode()).hexdigest()[:16]
    memory = task.get("memory") or {}
    return {
        "domain": generator.get("domain", ""),
        "generator": generator.get("name", ""),
        "style": generator.get("style") or {},
        "memory_type": f"{memory.get('what', '')}/{memory.get('use', '')}",
        "answer": ((task.get("plan") or {}).get("answer") or {}).get("op", ""),
        "memory_items": len(package.manifest.get("variables", [])),
        "page_hashes": sorted(pages),
        "layout_hash": layout,
    }


# ---------------------------------------------------------------- the end of one


def _end(
    env: GeneratedEnvironment,
    status: str,
    stage: str,
    reason: str,
    report: dict[str, Any],
    began: float,
) -> None:
    GeneratedEnvironment.objects.filter(pk=env.pk, worker=env.worker).update(
        status=status,
        stage=stage,
        reason=reason[:2000],
        report=report,
        seconds=round(time.perf_counter() - began, 3),
        finished_at=timezone.now(),
    )
    env.status = status


def after_environment(env: GeneratedEnvironment) -> None:
    """Count a verified environment; replace a failed one while attempts are left; end the
    job after the last."""
    generation = env.generation
    job_id = generation.job_id
    if env.status == EnvironmentStatus.VERIFIED:
        touch_detached_job(job_id, done=1)
    else:
        verified = generation.environments.filter(status=EnvironmentStatus.VERIFIED).count()
        pending = generation.environments.filter(
            status__in=[EnvironmentStatus.QUEUED, EnvironmentStatus.RUNNING]
        ).count()
        if verified + pending < generation.count:
            replacement = _next_environment(generation)
            if replacement is not None:
                send_environment(replacement.pk)
        touch_detached_job(job_id)
    pending = generation.environments.filter(
        status__in=[EnvironmentStatus.QUEUED, EnvironmentStatus.RUNNING]
    ).exists()
    if not pending:
        verified = generation.environments.filter(status=EnvironmentStatus.VERIFIED).count()
        # Fewer than asked (the attempts ran out): the job is done with what it has.
        Job.objects.filter(pk=job_id, total__gt=verified).update(total=verified, done=verified)
        end_detached_job(job_id, generation_counts(generation))


def _next_environment(generation: Generation) -> GeneratedEnvironment | None:
    """A new environment at the next index, while the generation has attempts left."""
    with transaction.atomic():
        locked = Generation.objects.select_for_update().get(pk=generation.pk)
        if locked.next_index >= locked.max_attempts:
            return None
        index = locked.next_index
        Generation.objects.filter(pk=generation.pk).update(next_index=index + 1)
        return GeneratedEnvironment.objects.create(generation=generation, index=index)
