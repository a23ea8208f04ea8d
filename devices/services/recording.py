"""Recording a trajectory on a device, one step at a time.

One step = the current Screen (captured after the previous step) → execute the action → wait
until the screen settles → capture the new Screen → store the Step. The trajectory's
``final_screen`` is always the screen the device showed after the last step: the "before"
screen of the next one. Recording state lives in the trajectory (``status``, ``metadata``)
and in the device's lease (``Lease.trajectory``), so it survives restarts of the web server.

Each ``do_*`` action and each recorded step commits when it returns
(``transaction.atomic(durable=True)``); labels change only through the edit protocol.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import adbutils
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.crypto import salted_hmac

from trajectories import events
from trajectories.blobs import put_blobs, read_blob
from trajectories.gold import check_can_see_gold
from trajectories.grading import answer_matches
from trajectories.labels import edits
from trajectories.labels.parts import memory_target_dict, step_dict
from trajectories.labels.protocol import (
    RECORDING,
    apply_edit,
    bump,
    forget_undo,
    lock_row,
    update_metadata,
)
from trajectories.models import (
    ActionType,
    MemoryTarget,
    Outcome,
    Project,
    Screen,
    Source,
    Status,
    Step,
    Task,
    Trajectory,
)
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task, record_event
from trajectories.uixml import UITree, UIXmlError, parse_ui_xml
from trajectories.validation import (
    InvalidData,
    check_action,
    check_bounds,
    check_point_on_screen,
)

from ..models import Lease
from .actions import execute_action
from .adb import DEVICE_ERRORS, DeviceFacts, DeviceUnavailable, device_facts, find_device
from .capture import Capture, CaptureError, Settle, capture, wait_until_settled
from .environment import NATURAL_LEVEL, check_seed, read_environment, reset_apps
from .environment_memory import do_label_memory_from_environment, memory_items
from .live import remember_frame

NO_DEVICE_ACTIONS = (ActionType.ANSWER, ActionType.TERMINATE)


class RecordingError(Exception):
    """The recording cannot go on as asked (wrong state, another step was recorded first)."""


class DeviceGone(RecordingError):
    """The device disappeared; the trajectory is now interrupted with its steps kept."""


class NoFocusedField(InvalidData):
    """Text to type, and no text field of the screen has focus: nothing was typed."""


_device_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def device_lock(serial: str) -> threading.Lock:
    """One action at a time per device in this process (the lease keeps other drivers out)."""
    with _locks_guard:
        return _device_locks.setdefault(serial, threading.Lock())


@dataclass
class Connected:
    device: adbutils.AdbDevice
    adb_server: str
    facts: DeviceFacts


def connect(serial: str, adb_server: str | None = None) -> Connected:
    device, server = find_device(serial, adb_server)
    return Connected(device, server, device_facts(device, server))


@lru_cache(maxsize=64)
def _parsed(xml_sha256: str, xml: bytes) -> UITree | None:
    try:
        return parse_ui_xml(xml)
    except UIXmlError:
        return None


def ui_tree_of(screen: Screen) -> UITree | None:
    if screen.ui_xml is None:
        return None
    return _parsed(screen.ui_xml.sha256, read_blob(screen.ui_xml))


def check_focused_field(screen: Screen) -> None:
    """Refuse to type when the screen's UI XML shows no text field with focus.

    The text would reach no field (the step would record an action that did nothing), and on a
    phone its letters may act as an app's shortcuts. An XML that cannot be read is no reason to
    refuse. A person who knows better (an app whose XML does not report focus) types anyway.
    """
    tree = ui_tree_of(screen)
    if tree is None:
        return
    focused = [el for el in tree.elements if el.focused]
    if any(el.editable for el in focused):
        return
    # The innermost: the frames holding it report focus too.
    focused = focused[-1] if focused else None
    name = focused and (focused.text or focused.content_desc or focused.resource_id)
    what = "no text field on the device's screen has focus"
    if name:
        kind = focused.class_name.rsplit(".", 1)[-1] or "element"
        what += f" (its UI XML shows focus on a {kind}, {name!r})"
    raise NoFocusedField(
        f"Nothing was typed: {what}, so the text would go nowhere. "
        "Tap the text field first, or type anyway."
    )


def target_at(screen: Screen, fields: dict[str, Any]) -> dict[str, Any] | None:
    """The element of the screen's XML that a point action hits."""
    if "x" not in fields:
        return None
    tree = ui_tree_of(screen)
    element = tree.element_at(fields["x"], fields["y"]) if tree else None
    return element.to_target() if element else None


