"""Recording step by step through the real adb server to the virtual device."""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from devices.services import (
    DeviceGone,
    RecordingError,
    connect,
    discover_devices,
    do_add_note,
    do_finish_recording,
    do_import_virtual_tasks,
    do_interrupt,
    do_mark_memory_target,
    do_resume_recording,
    do_start_recording,
    do_take_device,
    do_undo_last_step,
    do_update_step_labels,
    record_step,
)
from devices.services.actions import CannotType, input_text_calls
from devices.services.recording import NoFocusedField, ui_tree_of
from devices.virtual import VirtualDevice
from tests.devices.conftest import free_port
from trajectories.models import AuditEvent, MemoryTarget, Status, Task, Trajectory
from trajectories.records import TaskRecord
from trajectories.services import get_or_create_task

pytestmark = pytest.mark.django_db


def element(screen, **attrs):
    """The first element of a stored screen's XML with these attributes."""
    for el in ui_tree_of(screen).elements:
        if all(getattr(el, k) == v for k, v in attrs.items()):
            return el
    raise AssertionError(f"no element with {attrs}")


@pytest.fixture
def task(project):
    return get_or_create_task(project, TaskRecord(uid="find-kettle", goal="Find the kettle"))


@pytest.fixture
def recording(adb_servers, device, alice, task):
    lease = do_take_device(device.serial, adb_servers[0], alice)
    return do_start_recording(lease, task, alice)


def current(trajectory):
    return Trajectory.objects.select_related("final_screen").get(pk=trajectory.pk).final_screen


def test_it_discovers_the_virtual_device_with_its_facts(adb_servers, device):
    (report,) = discover_devices()
    assert report.error == ""
    info = next(d for d in report.devices if d.serial == device.serial)
    assert info.state == "device"
    assert (info.facts.model, info.facts.android_version) == ("Waypoint Virtual", "14")
    assert (info.facts.width, info.facts.height, info.facts.density) == (540, 1200, 240)
    assert info.facts.virtual


def test_it_reports_an_unreachable_adb_server(settings):
    settings.ADB_SERVERS = [f"127.0.0.1:{free_port()}"]
    (report,) = discover_devices()
    assert report.devices == [] and "unreachable" in report.error


def test_it_records_a_trajectory_in_the_shop(recording, alice):
    trajectory = recording
    assert trajectory.status == Status.RECORDING
    assert (trajectory.device_model, trajectory.screen_width, trajectory.density) == (
        "Waypoint Virtual",
        540,
        240,
    )
    home = current(trajectory)
    assert home.package == "com.android.launcher3"

    step0 = record_step(
        trajectory, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice
    )
    store = current(trajectory)
    assert (store.package, store.activity) == ("com.waypoint.freshcart", ".MainActivity")
    assert step0.screen == home and step0.target is None
    assert step0.settled_at >= step0.action_sent_at

    kettle = element(store, resource_id="com.waypoint.freshcart:id/product_kettle")
    x, y = kettle.center
    step1 = record_step(trajectory, {"type": "click", "x": x, "y": y}, alice)
    assert step1.target["resource_id"] == "com.waypoint.freshcart:id/product_kettle"
    assert step1.action == {"x": x, "y": y}
    product = current(trajectory)
    title = element(product, resource_id="com.waypoint.freshcart:id/product_title")
    assert title.text == "Brew Pro Electric Kettle 1.7L"
    # the virtual device says which memory variables the screen shows, and where
    price = next(v for v in product.visible_memory if v["ref"] == "freshcart.price_kettle")
    assert len(price["bounds"]) == 4 and price["value"] in price["text"]

    record_step(trajectory, {"type": "swipe", "x": 270, "y": 900, "x2": 270, "y2": 400}, alice)
    record_step(trajectory, {"type": "back"}, alice)
    record_step(trajectory, {"type": "home"}, alice)
    back_home = current(trajectory)
    # identical screenshots are stored once (the launcher shows a clock: when its minute turned
    # between the two captures, the UI XML says so and the pictures rightly differ)
    same_screen = back_home.ui_xml_id == home.ui_xml_id
    assert (back_home.screenshot_id == home.screenshot_id) == same_screen

    steps = list(trajectory.steps.order_by("index"))
    assert [s.action_type for s in steps] == ["open_app", "click", "swipe", "back", "home"]
    for earlier, later in zip(steps, steps[1:], strict=False):
        assert later.screen.captured_at >= earlier.screen.captured_at
    assert all(s.screen.ui_xml_id for s in steps)
    assert all("settle_ms" in s.screen.features for s in steps[1:])
    kinds = list(AuditEvent.objects.filter(trajectory=trajectory).values_list("kind", flat=True))
    assert kinds.count("step.recorded") == 5


