"""One rollout: a task instance played on a leased device by a trainer's outputs, one step at a
time, with STAMP's rewards (``rl.rewards``).

A reset leases a device of the server's pool (in line: ``rl.queue``), resets its apps to the
instance's seed and level (``waypoint reset``, as the runner does), and returns the first screen
with the instruction and the grading rule in words: never the gold answer, the memory variables
(read here, for the memory reward, from ``waypoint vars``) or a shell. A step reads the output
(``rl.actions``), acts as the recorder does (``record_step``: the step, its screens and the
memory the agent wrote are stored as they are taken) and returns the next screen and what the
output earned. The episode ends when the agent answers or terminates, at the step cap, after
``INVALID_IN_A_ROW`` invalid outputs in a row, or when the device's lease nears its maximum
length; the device is released then.

Every rollout is a :class:`rl.models.Rollout` row, written at the reset and after every step,
and, unless the project turned storage off (``RLSettings.store_rollouts``), a trajectory of
source ``rollout`` naming the trainer's run, with the rewards per step in its metadata: it opens,
is labelled and exports like any episode. With storage off the device is driven directly
(action, settle, capture) and only the rollout's rewards are kept.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.utils import timezone
from PIL import Image

from agents.pool import project_devices, release_device
from agents.runner import INVALID_IN_A_ROW, Holding
from devices.models import Lease
from devices.services import DeviceGone, DeviceUnavailable, LeaseConflict, RecordingError
from devices.services.actions import execute_action
from devices.services.adb import DEVICE_ERRORS
from devices.services.capture import CaptureError, capture, wait_until_settled
from devices.services.environment import MAX_SEED, reset_apps
from devices.services.recording import (
    NO_DEVICE_ACTIONS,
    Connected,
    declared_values,
    device_lock,
    do_end_recording,
    do_interrupt,
    do_start_recording,
    record_step,
    virtual_task_named,
)
from devices.virtual.apps import all_templates
from devices.virtual.templates import NATURAL_LEVEL, level_error
from trajectories.blobs import read_blob
from trajectories.grading import answer_matches
from trajectories.labels.protocol import update_metadata
from trajectories.models import Project, Screen, Source, Status, Task, Trajectory
from trajectories.validation import InvalidData

from .actions import Output, read_output
from .models import RLSettings, Rollout, RolloutStatus
from .protocol import IMAGE_FORMATS, WaypointAction, WaypointObservation, WaypointState
from .rewards import EpisodeRewards, MemoryItem, RewardConfig, Turn, check_rewards, memory_grade

log = logging.getLogger(__name__)

RESET_ARGS = ("seed", "task", "level", "run", "with_xml", "image", "max_steps", "rewards")
MAX_RUN_NAME = 100
DEFAULT_RUN = "rollout"
JPEG_QUALITY = 90
MAX_KEPT_TEXT = 2_000  # characters of a model's output kept with the rollout's trajectory
RULE_WORDS = {
    "exact": "The answer is right when it is exactly the expected answer (spaces around it aside).",
    "iexact": "The answer is right when it is the expected answer, in any case.",
    "contains": "The answer is right when it contains the expected answer, in any case.",
    "number": "The answer is right when its first number is the expected number.",
    "regex": "The answer is right when the whole of it matches the expected pattern.",
}


class EpisodeError(Exception):
    """The request cannot be served as asked (no episode, the episode ended, no device)."""


@dataclass(frozen=True)
class Setup:
    """What one environment server serves: a project's devices (all of its connected ones,
    or the serials named) and the task templates a reset may pose."""

    project: Project
    tasks: tuple[str, ...]
    devices: tuple[str, ...] = ()
    default_steps: int = 30  # the step cap of a template without its own budget

    def pool(self) -> list[dict[str, str]]:
        connected = project_devices(self.project)
        if not self.devices:
            return connected
        return [d for d in connected if d["serial"] in self.devices]


@dataclass(frozen=True)
class Reset:
    """A reset's arguments, checked."""

    template: str
    seed: int
    level: int
    run: str
    with_xml: bool
    image: str
    max_steps: int
    rewards: RewardConfig | None