def screen_index(screen: Screen) -> int:
    """The screen's place among its trajectory's screens (their order in an export)."""
    return Screen.objects.filter(trajectory_id=screen.trajectory_id, pk__lt=screen.pk).count()


def _forget_screen(trajectory: Trajectory, screen_id: int, metadata: dict[str, Any]) -> None:
    """Delete a screen no step shows; evidence keeps naming the right screens by index."""
    gone = Screen.objects.filter(trajectory=trajectory, pk__lt=screen_id).count()
    if not Screen.objects.filter(pk=screen_id, steps__isnull=True).delete()[0]:
        return
    for target in MemoryTarget.objects.filter(trajectory=trajectory):
        if _shift_evidence(target.evidence, gone):
            target.save(update_fields=["evidence"])
    for parked in metadata.get("parked_memory_targets", []):
        _shift_evidence(parked.get("evidence") or {}, gone)


def _shift_evidence(evidence: dict[str, Any], gone: int) -> bool:
    index = evidence.get("screen")
    if not isinstance(index, int):
        return False
    if index == gone:
        del evidence["screen"]
    elif index > gone:
        evidence["screen"] = index - 1
    else:
        return False
    return True


def store_screen(trajectory: Trajectory, shot: Capture, settle: Settle | None = None) -> Screen:
    """The capture as a Screen; identical screenshots and XML are stored once (by sha256)."""
    xml = shot.xml.encode()
    blobs = put_blobs([(shot.png, "image/png"), (xml, "text/xml")])
    features: dict[str, Any] = {}
    tree = _parsed(hashlib.sha256(xml).hexdigest(), xml)
    if tree is not None:
        features["structure"] = tree.structure_signature()
    if settle is not None:
        features["settle_ms"] = settle.ms
        features["settle_timed_out"] = settle.timed_out
    return Screen.objects.create(
        trajectory=trajectory,
        screenshot=blobs[shot.sha256],
        ui_xml=blobs[hashlib.sha256(xml).hexdigest()],
        width=shot.width,
        height=shot.height,
        package=shot.package,
        activity=shot.activity,
        captured_at=shot.captured_at,
        features=features,
        visible_memory=shot.visible_memory or [],
    )


def _settled_capture(conn: Connected, timeout: float | None = None) -> tuple[Capture, Settle]:
    settle = wait_until_settled(conn.device, conn.facts, timeout=timeout)
    return capture(conn.device, conn.facts, settle), settle


# ------------------------------------------------------------------------------- start / stop


def do_start_recording(
    lease: Lease,
    task: Task,
    actor,
    conn: Connected | None = None,
    reset_seed: int | str | None = None,
    *,
    source: str = Source.RECORDED,
    recorder_name: str = "",
    reset_level: int = NATURAL_LEVEL,
):
    """A new trajectory of ``task`` on the leased device, with its first screen captured.

    ``source`` and ``recorder_name``: who drives it when it is not a person (an agent run
    passes no ``actor`` and names the agent).

    ``reset_seed``: on the virtual device, first reset every app to the data of that seed (the
    cart, notes and open screens of earlier recordings are gone). The seed the device is at,
    reset or not, goes into ``metadata["virtual_device"]``, so the memory variables of the
    recording can be regenerated. A virtual task is recorded in its version for that seed
    (its gold answer is the seed's). ``reset_level``: the difficulty level the reset poses the
    device's tasks at (STAMP's L1, L2 or L3; 3, the task alone, unless told), kept beside the
    seed when it is not 3.
    """
    seed = check_seed(reset_seed)
    if actor is not None:
        check_may_pose(actor, task, seed)
    if lease.trajectory_id and lease.trajectory.status == Status.RECORDING:
        raise RecordingError(
            f"Device {lease.serial} is already recording trajectory {lease.trajectory_id}."
        )
    conn = conn or connect(lease.serial, lease.adb_server)
    if seed is not None and not conn.facts.virtual:
        raise InvalidData(
            f"reset_seed: device {lease.serial} is not the virtual device; only the virtual "
            "device's apps can be reset to a seed."
        )
    env = None
    if seed is not None:
        env = reset_apps(conn.device, lease.serial, seed, reset_level)
    elif conn.facts.virtual:
        env = read_environment(conn.device, lease.serial)
    try:
        task = virtual_task_at_seed(task, conn)
        shot, settle = _settled_capture(conn)
    except DEVICE_ERRORS as exc:
        raise DeviceUnavailable(f"Device {lease.serial} did not answer: {exc}") from exc
    facts = conn.facts
    metadata: dict[str, Any] = {
        "recording": {"serial": lease.serial, "adb_server": conn.adb_server},
        "apps": list(task.apps),
    }
    if env is not None:
        # reset False: the apps went on from the last recording's state (same data, but a cart
        # or a note may already be there).
        metadata["virtual_device"] = {**env, "reset": seed is not None}
    if facts.virtual and task.uid.startswith(VIRTUAL_TASK_PREFIX):
        metadata["virtual_task"] = task_id = task.uid.split(":")[1]
        declared = next((t for t in _declared(conn, "tasks") if t["id"] == task_id), {})
        # Memory-World's task fields, as the device poses the task (its export carries them).
        metadata["virtual_task_spec"] = {
            name: declared[name]
            for name in ("guideline", "must_visit", "output_format")
            if name in declared
        }
    with transaction.atomic(durable=True):
        trajectory = Trajectory.objects.create(
            project=task.project,
            task=task,
            device_serial=lease.serial,
            device_model=facts.model,
            android_version=facts.android_version,
            screen_width=shot.width,
            screen_height=shot.height,
            density=facts.density,
            recorded_by=actor,
            recorder_name=recorder_name or actor.get_username(),
            source=source,
            status=Status.RECORDING,
            metadata=metadata,
            recorded_at=timezone.now(),
        )
        trajectory.final_screen = store_screen(trajectory, shot, settle)
        trajectory.save(update_fields=["final_screen"])
        Lease.objects.filter(pk=lease.pk).update(trajectory=trajectory)
        lease.trajectory = trajectory
        record_event(
            events.RECORDING_STARTED,
            actor=actor,
            trajectory=trajectory,
            obj=trajectory,
            after={
                "serial": lease.serial,
                "task": task.uid,
                **({"seed": env["seed"], "reset": seed is not None} if env else {}),
            },
        )
    return trajectory