def test_it_types_any_unicode_and_shell_metacharacters(recording, alice, device):
    text = "Grüße, 東京 & ;|$HOME \"q\" 'x' `id` 100% a%sb 👍"
    record_step(recording, {"type": "open_app", "package": "com.waypoint.chatter"}, alice)
    mia = element(current(recording), resource_id="com.waypoint.chatter:id/chat_mia")
    record_step(recording, {"type": "click", "x": mia.center[0], "y": mia.center[1]}, alice)
    box = element(current(recording), resource_id="com.waypoint.chatter:id/message_input")
    record_step(recording, {"type": "click", "x": box.center[0], "y": box.center[1]}, alice)
    step = record_step(recording, {"type": "type", "text": text}, alice)
    typed = element(current(recording), resource_id="com.waypoint.chatter:id/message_input")
    assert typed.text == text
    assert step.action == {"text": text}


def test_a_person_types_only_into_a_focused_text_field(recording, alice, device):
    record_step(recording, {"type": "open_app", "package": "com.waypoint.chatter"}, alice)
    mia = element(current(recording), resource_id="com.waypoint.chatter:id/chat_mia")
    record_step(recording, {"type": "click", "x": mia.center[0], "y": mia.center[1]}, alice)
    screen = current(recording)
    refused = "Nothing was typed: no text field on the device's screen has focus"
    with pytest.raises(NoFocusedField, match=refused):
        record_step(recording, {"type": "type", "text": "hello"}, alice, require_focus=True)
    recording.refresh_from_db()
    assert recording.step_count == 2 and current(recording) == screen  # nothing sent, nothing kept

    box = element(screen, resource_id="com.waypoint.chatter:id/message_input")
    record_step(recording, {"type": "click", "x": box.center[0], "y": box.center[1]}, alice)
    record_step(recording, {"type": "type", "text": "hello"}, alice, require_focus=True)
    typed = element(current(recording), resource_id="com.waypoint.chatter:id/message_input")
    assert typed.text == "hello"


def test_an_agent_s_text_is_typed_and_recorded_focused_or_not(recording, alice):
    step = record_step(recording, {"type": "type", "text": "hello"}, alice)
    assert (step.index, step.action) == (0, {"text": "hello"})


def test_input_text_falls_back_per_character_class():
    assert list(input_text_calls("a b%sc\n;'x'")) == [
        ["input", "text", "a%sb%"],
        ["input", "text", "sc"],
        ["input", "keyevent", "KEYCODE_ENTER"],
        ["input", "text", ";'x'"],
    ]
    with pytest.raises(CannotType, match=r"cannot type 'é' \(U\+00E9\)"):
        list(input_text_calls("café"))


def animate_for(virtual_device, seconds: float) -> None:
    """Keep the screen changing for a while, as a slow screen does (an animation runs)."""
    virtual_device.call(
        virtual_device.phone.screen._eval,
        "document.querySelector('iframe.front').contentDocument.body.animate("
        f"[{{opacity: 1}}, {{opacity: 0.6}}], {{duration: {int(seconds * 1000)}}})",
    )


def test_a_slow_screen_is_recorded_once_it_settles(recording, alice, virtual_device):
    record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    animate_for(virtual_device, 1.0)
    step = record_step(recording, {"type": "wait", "duration_ms": 50}, alice)
    after = current(recording)
    assert step.timings["settle_ms"] >= 800
    assert after.features["settle_timed_out"] is False
    assert (step.settled_at - step.action_sent_at).total_seconds() >= 0.8


def test_settling_gives_up_at_the_timeout(recording, alice, virtual_device, settings):
    settings.WAYPOINT_SETTLE_TIMEOUT_MS = 400
    record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    animate_for(virtual_device, 1.2)
    record_step(recording, {"type": "wait", "duration_ms": 10}, alice)
    assert current(recording).features["settle_timed_out"] is True
    time.sleep(1)  # the animation ends before the next test