def _whole(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidData(f"{where}: must be a whole number from {low} to {high}, got {value!r}")
    return value


def check_reset(setup: Setup, args: dict[str, Any], rng: random.Random) -> Reset:
    """The reset's arguments as a :class:`Reset`; bad ones are refused, named."""
    unknown = [name for name in args if name not in (*RESET_ARGS, "episode_id")]
    if unknown:
        raise InvalidData(
            f"reset: unknown argument {unknown[0]!r} (known: {', '.join(RESET_ARGS)})"
        )
    seed = args.get("seed")
    seed = rng.randint(0, MAX_SEED) if seed is None else _whole(seed, "seed", 0, MAX_SEED)
    template = args.get("task")
    if template is None:
        template = setup.tasks[seed % len(setup.tasks)]
    elif template not in setup.tasks:
        shown = ", ".join(setup.tasks[:10]) + (", ..." if len(setup.tasks) > 10 else "")
        raise InvalidData(
            f"task: {template!r} is not one of the {len(setup.tasks)} tasks this server poses "
            f"({shown})"
        )
    level = args.get("level", NATURAL_LEVEL)
    problem = level_error(level)
    if problem:
        raise InvalidData(problem)
    run = args.get("run", DEFAULT_RUN)
    if not isinstance(run, str) or not run.strip() or len(run) > MAX_RUN_NAME:
        raise InvalidData(f"run: must be a name of 1 to {MAX_RUN_NAME} characters, got {run!r}")
    with_xml = args.get("with_xml", False)
    if not isinstance(with_xml, bool):
        raise InvalidData(f"with_xml: must be true or false, got {with_xml!r}")
    image = args.get("image", "png")
    if image not in IMAGE_FORMATS:
        raise InvalidData(f"image: must be {' or '.join(IMAGE_FORMATS)}, got {image!r}")
    budget = budget_of(template) or setup.default_steps
    max_steps = args.get("max_steps")
    max_steps = budget if max_steps is None else _whole(max_steps, "max_steps", 1, budget)
    rewards = args.get("rewards")
    return Reset(
        template=template,
        seed=seed,
        level=level,
        run=run.strip(),
        with_xml=with_xml,
        image=image,
        max_steps=max_steps,
        rewards=None if rewards is None else check_rewards(rewards),
    )


def budget_of(template: str) -> int:
    """The template's own step budget (a long template's), 0 when it has none."""
    return next((t.max_steps for t in all_templates() if t.id == template), 0) or 0


def project_settings(project: Project) -> tuple[bool, RewardConfig]:
    """Whether the project keeps its rollouts as trajectories, and its reward config."""
    found = RLSettings.objects.filter(project=project).first()
    if found is None:
        return True, RewardConfig()
    return found.store_rollouts, check_rewards(found.rewards, "the project's RL rewards")


def rule_words(rule: str, output_format: str) -> str:
    """How the answer is graded, in words (a regex's pattern is its gold: never shown)."""
    words = RULE_WORDS.get(rule, "The answer is graded against the expected answer.")
    return f"{words} Answer with {output_format}." if output_format else words


@dataclass
class Screenful:
    """A screen as the agent sees it, and the memory variables it shows (their refs: never
    their values)."""

    png: bytes
    xml: str
    width: int
    height: int
    package: str
    shown: frozenset[str]

    @classmethod
    def of_screen(cls, screen: Screen) -> Screenful:
        return cls(
            png=read_blob(screen.screenshot),
            xml=read_blob(screen.ui_xml).decode("utf-8", "replace") if screen.ui_xml else "",
            width=screen.width,
            height=screen.height,
            package=screen.package,
            shown=_refs(screen.visible_memory),
        )


def _refs(visible: list[dict[str, Any]] | None) -> frozenset[str]:
    return frozenset(str(v["ref"]) for v in visible or [] if isinstance(v, dict) and "ref" in v)


def image_data(png: bytes, image: str) -> str:
    if image == "jpeg":
        out = io.BytesIO()
        Image.open(io.BytesIO(png)).convert("RGB").save(out, "JPEG", quality=JPEG_QUALITY)
        png = out.getvalue()
    return base64.b64encode(png).decode("ascii")


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


class Episode:
    """A rollout in progress on the device it leased (see the module's docstring)."""

    def __init__(
        self,
        setup: Setup,
        user,
        reset: Reset,
        lease: Lease,
        conn: Connected,
        release: Callable[[], None],
    ) -> None:
        self.setup = setup
        self.user = user
        self.reset = reset
        self.lease = lease
        self.conn = conn
        self._release = release  # gives the device back (and tells the line)
        self.store, project_config = project_settings(setup.project)
        self.config = reset.rewards or project_config
        self.rewards = EpisodeRewards(self.config)
        self.lease_lost = threading.Event()
        self.holding = Holding(lease, self.lease_lost)
        self.turns: list[Turn] = []
        self.outputs = 0
        self.invalid_in_a_row = 0
        self.done = False
        self.truncated = False
        self.released = False
        self.trajectory: Trajectory | None = None
        self.rollout: Rollout | None = None
        self.task: Task | None = None
        self.apps: list[dict[str, Any]] = []
        self.items: list[MemoryItem] = []
        self.rule = ""
        self.screen: Screenful | None = None
        self.episode_parts: dict[str, float] = {}
        self.log: list[dict[str, Any]] = []  # each output: what it was, the step it became
        self.last_index: int | None = None  # the step the last action was recorded as

    # ------------------------------------------------------------------ start

    def begin(self) -> WaypointObservation:
        """Reset the device to the instance, start the rollout, the first observation."""
        began = time.perf_counter()
        reset, conn, serial = self.reset, self.conn, self.lease.serial
        try:
            env = reset_apps(conn.device, serial, reset.seed, reset.level)
            task = virtual_task_named(self.setup.project, conn, reset.template)
            self.task = task
            values = declared_values(conn)
            declared = json.loads(conn.device.shell(["waypoint", "tasks"], timeout=10) or "[]")
            spec = next((t for t in declared if t.get("id") == reset.template), {})
            if self.store:
                self.trajectory = do_start_recording(
                    self.lease,
                    task,
                    None,
                    conn,
                    reset_seed=reset.seed,
                    source=Source.ROLLOUT,
                    recorder_name=f"rollout:{reset.run}",
                    reset_level=reset.level,
                )
                self.task = task = self.trajectory.task
                screen = Screenful.of_screen(self.trajectory.final_screen)
            else:
                screen = self._capture()
        except (DeviceUnavailable, RecordingError, CaptureError, *DEVICE_ERRORS) as exc:
            raise EpisodeError(f"device {serial} could not be reset: {exc}") from exc
        self.apps = env["apps"]
        self.rule = rule_words(task.grading_rule, str(spec.get("output_format") or ""))
        self.items = [
            MemoryItem(str(i["key"]), values[str(i["key"])], str(i.get("description") or ""))
            for i in task.memory_items
            if isinstance(i, dict) and str(i.get("key")) in values
        ]
        self.rollout = Rollout.objects.create(
            project=self.setup.project,
            user=self.user,
            run_name=reset.run,
            template=reset.template,
            seed=reset.seed,
            level=reset.level,
            device_serial=serial,
            trajectory=self.trajectory,
            heartbeat_at=timezone.now(),
        )
        if self.trajectory is not None:
            update_metadata(self.trajectory, self._note_rollout)
        self.screen = screen
        observation = self.observation(info={})
        observation.timings = {"server_ms": _ms(time.perf_counter() - began)}
        return observation

    def _note_rollout(self, metadata: dict[str, Any]) -> None:
        metadata["rollout"] = {
            "id": self.rollout.pk,
            "run": self.reset.run,
            "rewards_config": self.config.as_dict(),
            "rewards": list(self.rewards.given),
            "outputs": list(self.log),
            **({"reward": self.rewards_total(), "parts": self.episode_parts} if self.done else {}),
        }

    def rewards_total(self) -> float | None:
        return self.episode_parts.get("total") if self.done else None

    def _capture(self) -> Screenful:
        with device_lock(self.lease.serial):
            settle = wait_until_settled(self.conn.device, self.conn.facts)
            shot = capture(self.conn.device, self.conn.facts, settle)
        return Screenful(
            shot.png, shot.xml, shot.width, shot.height, shot.package, _refs(shot.visible_memory)
        )

    # ------------------------------------------------------------------ observe

    def observation(self, info: dict[str, Any], reward: float | None = None) -> WaypointObservation:
        screen = self.screen
        return WaypointObservation(
            instruction=self.task.goal,
            rule=self.rule,
            screenshot=image_data(screen.png, self.reset.image),
            image_format=self.reset.image,
            xml=screen.xml if self.reset.with_xml else None,
            width=screen.width,
            height=screen.height,
            package=screen.package,
            step=self.outputs,
            info=info,
            done=self.done,
            reward=reward,
        )

    def state(self, episode_id: str | None = None) -> WaypointState:
        return WaypointState(
            episode_id=episode_id,
            step_count=self.outputs,
            template=self.reset.template,
            seed=self.reset.seed,
            level=self.reset.level,
            run=self.reset.run,
            device=self.lease.serial,
            trajectory=self.trajectory.pk if self.trajectory else None,
            stored=self.store,
            done=self.done,
            truncated=self.truncated,
            rewards=list(self.rewards.given),
            reward=self.rewards_total(),
            parts=dict(self.episode_parts) if self.done else {},
        )

    # ------------------------------------------------------------------ step

    def step(self, given: WaypointAction) -> WaypointObservation:
        if self.done:
            raise EpisodeError("the episode has ended: reset to start another")
        began = time.perf_counter()
        screen = self.screen
        output = read_output(given, screen.width, screen.height, self.apps)
        self.outputs += 1
        self.turns.append(Turn(shown=screen.shown, memory=output.memory))
        info: dict[str, Any] = {}
        timings: dict[str, float] = {}
        ended: tuple[str, str] | None = None  # (status, why)
        answer = None
        terminate = "failure"
        stop = self.holding.why_stop()
        if output.action is None:
            self.invalid_in_a_row += 1
            info["invalid"] = output.invalid
            if self.invalid_in_a_row >= INVALID_IN_A_ROW:
                ended = (RolloutStatus.TRUNCATED, f"{INVALID_IN_A_ROW} invalid outputs in a row")
        elif stop is not None:
            ended = (RolloutStatus.TRUNCATED, stop[1])
        else:
            self.invalid_in_a_row = 0
            try:
                timings = self._act(output)
            except InvalidData as exc:
                # The device refused it (no such app, text it cannot type): no action was taken.
                output.action, info["invalid"] = None, str(exc)
                self.invalid_in_a_row += 1
            except (DeviceGone, RecordingError) as exc:
                ended = (RolloutStatus.TRUNCATED, f"the device was lost: {exc}")
            else:
                kind = output.action["type"]
                if kind == "answer":
                    answer = output.action["text"]
                    ended, terminate = (RolloutStatus.DONE, "the agent answered"), "success"
                elif kind == "terminate":
                    terminate = output.action["status"]
                    ended = (RolloutStatus.DONE, f"the agent terminated ({terminate})")
        if ended is None and self.outputs >= self.reset.max_steps:
            ended = (RolloutStatus.TRUNCATED, f"no answer within {self.reset.max_steps} steps")
        invalid = output.action is None
        self.log.append(
            {
                "step": None if invalid or self.trajectory is None else self.last_index,
                "action": output.action,
                "memory": output.memory,
                **({"invalid": info["invalid"]} if invalid else {}),
                **({"text": given.text[:MAX_KEPT_TEXT]} if given.text is not None else {}),
            }
        )
        if ended is None:
            info["reward"] = self.rewards.on_output(invalid)
            self._save_progress()
            reward = info["reward"]["total"]
        else:
            info.update(self._end(ended, invalid, answer, terminate))
            reward = info["reward"]["total"]
        observation = self.observation(info, reward)
        observation.timings = {**timings, "server_ms": _ms(time.perf_counter() - began)}
        return observation

    def _act(self, output: Output) -> dict[str, float]:
        """Do the action on the device (recording it when the rollout is stored); the timings."""
        action = output.action
        if self.trajectory is not None:
            text = {"memory": output.memory, **output.text}
            recorded = record_step(self.trajectory, action, None, self.conn, text=text)
            self.last_index = recorded.index
            if recorded.action_type == "answer":  # the runner's ending: answer, then terminate
                record_step(self.trajectory, {"type": "terminate", "status": "success"}, None)
            t0 = time.perf_counter()
            self.screen = Screenful.of_screen(self.trajectory.final_screen)
            timings = dict(recorded.timings)
            if timings:
                timings["device_ms"] = round(
                    timings["action_ms"] + timings["settle_ms"] + timings["capture_ms"], 1
                )
                timings["read_ms"] = _ms(time.perf_counter() - t0)
            return timings
        kind = action["type"]
        if kind in NO_DEVICE_ACTIONS:
            return {}
        fields = {k: v for k, v in action.items() if k != "type"}
        try:
            t0 = time.perf_counter()
            with device_lock(self.lease.serial):
                execute_action(self.conn.device, kind, fields, self.conn.facts)
                settle = wait_until_settled(self.conn.device, self.conn.facts)
                shot = capture(self.conn.device, self.conn.facts, settle)
        except (DeviceUnavailable, CaptureError, *DEVICE_ERRORS) as exc:
            raise DeviceGone(f"device {self.lease.serial} disconnected: {exc}") from exc
        self.screen = Screenful(
            shot.png, shot.xml, shot.width, shot.height, shot.package, _refs(shot.visible_memory)
        )
        return {"device_ms": _ms(time.perf_counter() - t0)}

    def _save_progress(self) -> None:
        Rollout.objects.filter(pk=self.rollout.pk).update(
            steps=self.outputs, rewards=self.rewards.given, heartbeat_at=timezone.now()
        )

    # ------------------------------------------------------------------ end

    def _success(self, answer: str | None) -> bool:
        if self.trajectory is not None:
            return bool((self.trajectory.metadata.get("grade") or {}).get("correct"))
        if not answer:
            return False
        return answer_matches(self.task.grading_rule, self.task.gold_answer, answer)

    def _end(
        self, ended: tuple[str, str], invalid: bool, answer: str | None, terminate: str
    ) -> dict[str, Any]:
        """Grade, score the memory, keep the rollout, give the device back; the info."""
        status, why = ended
        self.done = True
        self.truncated = status != RolloutStatus.DONE
        trajectory = self.trajectory
        if trajectory is not None and trajectory.status == Status.RECORDING:
            do_end_recording(
                trajectory,
                None,
                status=terminate,
                answer=answer,
                step_memory_from_environment=False,
            )
        success = self._success(answer)
        grade, graded_by = memory_grade(self.config, self.task.goal, self.turns, self.items)
        last, episode = self.rewards.at_end(invalid, success, grade)
        self.episode_parts = episode
        self._finish_rollout(status, why, success)
        self.release()
        return {
            "reward": last,
            "episode": {
                **episode,
                "success": success,
                "memory_grade": grade,
                "memory_by": graded_by,
            },
            "ended": why,
            "truncated": self.truncated,
        }

    def _finish_rollout(self, status: str, why: str, success: bool | None) -> None:
        Rollout.objects.filter(pk=self.rollout.pk).update(
            status=status,
            reason=why[:500],
            steps=self.outputs,
            rewards=self.rewards.given,
            reward=self.episode_parts.get("total"),
            parts=self.episode_parts,
            success=success,
            ended_at=timezone.now(),
            heartbeat_at=timezone.now(),
        )
        if self.trajectory is not None:
            update_metadata(self.trajectory, self._note_rollout)

    def abandon(self, why: str) -> None:
        """The trainer left (closed the session, or went silent): the rollout ends as it
        stands, its trajectory interrupted with every step kept, and the device is freed."""
        if self.done or self.rollout is None:
            self.release()
            return
        self.done = self.truncated = True
        if self.trajectory is not None:
            do_interrupt(self.trajectory, why)
            update_metadata(self.trajectory, self._note_rollout)
        Rollout.objects.filter(pk=self.rollout.pk).update(
            status=RolloutStatus.ABANDONED,
            reason=why[:500],
            steps=self.outputs,
            rewards=self.rewards.given,
            ended_at=timezone.now(),
        )
        self.release()

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        try:
            release_device(self.lease, self.user)
        except LeaseConflict:
            log.warning("rollout on %s: its lease was already taken by another", self.lease)
        self._release()


def heartbeat_rollouts(ids: list[int]) -> None:
    """The rollouts of this server are alive (the reaper leaves them)."""
    Rollout.objects.filter(pk__in=ids, status=RolloutStatus.RUNNING).update(
        heartbeat_at=timezone.now()
    )


def reap_lost_rollouts(stale_s: float) -> int:
    """Rollouts left running by a server that stopped (no heartbeat for ``stale_s``) end as
    lost, their trajectories interrupted with every step kept; how many."""
    cutoff = timezone.now() - timedelta(seconds=stale_s)
    lost = list(
        Rollout.objects.filter(status=RolloutStatus.RUNNING, heartbeat_at__lt=cutoff)
        .select_related("trajectory")
        .order_by("pk")
    )
    why = f"its environment server stopped (no heartbeat for {stale_s:g} s)"
    for rollout in lost:
        ended = Rollout.objects.filter(pk=rollout.pk, status=RolloutStatus.RUNNING).update(
            status=RolloutStatus.LOST, reason=why, ended_at=timezone.now()
        )
        if ended and rollout.trajectory is not None:
            do_interrupt(rollout.trajectory, why)
            update_metadata(rollout.trajectory, lambda m, r=rollout: _lost_rewards(m, r))
    return len(lost)


def _lost_rewards(metadata: dict[str, Any], rollout: Rollout) -> None:
    metadata.setdefault("rollout", {"id": rollout.pk, "run": rollout.run_name})
    metadata["rollout"]["rewards"] = rollout.rewards