def _without_id(label: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in label.items() if k != "id"}


def _park_memory_targets(
    metadata: dict[str, Any], targets: QuerySet[MemoryTarget], reason: str
) -> list[dict[str, Any]]:
    """Move memory targets into ``metadata["parked_memory_targets"]``: their key, value and
    evidence are kept there, so nothing typed is lost and the labels stay valid.

    A target marked on the current screen is encoded by the step not yet recorded; if that
    step never comes (the recording is interrupted), or the step it named is undone, the row
    would name a step that does not exist.
    """
    targets = list(targets)
    at = timezone.now().isoformat()
    parked = [{**_without_id(memory_target_dict(t)), "reason": reason, "at": at} for t in targets]
    if parked:
        metadata.setdefault("parked_memory_targets", []).extend(parked)
        MemoryTarget.objects.filter(pk__in=[t.pk for t in targets]).delete()
    return parked


def do_interrupt(trajectory: Trajectory, reason: str) -> bool:
    """Leave a recording ``interrupted`` with its steps; False when it was not recording."""
    with transaction.atomic(durable=True):
        return interrupt_recording(trajectory, reason)


def interrupt_recording(trajectory: Trajectory, reason: str) -> bool:
    """:func:`do_interrupt` inside the caller's transaction: a lease that ends under a
    recording interrupts it in the same commit."""
    locked = lock_row(trajectory)
    if locked.status != Status.RECORDING:
        return False
    steps = locked.step_count

    def change(metadata: dict[str, Any]) -> None:
        metadata["interruption"] = {
            "at": timezone.now().isoformat(),
            "reason": reason,
            "steps": steps,
        }
        pending = MemoryTarget.objects.filter(trajectory=trajectory, encode_step=steps)
        _park_memory_targets(metadata, pending, "the recording was interrupted")

    update_metadata(trajectory, change, status=Status.INTERRUPTED)
    Lease.objects.filter(trajectory=trajectory).update(trajectory=None)
    record_event(
        events.TRAJECTORY_INTERRUPTED,
        trajectory=trajectory,
        obj=trajectory,
        before={"status": Status.RECORDING},
        after={"status": Status.INTERRUPTED, "reason": reason},
    )
    return True