def test_labels_notes_undo_and_memory_targets_while_recording(recording, alice):
    step = record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    do_update_step_labels(
        recording, alice, recording.version, step.index, thought="Open the shop", trainable=False
    )
    step.refresh_from_db()
    assert (step.thought, step.trainable) == ("Open the shop", False)
    do_add_note(recording, alice, recording.version, "The shop opened slowly")
    assert recording.metadata["notes"][0]["before_step"] == 1

    box = element(current(recording), resource_id="com.waypoint.freshcart:id/product_kettle")
    target = do_mark_memory_target(
        recording,
        alice,
        recording.version,
        key="kettle",
        value="",
        bounds=list(box.bounds),
        source="element",
    )
    assert target.encode_step == 1 and target.evidence["node"]["resource_id"].endswith("kettle")
    # The row has no text of its own: the empty value is the text inside it, read in order.
    assert not (box.text or box.content_desc)
    assert target.value.startswith("Brew Pro Electric Kettle 1.7L") and "$" in target.value

    screen_now = current(recording)
    record_step(recording, {"type": "back"}, alice)
    undone = do_undo_last_step(recording, alice)
    assert undone.action_type == "back"
    recording.refresh_from_db()
    assert recording.step_count == 1 and recording.metadata["undone_steps"][0]["index"] == 1
    # the device is not undone: the next step starts from the screen it shows now
    assert recording.final_screen_id != screen_now.pk
    # the kettle was marked on the undone step's screen, which the trajectory no longer has:
    # the value is kept aside, not left naming a step that does not exist
    assert not MemoryTarget.objects.filter(trajectory=recording).exists()
    [parked] = recording.metadata["parked_memory_targets"]
    assert (parked["key"], parked["encode_step"], parked["reason"]) == (
        "kettle",
        1,
        "its step was undone",
    )
    # its screen went with the step: the evidence names no screen rather than another one
    assert "screen" not in parked["evidence"] and parked["evidence"]["bounds"] == list(box.bounds)


def test_a_value_marked_on_the_last_screen_of_an_interrupted_recording_is_kept_aside(
    recording, alice, tmp_path
):
    from formats.catalogue import export_trajectories, import_trajectories
    from trajectories.services import do_create_project

    record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    box = element(current(recording), resource_id="com.waypoint.freshcart:id/product_kettle")
    do_mark_memory_target(
        recording, alice, recording.version, key="kettle", value="", bounds=list(box.bounds)
    )
    assert do_interrupt(recording, "the device went away")
    recording.refresh_from_db()
    assert recording.status == Status.INTERRUPTED
    assert not MemoryTarget.objects.filter(trajectory=recording).exists()
    assert recording.metadata["parked_memory_targets"][0]["key"] == "kettle"
    # what remains is a valid trajectory: it exports and imports again
    export_trajectories(Trajectory.objects.filter(pk=recording.pk), tmp_path / "out")
    recording.delete()
    counts = import_trajectories(do_create_project("Again", alice), tmp_path / "out")
    assert counts["created"] == 1


def test_a_marked_value_names_its_screen_by_index_through_undo_export_and_import(
    recording, alice, tmp_path
):
    from formats.catalogue import export_trajectories, import_trajectories
    from trajectories.services import do_create_project

    def screen_of(target):
        return list(target.trajectory.screens.order_by("id"))[target.evidence["screen"]]

    record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    record_step(recording, {"type": "key", "keycode": "KEYCODE_DPAD_DOWN"}, alice)
    box = element(current(recording), resource_id="com.waypoint.freshcart:id/product_kettle")
    target = do_mark_memory_target(
        recording, alice, recording.version, key="kettle", value="", bounds=list(box.bounds)
    )
    assert target.evidence["screen"] == 2  # the third screen of this trajectory, not a row id
    assert screen_of(target) == current(recording)
    # Undoing the step before drops its screen: the evidence still names the screen it was on.
    do_undo_last_step(recording, alice)
    target.refresh_from_db()
    assert (target.encode_step, target.evidence["screen"]) == (1, 1)
    assert screen_of(target) == current(recording)
    record_step(recording, {"type": "click", "x": box.center[0], "y": box.center[1]}, alice)

    export_trajectories(Trajectory.objects.filter(pk=recording.pk), tmp_path / "out")
    recording.delete()
    import_trajectories(do_create_project("Again", alice), tmp_path / "out")
    imported = MemoryTarget.objects.select_related("trajectory").get()
    screen = screen_of(imported)
    assert screen == imported.trajectory.steps.get(index=imported.encode_step).screen
    assert element(screen, bounds=box.bounds).resource_id == box.resource_id


