"""The heuristic proposer's memory targets on trajectories recorded from the virtual device,
whose memory variables are known (the screens' ``visible_memory``, from ``waypoint
visible-vars``): precision and recall against the declared variables."""

from __future__ import annotations

import pytest

from annotate.proposers import HeuristicProposer, episode_of_trajectory
from annotate.proposers.scoring import Score
from devices.services import do_finish_recording, do_start_recording, do_take_device, record_step
from tests.devices.test_recording import current, element
from trajectories.models import Step
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task

pytestmark = pytest.mark.django_db

NOTES, ANSWERS = "com.waypoint.notes", "com.waypoint.answers"
CHATTER, FRESHCART = "com.waypoint.chatter", "com.waypoint.freshcart"


ANSWER = [("tap", f"{ANSWERS}:id/task_noah_meeting_time"), ("tap", f"{ANSWERS}:id/answer")]


def scenarios(var):
    return {
        "wifi-password": (
            [("open", NOTES), ("tap", f"{NOTES}:id/note_1"), ("open", ANSWERS)]
            + ANSWER
            + [("type", var("notes.wifi_password"))]
            + [("tap", f"{ANSWERS}:id/submit")],
            var("notes.wifi_password"),
        ),
        "noah-meeting-time": (
            [("open", CHATTER), ("tap", f"{CHATTER}:id/chat_noah"), ("open", ANSWERS)]
            + ANSWER
            + [("type", var("chatter.meeting_time"))]
            + [("tap", f"{ANSWERS}:id/submit")],
            var("chatter.meeting_time"),
        ),
        "order-number-to-mia": (
            [("open", FRESHCART), ("tap", f"{FRESHCART}:id/tab_orders"), ("open", CHATTER)]
            + [("tap", f"{CHATTER}:id/chat_mia"), ("tap", f"{CHATTER}:id/message_input")]
            + [("type", f"My last order is {var('freshcart.order_number')}")]
            + [("tap", f"{CHATTER}:id/send"), ("back", None)],
            var("freshcart.order_number"),
        ),
        "kettle-price-note": (
            [("open", FRESHCART), ("tap", f"{FRESHCART}:id/product_kettle"), ("back", None)]
            + [("open", NOTES), ("tap", f"{NOTES}:id/new_note")]
            + [("tap", f"{NOTES}:id/note_title"), ("type", "Kettle")]
            + [("tap", f"{NOTES}:id/note_body")]
            + [("type", f"Brew Pro kettle {var('freshcart.price_kettle')}")]
            + [("tap", f"{NOTES}:id/save_note")],
            None,
        ),
    }


def record(adb_servers, device, alice, project, name, moves, answer):
    for package in (NOTES, ANSWERS, CHATTER, FRESHCART):
        device.shell(["am", "force-stop", package])
    device.keyevent("HOME")
    task = get_or_create_task(project, TaskRecord(uid=name, goal=name))
    lease = do_take_device(device.serial, adb_servers[0], alice)
    trajectory = do_start_recording(lease, task, alice)
    for kind, arg in moves:
        if kind == "open":
            action = {"type": "open_app", "package": arg}
        elif kind == "tap":
            x, y = element(current(trajectory), resource_id=arg).center
            action = {"type": "click", "x": x, "y": y}
        elif kind == "type":
            action = {"type": "type", "text": arg}
        else:
            action = {"type": "back"}
        record_step(trajectory, action, alice)
    do_finish_recording(trajectory, alice, answer=answer)
    from devices.services import do_release_device

    do_release_device(lease, alice)
    trajectory.refresh_from_db()
    return trajectory


def declared(trajectory):
    """The declared variables a later step types or answers, with the screens showing them."""
    steps = list(Step.objects.filter(trajectory=trajectory).select_related("screen"))
    steps.sort(key=lambda s: s.index)
    typed = [
        (s.index, s.action.get("text", "")) for s in steps if s.action_type in ("type", "answer")
    ]
    shown: dict[str, set[int]] = {}
    for s in steps:
        for v in s.screen.visible_memory:
            shown.setdefault(v["value"], set()).add(s.index)
    gold = {
        value: screens
        for value, screens in shown.items()
        if any(value in text and i > min(screens) for i, text in typed)
    }
    return gold


def test_mined_memory_targets_match_the_declared_variables(
    adb_servers, device, virtual_device, alice, project
):
    def var(ref):
        return virtual_device.catalog.variable(ref).value

    total = Score(0, 0, 0)
    for name, (moves, answer) in scenarios(var).items():
        trajectory = record(adb_servers, device, alice, project, name, moves, answer)
        gold = declared(trajectory)
        mined = HeuristicProposer().propose(episode_of_trajectory(trajectory)).payload
        right = {
            m["value"]
            for m in mined["memory_targets"]
            if m["encode_step"] in gold.get(m["value"], ())
        }
        score = Score(len(right), len(mined["memory_targets"]) - len(right), len(gold) - len(right))
        print(f"{name}: gold {sorted(gold)} mined {[m['value'] for m in mined['memory_targets']]}")
        total += score
    print(f"memory targets on the virtual apps: P {total.precision:.3f} R {total.recall:.3f}")
    assert total.tp >= 4
    assert total.precision >= 0.9 and total.recall >= 0.9