def do_resume_recording(lease: Lease, trajectory: Trajectory, actor, conn: Connected | None = None):
    """Go on recording an interrupted trajectory on the leased device, from its current screen."""
    if trajectory.status != Status.INTERRUPTED:
        raise RecordingError(
            f"Only an interrupted trajectory can be resumed; this one is {trajectory.status}."
        )
    if lease.trajectory_id and lease.trajectory_id != trajectory.pk:
        if lease.trajectory.status == Status.RECORDING:
            raise RecordingError(f"Device {lease.serial} is recording another trajectory.")
    conn = conn or connect(lease.serial, lease.adb_server)
    try:
        shot, settle = _settled_capture(conn)
    except DEVICE_ERRORS as exc:
        raise DeviceUnavailable(f"Device {lease.serial} did not answer: {exc}") from exc
    if (shot.width, shot.height) != (trajectory.screen_width, trajectory.screen_height):
        raise RecordingError(
            f"This trajectory was recorded at {trajectory.screen_width}x"
            f"{trajectory.screen_height}; device {lease.serial} shows {shot.width}x{shot.height}."
        )
    env = read_environment(conn.device, lease.serial) if conn.facts.virtual else None
    with transaction.atomic(durable=True):
        locked = lock_row(trajectory)
        if locked.status != Status.INTERRUPTED:
            raise RecordingError("Someone else resumed this trajectory first.")

        def change(metadata: dict[str, Any]) -> None:
            resume = {"at": timezone.now().isoformat(), "step": locked.step_count}
            resume["serial"] = lease.serial
            if env is not None:  # a different seed here means other memory variables
                resume["seed"] = env["seed"]
            metadata.setdefault("resumes", []).append(resume)
            metadata["recording"] = {"serial": lease.serial, "adb_server": conn.adb_server}

        screen = store_screen(trajectory, shot, settle)
        update_metadata(trajectory, change, status=Status.RECORDING, final_screen=screen)
        Lease.objects.filter(pk=lease.pk).update(trajectory=trajectory)
        lease.trajectory = trajectory
        record_event(
            events.RECORDING_RESUMED,
            actor=actor,
            trajectory=trajectory,
            obj=trajectory,
            before={"status": Status.INTERRUPTED},
            after={"status": Status.RECORDING, "step": trajectory.step_count},
        )
    return trajectory


# ------------------------------------------------------------------------------------- steps


def check_recording(trajectory: Trajectory) -> None:
    if trajectory.status == Status.INTERRUPTED:
        reason = trajectory.metadata.get("interruption", {}).get("reason", "")
        raise RecordingError(
            f"This trajectory was interrupted ({reason}); resume it to go on recording."
        )
    if trajectory.status != Status.RECORDING:
        raise RecordingError(f"This trajectory is not being recorded (it is {trajectory.status}).")


def _current_screen(trajectory: Trajectory) -> Screen:
    screen = (
        Screen.objects.select_related("screenshot", "ui_xml")
        .filter(pk=trajectory.final_screen_id)
        .first()
    )
    if screen is None:
        raise RecordingError("This trajectory has no current screen; resume it to capture one.")
    return screen


def _save_step(
    trajectory: Trajectory,
    before: Screen,
    action_type: str,
    fields: dict[str, Any],
    target: dict[str, Any] | None,
    actor,
    *,
    sent_at=None,
    settled_at=None,
    after: Capture | None = None,
    settle: Settle | None = None,
    text: dict[str, str] | None = None,
) -> Step:
    index = trajectory.step_count
    with transaction.atomic(durable=True):
        after_screen = store_screen(trajectory, after, settle) if after is not None else before
        updated = Trajectory.objects.filter(
            pk=trajectory.pk, status=Status.RECORDING, step_count=index
        ).update(step_count=index + 1, final_screen=after_screen, updated_at=timezone.now())
        if not updated:
            raise RecordingError("Another step was recorded at the same time; reload the page.")
        step = Step.objects.create(
            trajectory=trajectory,
            index=index,
            screen=before,
            action_type=action_type,
            action=fields,
            target=target,
            action_sent_at=sent_at,
            settled_at=settled_at,
            **(text or {}),
        )
        trajectory.step_count, trajectory.final_screen = index + 1, after_screen
        record_event(
            events.STEP_RECORDED,
            actor=actor,
            trajectory=trajectory,
            obj=step,
            after={"index": index, "action": {"type": action_type, **fields}, **(text or {})},
        )
    return step


def app_label(trajectory: Trajectory, package: str) -> str:
    """The name of the app ``package`` as the device shows it, where the device said it (the
    virtual device's apps, kept in the trajectory's metadata); empty when unknown."""
    apps = trajectory.metadata.get("virtual_device", {}).get("apps", [])
    return next((a.get("label", "") for a in apps if a.get("package") == package), "")


STEP_TEXT = ("thought", "summary", "memory")