def test_a_tap_records_the_view_drawn_on_top_not_a_row_beneath_it(recording, alice):
    freshcart = "com.waypoint.freshcart:id/"
    record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    tab = element(current(recording), resource_id=freshcart + "tab_orders")
    # The tab bar's lower edge: the next product row runs on beneath the bar there.
    bottom = {"type": "click", "x": tab.center[0], "y": tab.bounds[3] - 4}
    assert record_step(recording, bottom, alice).target["resource_id"] == tab.resource_id
    home = element(current(recording), resource_id=freshcart + "tab_home")
    record_step(recording, {"type": "click", "x": home.center[0], "y": home.center[1]}, alice)
    swipe = {"type": "swipe", "x": 270, "y": 1000, "x2": 270, "y2": 300, "duration_ms": 300}
    record_step(recording, swipe, alice)
    # The list has scrolled under the sticky header: a tap on the header is on the header.
    title = element(current(recording), text="FreshCart")
    step = record_step(
        recording, {"type": "click", "x": title.center[0], "y": title.center[1]}, alice
    )
    assert (step.target["text"], step.target["class"]) == ("FreshCart", "android.widget.TextView")


def test_finishing_on_the_virtual_device_grades_the_answer(
    adb_servers, device, alice, project, virtual_device
):
    lease = do_take_device(device.serial, adb_servers[0], alice)
    # A task imported before rules were kept was stored as exact: importing again corrects it.
    tasks = do_import_virtual_tasks(project, connect(device.serial))
    graded_by_number = next(t for t in tasks if t.grading_rule == "number")
    Task.objects.filter(pk=graded_by_number.pk).update(grading_rule="exact")
    tasks = do_import_virtual_tasks(project, connect(device.serial))
    assert Task.objects.get(pk=graded_by_number.pk).grading_rule == "number"
    assert len(tasks) == len(virtual_device.catalog.tasks)
    # Each keeps the rule the device grades it by, so the evaluator grades it the same way.
    assert {t.uid.split(":")[1]: t.grading_rule for t in tasks} == {
        t.id: t.rule for t in virtual_device.catalog.tasks
    }
    assert {t.grading_rule for t in tasks} >= {"exact", "iexact", "number"}
    task = next(t for t in tasks if t.uid.startswith("virtual:freshcart-order-number:"))
    gold = virtual_device.catalog.task("freshcart-order-number").gold
    assert task.gold_answer == gold

    right = do_start_recording(lease, task, alice)
    do_finish_recording(right, alice, answer=gold)
    assert right.outcome == "success" and right.status == Status.ANNOTATING
    assert right.metadata["grade"] == {"correct": True, "by": "virtual device"}
    assert [s.action_type for s in right.steps.order_by("index")] == ["answer", "terminate"]

    wrong = do_start_recording(lease, task, alice)
    do_finish_recording(wrong, alice, answer="FC-000000")
    assert wrong.outcome == "failure" and wrong.metadata["grade"]["correct"] is False
    with pytest.raises(RecordingError, match="not being recorded"):
        record_step(wrong, {"type": "back"}, alice)


def test_a_device_that_disconnects_leaves_the_trajectory_interrupted_and_resumable(
    adb_server, adb_servers, alice, task
):
    port = free_port()
    phone = VirtualDevice(port=port, size="540x1200", seed=3, chromium_path=settings.CHROMIUM_PATH)
    phone.start()
    try:
        adb_server.connect(phone.serial)
        lease = do_take_device(phone.serial, adb_servers[0], alice)
        trajectory = do_start_recording(lease, task, alice)
        record_step(trajectory, {"type": "open_app", "package": "com.waypoint.notes"}, alice)
        phone.stop()
        with pytest.raises(DeviceGone, match="interrupted with its 1 recorded steps kept"):
            record_step(trajectory, {"type": "back"}, alice)
        trajectory.refresh_from_db()
        assert trajectory.status == Status.INTERRUPTED and trajectory.step_count == 1
        assert "disconnected" in trajectory.metadata["interruption"]["reason"]
        with pytest.raises(RecordingError, match="interrupted"):
            record_step(trajectory, {"type": "back"}, alice)

        phone = VirtualDevice(
            port=port, size="540x1200", seed=3, chromium_path=settings.CHROMIUM_PATH
        ).start()
        adb_server.run("disconnect", phone.serial)
        adb_server.connect(phone.serial)
        lease.refresh_from_db()
        do_resume_recording(lease, trajectory, alice)
        assert trajectory.status == Status.RECORDING
        step = record_step(trajectory, {"type": "home"}, alice)
        assert step.index == 1 and trajectory.metadata["resumes"][0]["step"] == 1
    finally:
        phone.stop()
        adb_server.run("disconnect", phone.serial)


