"""Labelling any recorded step from the console: picking a frame of the filmstrip selects it,
and the label form edits that step through the edit protocol (versions, audit, undo)."""

from __future__ import annotations

from tests.conftest import shot
from tests.devices.console_pages import open_shop, start_recording
from tests.devices.test_console_browser import wait_steps
from trajectories import events
from trajectories.models import AuditEvent, Trajectory


def test_picking_an_earlier_frame_labels_that_step(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project)
    open_shop(page)
    page.click("text=Wait 1 s")
    wait_steps(page, 2)
    page.keyboard.press("h")
    wait_steps(page, 3)
    assert page.inner_text("#labels-form h3").startswith("Step 2")

    page.click("#step-0")
    page.wait_for_selector("#labels-form[data-step='0']")
    page.wait_for_selector("#step-0.selected")
    assert page.locator("#filmstrip .frame.selected").count() == 1
    assert "earlier step" in page.inner_text("#labels-form h3")
    page.fill("#labels-form textarea[name=thought]", "Open the shop to look for the kettle")
    page.fill("#labels-form input[name=summary]", "Opened FreshCart")
    page.click("#labels-form button[type=submit]")
    page.wait_for_selector("#recording .rec[data-version='2']")
    # The form still edits step 0, with what was saved.
    assert page.get_attribute("#labels-form", "data-step") == "0"
    assert page.input_value("#labels-form input[name=summary]") == "Opened FreshCart"
    shot(page, "console-label-earlier-step")
    page.set_viewport_size({"width": 1920, "height": 1080})
    shot(page, "console-label-earlier-step-1920")
    page.set_viewport_size({"width": 1440, "height": 900})

    # The keyboard picks a frame too.
    page.focus("#step-1")
    page.keyboard.press("Enter")
    page.wait_for_selector("#labels-form[data-step='1']")
    page.fill("#labels-form input[name=memory]", "nothing to carry yet")
    page.click("#labels-form button[type=submit]")
    page.wait_for_selector("#recording .rec[data-version='3']")

    trajectory = Trajectory.objects.get(task=task)
    steps = {s.index: s for s in trajectory.steps.all()}
    assert steps[0].thought == "Open the shop to look for the kettle"
    assert steps[0].summary == "Opened FreshCart"
    assert steps[1].memory == "nothing to carry yet"
    assert steps[2].thought == "" and steps[2].summary == ""
    edits = AuditEvent.objects.filter(trajectory=trajectory, kind=events.STEP_UPDATED)
    assert sorted(next(iter(e.after)) for e in edits) == ["step:0", "step:1"]

    # Undo takes back the last label edit (step 1's memory) and selects that step.
    page.click("#undo-labels-button")
    page.wait_for_selector("#recording .rec[data-version='4']")
    assert page.get_attribute("#labels-form", "data-step") == "1"
    assert page.input_value("#labels-form input[name=memory]") == ""
    trajectory.refresh_from_db()
    assert trajectory.steps.get(index=1).memory == ""
    assert trajectory.steps.get(index=0).summary == "Opened FreshCart"
    assert AuditEvent.objects.filter(trajectory=trajectory).latest("id").kind == (
        events.LABELS_UNDONE
    )

    # A new step selects the latest again.
    page.keyboard.press("b")
    wait_steps(page, 4)
    assert page.get_attribute("#labels-form", "data-step") == "3"


def test_a_label_form_of_an_older_version_is_refused(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    task = start_recording(page, live_server, device, project)
    open_shop(page)
    page.click("text=Wait 1 s")
    wait_steps(page, 2)
    page.click("#step-0")
    page.wait_for_selector("#labels-form[data-step='0']")
    # Someone else (another tab) saves first.
    from trajectories.labels.edits import do_update_step
    from trajectories.labels.protocol import RECORDING

    trajectory = Trajectory.objects.get(task=task)
    do_update_step(trajectory, trajectory.recorded_by, 1, 0, {"summary": "x"}, statuses=RECORDING)
    page.fill("#labels-form input[name=summary]", "mine")
    page.click("#labels-form button[type=submit]")
    page.wait_for_selector("#recording-error")
    assert "you edited version 1" in page.inner_text("#recording-error")
    assert page.get_attribute("#labels-form", "data-step") == "0"  # still on the step picked
    assert Trajectory.objects.get(task=task).steps.get(index=0).summary == "x"


def test_the_finish_form_says_how_the_answer_is_graded(
    transactional_db, live_server, adb_servers, device, project_device, project, browser
):
    """A price task is graded as a number: the recorder says so before Finish, so a sentence
    with the price is known to count."""
    from trajectories.records import TaskRecord
    from trajectories.services import get_or_create_task

    task = get_or_create_task(
        project,
        TaskRecord(
            uid="price",
            goal="Tell me the kettle's price",
            gold_answer="$91.50",
            grading_rule="number",
        ),
    )
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    start_recording(page, live_server, device, project, task=task)
    rule = page.inner_text("#finish-form #grading-rule")
    assert "same number" in rule and "“It costs $12.50” and “12.5” are the same" in rule
    assert page.get_attribute("#answer", "aria-describedby") == "grading-rule"
    assert "91.5" not in rule  # the rule, not the gold answer
    shot(page, "console-finish-grading-rule")