def record_step(
    trajectory: Trajectory,
    action: Any,
    actor,
    conn: Connected | None = None,
    *,
    text: dict[str, str] | None = None,
    require_focus: bool = False,
) -> Step:
    """Execute a canonical action on the trajectory's device and record it as the next step.

    ``text``: the step's thought, summary and memory as its driver wrote them with the action
    (an agent's output), stored with the step. ``require_focus``: text is typed only when the
    current screen's UI XML shows a text field with focus (:func:`check_focused_field`), as the
    console asks for a person's steps; agents and API clients have what they type recorded as
    they typed it.

    The returned step carries ``timings`` (ms: action, settle, capture, store), not stored.
    """
    action_type, fields = check_action(action)
    text = {name: str(value) for name, value in (text or {}).items() if value}
    unknown = set(text) - set(STEP_TEXT)
    if unknown:
        raise InvalidData(
            f"text: {sorted(unknown)[0]!r} is not a step's text (known: thought, summary, memory)"
        )
    check_recording(trajectory)
    if action_type == ActionType.OPEN_APP and not fields.get("app_label"):
        label = app_label(trajectory, fields["package"])
        if label:
            fields = {**fields, "app_label": label}
    before = _current_screen(trajectory)
    check_point_on_screen(fields, before.width, before.height)
    if require_focus and action_type == ActionType.TYPE:
        check_focused_field(before)
    target = target_at(before, fields)
    if action_type in NO_DEVICE_ACTIONS:
        step = _save_step(trajectory, before, action_type, fields, target, actor, text=text)
        step.timings = {}
        return step

    serial = trajectory.device_serial
    server = trajectory.metadata.get("recording", {}).get("adb_server")
    with device_lock(serial):
        try:
            conn = conn or connect(serial, server)
            t0 = time.perf_counter()
            sent_at = timezone.now()
            execute_action(conn.device, action_type, fields, conn.facts)
            t1 = time.perf_counter()
            settle = wait_until_settled(conn.device, conn.facts)
            t2 = time.perf_counter()
            shot = capture(conn.device, conn.facts, settle)
            t3 = time.perf_counter()
            remember_frame(serial, shot.png, shot.version)
        except (DeviceUnavailable, CaptureError, *DEVICE_ERRORS) as exc:
            reason = f"device {serial} disconnected: {exc}"
            do_interrupt(trajectory, reason)
            raise DeviceGone(
                f"Device {serial} is gone; the trajectory is interrupted with its "
                f"{trajectory.step_count} recorded steps kept. The last {action_type} action "
                "may have reached the device but was not recorded."
            ) from exc
        step = _save_step(
            trajectory,
            before,
            action_type,
            fields,
            target,
            actor,
            sent_at=sent_at,
            settled_at=settle.at,
            after=shot,
            settle=settle,
            text=text,
        )
        t4 = time.perf_counter()
    step.timings = {
        "action_ms": round((t1 - t0) * 1000, 1),
        "settle_ms": round((t2 - t1) * 1000, 1),
        "capture_ms": round((t3 - t2) * 1000, 1),
        "store_ms": round((t4 - t3) * 1000, 1),
    }
    return step


def grade_answer(trajectory: Trajectory, answer: str) -> dict[str, Any] | None:
    """Whether the answer is right: the virtual device grades its own tasks, else the gold."""
    virtual_task = trajectory.metadata.get("virtual_task")
    if virtual_task:
        try:
            conn = connect(trajectory.device_serial)
            out = conn.device.shell(["waypoint", "grade", virtual_task, answer], timeout=10)
            if out.strip() in ("success", "failure"):
                return {"correct": out.strip() == "success", "by": "virtual device"}
        except (DeviceUnavailable, *DEVICE_ERRORS):
            pass
    task = trajectory.task
    if not task.gold_answer:
        return None
    correct = answer_matches(task.grading_rule, task.gold_answer, answer)
    return {"correct": correct, "by": f"gold answer ({task.grading_rule})"}


def do_finish_recording(
    trajectory: Trajectory, actor, *, status: str = "success", answer: str | None = None
) -> Trajectory:
    """End the recording with an optional answer step and a terminate step; grade the answer."""
    check_recording(trajectory)
    if answer is not None and answer.strip():
        record_step(trajectory, {"type": ActionType.ANSWER, "text": answer}, actor)
    record_step(trajectory, {"type": ActionType.TERMINATE, "status": status}, actor)
    return do_end_recording(trajectory, actor, status=status, answer=answer)