def test_lease_holder_others_and_admin(adb_servers, device, alice, bob):
    from devices.services import LeaseConflict, check_driver, do_heartbeat, do_release_device

    server = adb_servers[0]
    do_take_device(device.serial, server, alice)
    with pytest.raises(LeaseConflict, match=f"Device {device.serial} is in use by alice until"):
        do_take_device(device.serial, server, bob)
    with pytest.raises(LeaseConflict, match="Take device .* alice drives it"):
        check_driver(device.serial, bob)
    with pytest.raises(LeaseConflict, match="only an admin of its project or a site admin"):
        do_release_device(device.serial, bob, force=True)
    assert do_heartbeat(device.serial, alice).holder == alice
    admin = get_user_model().objects.create_user("root", is_staff=True)
    assert do_release_device(device.serial, admin, force=True)
    assert do_take_device(device.serial, server, bob).holder == bob
    with pytest.raises(LeaseConflict, match="You do not hold"):
        do_heartbeat(device.serial, alice)


def test_an_expired_lease_is_free_and_interrupts_its_recording(recording, adb_servers, bob):
    from devices.models import Lease

    Lease.objects.filter(serial=recording.device_serial).update(expires_at="2000-01-01T00:00Z")
    lease = do_take_device(recording.device_serial, adb_servers[0], bob)
    assert lease.holder == bob and lease.trajectory is None
    recording.refresh_from_db()
    assert recording.status == Status.INTERRUPTED
    assert "the lease of alice expired" in recording.metadata["interruption"]["reason"]


# ------------------------------------------------------------ labels go through the edit protocol


def test_console_labels_are_the_workspace_edits_with_the_same_event_kinds(recording, alice):
    from trajectories import events
    from trajectories.labels import protocol

    record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    version = recording.version
    do_update_step_labels(recording, alice, version, 0, thought="Open the shop")
    do_add_note(recording, alice, version + 1, "The shop opened slowly")
    box = element(current(recording), resource_id="com.waypoint.freshcart:id/product_kettle")
    do_mark_memory_target(
        recording, alice, version + 2, key="kettle", value="", bounds=list(box.bounds)
    )
    assert recording.version == version + 3
    kinds = list(
        AuditEvent.objects.filter(trajectory=recording)
        .order_by("id")
        .values_list("kind", flat=True)
    )[-3:]
    assert kinds == [events.STEP_UPDATED, events.NOTE_ADDED, events.MEMORY_TARGET_ADDED]

    # each one is on the undo stack: after the recording, the workspace undoes them in turn
    do_finish_recording(recording, alice)
    recording.refresh_from_db()
    assert protocol.do_undo(recording, alice, recording.version)
    assert not MemoryTarget.objects.filter(trajectory=recording).exists()
    assert protocol.do_undo(recording, alice, recording.version)
    recording.refresh_from_db()
    assert recording.metadata.get("notes") == []
    assert protocol.do_undo(recording, alice, recording.version)
    assert recording.steps.get(index=0).thought == ""


def test_a_console_edit_of_an_older_version_is_refused_naming_who_changed_it(recording, alice, bob):
    from trajectories.labels.protocol import StaleVersion

    record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    seen = recording.version
    do_add_note(recording, alice, seen, "first")
    with pytest.raises(
        StaleVersion, match=f"alice changed this trajectory .*you edited version {seen}"
    ):
        do_update_step_labels(recording, alice, seen, 0, thought="late")
    with pytest.raises(StaleVersion):
        do_add_note(recording, alice, seen, "second")
    assert recording.steps.get(index=0).thought == ""
    assert [n["text"] for n in Trajectory.objects.get(pk=recording.pk).metadata["notes"]] == [
        "first"
    ]


def test_undoing_a_recorded_step_leaves_no_label_edit_to_undo_onto_another_step(recording, alice):
    from trajectories.labels import protocol

    record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    record_step(recording, {"type": "back"}, alice)
    do_update_step_labels(recording, alice, recording.version, 1, thought="Back to the list")
    assert protocol.undo_state(recording)["can_undo"]
    do_undo_last_step(recording, alice)
    record_step(recording, {"type": "home"}, alice)  # a new step 1
    assert protocol.undo_state(recording) == {"can_undo": False, "can_redo": False}
    assert recording.steps.get(index=1).thought == ""