def do_end_recording(
    trajectory: Trajectory,
    actor,
    *,
    status: str = "success",
    answer: str | None = None,
    step_memory_from_environment: bool = True,
) -> Trajectory:
    """End the recording as it stands (its steps already recorded): grade the answer, hand
    the trajectory to annotation and label its memory from the environment.

    ``step_memory_from_environment`` off: only memory targets are labelled, the steps keep the
    memory their driver wrote (an agent's, which its M-Acc is scored on), empty or not.
    """
    check_recording(trajectory)
    outcome = Outcome.SUCCESS if status == "success" else Outcome.FAILURE
    graded = None
    if answer is not None and answer.strip():
        graded = grade_answer(trajectory, answer)
        if graded is not None:
            outcome = Outcome.SUCCESS if graded["correct"] else Outcome.FAILURE

    def change(metadata: dict[str, Any]) -> None:
        if answer is not None and answer.strip():
            metadata["answer"] = answer
            if graded is not None:
                metadata["grade"] = graded

    with transaction.atomic(durable=True):
        update_metadata(trajectory, change, status=Status.ANNOTATING, outcome=outcome)
        Lease.objects.filter(trajectory=trajectory).update(trajectory=None)
        record_event(
            events.RECORDING_FINISHED,
            actor=actor,
            trajectory=trajectory,
            obj=trajectory,
            before={"status": Status.RECORDING},
            after={"status": Status.ANNOTATING, "outcome": outcome, "grade": graded},
        )
    if "virtual_device" in trajectory.metadata:
        do_label_memory_from_environment(trajectory, step_memory=step_memory_from_environment)
    return trajectory


# ------------------------------------------------------------------- labels while recording


def do_undo_last_step(trajectory: Trajectory, actor) -> Step:
    """Forget the last step's record. The device is NOT undone: it stays where it is now.

    Removing the step is a recording action (``step.undone``, with the labels the step had);
    what the labels said about it is one label edit of the protocol (``labels.step_undone``):
    values encoded by the undone step are set aside and its index leaves the retrieve steps,
    audited before and after, and undoable or revertable from the console and the workspace.
    """
    check_recording(trajectory)
    with transaction.atomic(durable=True):
        locked = lock_row(trajectory)
        step = Step.objects.filter(trajectory=locked).order_by("-index").first()
        if step is None:
            raise RecordingError("There is no step to undo.")
        if locked.step_count != step.index + 1:
            raise RecordingError("Another step was recorded at the same time; reload the page.")
        index, screen_id, step_id = step.index, step.screen_id, step.pk
        removed = {"type": step.action_type, **step.action}
        encoded = list(
            MemoryTarget.objects.filter(trajectory=trajectory, encode_step=index).values_list(
                "pk", flat=True
            )
        )
        # The steps change: a new version, and label edits of the old steps can no longer be
        # undone (they could put labels back on a step that is not the same any more).
        bump(trajectory, locked, step_count=index)
        forget_undo(trajectory)

        def forget_step(metadata: dict[str, Any]) -> None:
            metadata.setdefault("undone_steps", []).append(
                {"index": index, "action": removed, "at": timezone.now().isoformat()}
            )
            step.delete()
            # Numbers that follow the steps and screens, not label decisions: values marked on
            # the current screen are encoded by the step that takes the undone one's index,
            # and evidence names screens by their place.
            MemoryTarget.objects.filter(trajectory=trajectory, encode_step=index + 1).update(
                encode_step=index
            )
            if screen_id != trajectory.final_screen_id:
                _forget_screen(trajectory, screen_id, metadata)

        update_metadata(trajectory, forget_step)
        record_event(
            events.STEP_UNDONE,
            actor=actor,
            trajectory=trajectory,
            object_type="Step",
            object_id=step_id,
            before={"index": index, "action": removed, "labels": step_dict(step)},
        )

        def unlabel(locked: Trajectory) -> None:
            # Values marked on the undone step's screen would name a step that is gone (or
            # the next one, on another screen): kept aside, nothing typed is lost.
            parked = MemoryTarget.objects.filter(trajectory=locked, pk__in=encoded)
            update_metadata(
                trajectory,
                lambda metadata: _park_memory_targets(metadata, parked, "its step was undone"),
            )
            for target in MemoryTarget.objects.filter(trajectory=locked):
                if index in target.retrieve_steps:
                    target.retrieve_steps = [i for i in target.retrieve_steps if i != index]
                    target.save(update_fields=["retrieve_steps"])

        apply_edit(
            trajectory,
            actor,
            trajectory.version,
            events.STEP_UNDONE_LABELS,
            "memory_targets",
            unlabel,
            object_type="MemoryTarget",
            statuses=RECORDING,
        )
    return step


def do_update_step_labels(
    trajectory: Trajectory, actor, expected_version: Any, index: Any, **changes: Any
) -> Step:
    """Thought, summary, memory and trainable of a step, edited while recording."""
    return edits.do_update_step(
        trajectory, actor, expected_version, index, changes, statuses=RECORDING
    )


def do_add_note(trajectory: Trajectory, actor, expected_version: Any, text: Any) -> dict[str, Any]:
    """A note between steps (kept in the trajectory's metadata, before the next step)."""
    return edits.do_add_note(trajectory, actor, expected_version, text, statuses=RECORDING)