def record_kettle_then_undo_the_step_that_encoded_it(recording, alice):
    """The kettle is marked on the shop's screen, the next step is taken, then undone."""
    record_step(recording, {"type": "open_app", "package": "com.waypoint.freshcart"}, alice)
    box = element(current(recording), resource_id="com.waypoint.freshcart:id/product_kettle")
    kettle = do_mark_memory_target(
        recording, alice, recording.version, key="kettle", value="", bounds=list(box.bounds)
    )
    record_step(recording, {"type": "back"}, alice)
    do_undo_last_step(recording, alice)
    assert not MemoryTarget.objects.filter(trajectory=recording).exists()
    return kettle


def test_a_step_undone_while_recording_shows_in_the_workspace_history_and_reverts(
    recording, alice, client
):
    from django.urls import reverse

    from trajectories import events

    kettle = record_kettle_then_undo_the_step_that_encoded_it(recording, alice)
    undone, labels = AuditEvent.objects.filter(trajectory=recording).order_by("-id")[:2][::-1]
    assert (undone.kind, undone.before["index"], undone.before["action"]) == (
        events.STEP_UNDONE,
        1,
        {"type": "back"},
    )
    assert labels.kind == events.STEP_UNDONE_LABELS and labels.actor == alice
    assert [m["key"] for m in labels.before["memory_targets"]] == ["kettle"]
    assert labels.after == {"memory_targets": []}

    do_finish_recording(recording, alice)
    client.force_login(alice)
    page = client.get(reverse("annotate-workspace", args=[recording.pk])).content.decode()
    start = page.index(f'data-event="{labels.pk}"')
    entry = page[start : page.index("    </li>\n", start)]
    assert "<b>alice</b> took the labels off an undone step" in entry
    assert "revert</button>" in entry and "<li>removed memory target “kettle”</li>" in entry

    recording.refresh_from_db()
    response = client.post(
        reverse("annotate-edit", args=[recording.pk, "revert"]),
        {"version": recording.version, "event": labels.pk},
    )
    assert response.status_code == 200
    back = MemoryTarget.objects.get(trajectory=recording)
    assert (back.pk, back.key, back.value, back.encode_step) == (
        kettle.pk,
        "kettle",
        kettle.value,
        1,
    )
    reverted = AuditEvent.objects.filter(trajectory=recording).latest("id")
    assert (reverted.kind, reverted.object_id) == (events.LABELS_REVERTED, str(labels.pk))


def test_the_console_undoes_the_labels_a_step_undo_took_off(recording, alice):
    from trajectories.labels import protocol
    from trajectories.labels.protocol import RECORDING

    kettle = record_kettle_then_undo_the_step_that_encoded_it(recording, alice)
    assert protocol.undo_state(recording) == {"can_undo": True, "can_redo": False}
    assert protocol.do_undo(recording, alice, recording.version, statuses=RECORDING)
    # encoded by the next step again, which is now the undone one's index
    back = MemoryTarget.objects.get(trajectory=recording)
    assert (back.key, back.value, back.encode_step) == ("kettle", kettle.value, 1)


def test_console_edits_without_a_version_are_refused(recording, alice):
    from trajectories.validation import InvalidData

    with pytest.raises(InvalidData, match="version: must be the integer version you edited"):
        do_add_note(recording, alice, None, "no version")


def test_finishing_keeps_a_note_added_from_another_request(recording, alice):
    """Metadata is read and written under the row lock, never from an older copy in memory."""
    other = Trajectory.objects.get(pk=recording.pk)
    do_add_note(other, alice, other.version, "added in another tab")
    do_finish_recording(recording, alice, answer="42")  # `recording` still has no note
    stored = Trajectory.objects.get(pk=recording.pk).metadata
    assert [n["text"] for n in stored["notes"]] == ["added in another tab"]
    assert stored["answer"] == "42"


def test_the_console_panel_says_to_reload_when_its_version_is_old(
    client, recording, alice, project_device
):
    client.force_login(alice)
    url = f"/devices/{project_device.serial}/note/"
    page = client.post(url, {"text": "one", "version": recording.version})
    assert "one" in page.content.decode()
    again = client.post(url, {"text": "two", "version": recording.version}).content.decode()
    assert "reload to see it" in again
    notes = Trajectory.objects.get(pk=recording.pk).metadata["notes"]
    assert [n["text"] for n in notes] == ["one"]