def text_in_box(tree: UITree, bounds: list[int]) -> str:
    """The text a box drawn on the screen holds: the texts (or content descriptions) of the
    elements inside it, top to bottom and left to right, without the containers' repeats."""
    x1, y1, x2, y2 = bounds
    inside = [
        el
        for el in tree.elements
        if (el.text or el.content_desc)
        and el.area > 0
        and x1 <= el.bounds[0]
        and y1 <= el.bounds[1]
        and el.bounds[2] <= x2
        and el.bounds[3] <= y2
    ]
    texts: list[str] = []
    for el in sorted(inside, key=lambda el: (el.bounds[1], el.bounds[0])):
        text = (el.text or el.content_desc).strip()
        if text and not any(text in seen for seen in texts):
            texts.append(text)
    return " ".join(texts)


def memory_evidence(screen: Screen, bounds: list[int], source: str) -> dict[str, Any]:
    """Where a value marked on the recording's current screen is: the marked box, the screen,
    and, when the box matches an element, that element's node."""
    # The screen by its place in the trajectory, as steps name theirs: never a row id, which
    # would point at another trajectory's screen after an export and import.
    evidence: dict[str, Any] = {
        "bounds": bounds,
        "source": source,
        "screen": screen_index(screen),
    }
    tree = ui_tree_of(screen)
    if tree is not None:
        node = next((el for el in tree.elements if list(el.bounds) == bounds), None)
        if node is not None:
            evidence["node"] = node.to_target()
    return evidence


def do_mark_memory_target(
    trajectory: Trajectory,
    actor,
    expected_version: Any,
    *,
    key: str,
    value: str,
    bounds: list[int],
    source: str = "box",
) -> MemoryTarget:
    """A value on the current screen that must be remembered; encoded by the next step.

    An empty value is the marked element's text (or content description), or for a box, the
    text of the elements inside it. Marking a key already marked on this screen again
    replaces that mark (a second try), instead of adding a duplicate.
    """
    check_recording(trajectory)
    bounds = check_bounds(bounds, "bounds")
    screen = _current_screen(trajectory)
    evidence = memory_evidence(screen, bounds, source)
    if not value:
        value = marked_text(trajectory, evidence)
    same = MemoryTarget.objects.filter(
        trajectory=trajectory, key=str(key).strip(), encode_step=trajectory.step_count
    ).first()
    if same is not None and str(key).strip():
        return edits.do_update_memory_target(
            trajectory,
            actor,
            expected_version,
            same.pk,
            {"value": value, "evidence": evidence},
            statuses=RECORDING,
        )
    return edits.do_add_memory_target(
        trajectory,
        actor,
        expected_version,
        key=key,
        value=value,
        encode_step=trajectory.step_count,
        evidence=evidence,
        statuses=RECORDING,
    )


def do_edit_memory_target(
    trajectory: Trajectory, actor, expected_version: Any, target_id: Any, *, key: str, value: str
) -> MemoryTarget:
    """Change a memory target's key and value while recording; an empty value is the text of
    the element it was marked on, as when marking."""
    check_recording(trajectory)
    target = MemoryTarget.objects.filter(trajectory=trajectory, pk=_int_or_none(target_id)).first()
    if target is not None and not value:
        value = marked_text(trajectory, target.evidence or {}) or target.value
    return edits.do_update_memory_target(
        trajectory,
        actor,
        expected_version,
        target_id,
        {"key": key, "value": value},
        statuses=RECORDING,
    )


def marked_text(trajectory: Trajectory, evidence: dict[str, Any]) -> str:
    """The text of what was marked: the element's, else the text inside the marked box on the
    screen it was marked on."""
    node = evidence.get("node") or {}
    if node.get("text") or node.get("content_desc"):
        return node.get("text") or node.get("content_desc")
    index, bounds = evidence.get("screen"), evidence.get("bounds")
    if not isinstance(index, int) or not bounds:
        return ""
    screen = (
        Screen.objects.filter(trajectory=trajectory)
        .select_related("ui_xml")
        .order_by("pk")[index : index + 1]
        .first()
    )
    tree = ui_tree_of(screen) if screen is not None else None
    return text_in_box(tree, bounds) if tree is not None else ""


def do_delete_recorded_memory_target(
    trajectory: Trajectory, actor, expected_version: Any, target_id: Any
) -> None:
    check_recording(trajectory)
    edits.do_delete_memory_target(
        trajectory, actor, expected_version, target_id, statuses=RECORDING
    )


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------------------- tasks

VIRTUAL_TASK_PREFIX = "virtual:"
VIRTUAL_TASK_SALT = "waypoint.virtual-task-uid"


def _declared(conn: Connected, what: str) -> list[dict[str, Any]]:
    """``waypoint tasks`` or ``waypoint vars`` of the virtual device, as JSON."""
    return json.loads(conn.device.shell(["waypoint", what], timeout=10) or "[]")


def _declared_tasks(conn: Connected) -> list[dict[str, Any]]:
    """The virtual device's tasks, each with its variables' descriptions (``_variables``)."""
    tasks = _declared(conn, "tasks")
    variables = _declared(conn, "vars")
    for task in tasks:
        task["_variables"] = variables
    return tasks


def declared_values(conn: Connected) -> dict[str, str]:
    """Every memory variable of the virtual device and its value at the device's seed now
    (``waypoint vars``), for the runner that scores an agent; never given to an agent."""
    return {str(v["ref"]): str(v.get("value", "")) for v in _declared(conn, "vars")}


def virtual_task_named(project: Project, conn: Connected, task_id: str) -> Task:
    """The project's task of the virtual device's task ``task_id`` (a template) as the device
    poses it at its seed now."""
    item = next((i for i in _declared_tasks(conn) if i["id"] == task_id), None)
    if item is None:
        raise RecordingError(f"Device {conn.device.serial} has no task {task_id!r}.")
    return _virtual_task(project, _virtual_task_record(item))


def _virtual_task_record(item: dict[str, Any]) -> TaskRecord:
    """A task of the virtual device at its current seed: the uid ends in a digest of the gold
    answer, which the seed decides, so each seed's version of a task is a task of its own. The
    digest is keyed by the server's secret (Django's ``salted_hmac``): every member sees a uid,
    and a plain hash of a four-digit code is undone by trying the 10,000 codes."""
    gold_hash = salted_hmac(VIRTUAL_TASK_SALT, item["gold"]).hexdigest()[:8]
    # At L1 and L2 (another instruction, maybe another gold) the level is part of the uid, and
    # the task's difficulty; at L3 both read as before levels were posed.
    level = item.get("level", NATURAL_LEVEL)
    at_level = f"L{level}:" if level != NATURAL_LEVEL else ""
    return TaskRecord(
        uid=f"{VIRTUAL_TASK_PREFIX}{item['id']}:{at_level}{gold_hash}",
        difficulty=f"L{level}" if level != NATURAL_LEVEL else "",
        goal=item["instruction"],
        apps=item.get("apps", []),
        gold_answer=item["gold"],
        grading_rule=item.get("rule", "exact"),
        memory_items=memory_items(item["variables"], item.get("_variables", [])),
    )


def _virtual_task(project: Project, record: TaskRecord) -> Task:
    """The project's task of a virtual-device task, with the grading rule the device grades it
    by: tasks imported before the rule was kept were stored as ``exact``, and the evaluator and
    the exports would grade them otherwise than the device did."""
    task = get_or_create_task(project, record)
    changed = {
        name: getattr(record, name)
        for name in ("grading_rule", "memory_items")
        if getattr(task, name) != getattr(record, name)
    }
    if changed:  # what the device says of its task now (tasks kept before it said so)
        Task.objects.filter(pk=task.pk).update(**changed)
        for name, value in changed.items():
            setattr(task, name, value)
    return task


def check_may_pose(actor, task: Task, seed: int | None) -> None:
    """In a project that hides its gold, the virtual device's own tasks (a benchmark's
    instances) and a reset to a chosen seed are for those who may see the gold: a person who
    poses an instance learns its gold answer from the device. Written tasks stay open."""
    if seed is not None or task.uid.startswith(VIRTUAL_TASK_PREFIX):
        check_can_see_gold(actor, task.project, POSE_VIRTUAL)


POSE_VIRTUAL = "pose the virtual device's tasks or reset it to a seed"


def do_import_virtual_tasks(project: Project, conn: Connected, actor=None) -> list[Task]:
    """The virtual device's tasks (instruction, gold answer) as tasks of the project;
    ``actor``, when a person asks, must be one who may see the project's gold."""
    if actor is not None:
        check_can_see_gold(actor, project, POSE_VIRTUAL)
    if not conn.facts.virtual:
        return []
    return [_virtual_task(project, _virtual_task_record(i)) for i in _declared_tasks(conn)]


def virtual_task_at_seed(task: Task, conn: Connected) -> Task:
    """``task`` as the virtual device poses it now: after a reset to another seed, the same
    instruction has another gold answer (and so is another task of the project)."""
    if not (conn.facts.virtual and task.uid.startswith(VIRTUAL_TASK_PREFIX)):
        return task
    task_id = task.uid.split(":")[1]
    item = next((i for i in _declared_tasks(conn) if i["id"] == task_id), None)
    if item is None:
        return task  # not on this device: recorded as asked, graded by its stored gold answer
    return _virtual_task(task.project, _virtual_task_record(item))
