"""The workspace in Chromium at the sizes annotators use: layout, screenshot room, keys."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from annotate.services import do_assign, do_review, do_submit
from tests.annotate.conftest import blank_record
from tests.conftest import shot
from tests.trajectories.builders import make_record
from trajectories.labels import edits
from trajectories.models import AnchorLink, AuditEvent
from trajectories.services import do_import_trajectory

SIZES = ((1440, 900), (1920, 1080))
LONG_COMMENT = (
    "The subgoal boundary is wrong here: the price was read on the previous screen, so the "
    "memory target should be encoded one step earlier, and the anchor content should name the "
    "exact price shown (12.50) rather than a paraphrase of the product page."
)


def open_page(browser, live_server, user, path, size=SIZES[0]):
    client = Client()
    client.force_login(user)
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    page.goto(live_server.url + path)
    return page


def shots(page, name: str) -> None:
    """Screenshots at both sizes annotators use (when WAYPOINT_TEST_SCREENSHOTS is set)."""
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        next_frame(page)  # the page has handled the resize (the screens fit the new height)
        shot(page, f"workspace-{name}-{width}x{height}")
    page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
    next_frame(page)


def next_frame(page) -> None:
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")


def box(page, selector):
    return page.locator(selector).first.bounding_box()


@pytest.fixture
def sent_back(project, alice, bob):
    """Six labelled steps, sent back to bob with a long review comment on step 1."""
    trajectory, _ = do_import_trajectory(project, make_record(steps=6, seed=5))
    do_assign(trajectory, bob, alice)
    do_submit(trajectory, bob, trajectory.version)
    do_review(
        trajectory, alice, trajectory.version, "send_back", [{"step": 1, "text": LONG_COMMENT}]
    )
    return trajectory


@pytest.mark.django_db(transaction=True)
def test_a_review_comment_leaves_the_layout_as_it_was(browser, live_server, sent_back, bob):
    page = open_page(browser, live_server, bob, f"/trajectories/{sent_back.pk}/workspace/?step=0")
    plain = {
        "stage": box(page, "#ws-main .stage")["width"],
        "panels": box(page, "#ws-main .panels")["width"],
        "height": page.evaluate("document.documentElement.scrollHeight"),
    }
    page.goto(f"{live_server.url}/trajectories/{sent_back.pk}/workspace/?step=1")
    page.wait_for_selector("#ws-main .stage .comment")
    stage = box(page, "#ws-main .stage")["width"]
    panels = box(page, "#ws-main .panels")["width"]
    height = page.evaluate("document.documentElement.scrollHeight")
    # The comment sits above the screens, which give up only its height.
    assert 0.85 * plain["stage"] <= stage <= plain["stage"] + 2
    assert plain["panels"] - 2 <= panels <= 1.2 * plain["panels"]
    comment = box(page, "#ws-main .stage .comment")
    screens = box(page, "#ws-main .screens")
    assert comment["y"] + comment["height"] <= screens["y"]
    assert screens["y"] + screens["height"] <= 900
    assert stage < 0.5 * 1440
    assert height < plain["height"] + 200, (height, plain["height"])
    assert page.locator("#ws-main .stage .comment").inner_text().endswith("product page.")
    shots(page, "review-comment")
    assert page.errors == []


@pytest.fixture
def blank_six(project, alice, bob):
    trajectory, _ = do_import_trajectory(project, blank_record(steps=8))
    do_assign(trajectory, bob, alice)
    return trajectory


@pytest.mark.django_db(transaction=True)
def test_five_quick_presses_of_j_move_five_steps(browser, live_server, blank_six, bob):
    page = open_page(browser, live_server, bob, f"/trajectories/{blank_six.pk}/workspace/")
    for _ in range(5):
        page.keyboard.press("j")
    page.wait_for_selector('#ws-main[data-step="5"]')
    page.keyboard.press("k")
    page.keyboard.press("k")
    page.keyboard.press("j")
    page.wait_for_selector('#ws-main[data-step="4"]')
    page.wait_for_timeout(300)  # nothing else is still on its way
    assert page.get_attribute("#ws-main", "data-step") == "4"
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_s_right_after_j_splits_at_the_new_step(browser, live_server, blank_six, bob):
    page = open_page(browser, live_server, bob, f"/trajectories/{blank_six.pk}/workspace/")
    page.keyboard.press("j")
    page.keyboard.press("s")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("s")
    page.wait_for_selector('#ws-status[data-version="3"]')
    page.wait_for_selector('#ws-main[data-step="3"]')
    starts = list(blank_six.subgoals.order_by("start").values_list("start", flat=True))
    assert starts == [0, 1, 3]  # the first split also closes the steps before it
    # A text typed right after t lands in the subgoal's text, not in the key commands.
    page.keyboard.press("k")
    page.keyboard.press("t")
    page.keyboard.type("Open the shop")
    page.keyboard.press("Escape")
    page.wait_for_selector('#ws-status[data-version="4"]')
    assert blank_six.subgoals.get(start=1).text == "Open the shop"
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_a_stale_save_names_the_subgoal_in_the_annotators_words(
    browser, live_server, labelled, bob
):
    page = open_page(browser, live_server, bob, f"/trajectories/{labelled.pk}/workspace/?step=2")
    second = labelled.subgoals.order_by("start")[1]
    # The same trajectory changed in another tab meanwhile.
    edits.do_update_step(labelled, bob, labelled.version, 0, {"summary": "elsewhere"})
    page.fill("#sg-text", "Pay for it")
    page.keyboard.press("Escape")
    page.wait_for_selector("#ws-flash .error")
    message = page.inner_text("#ws-flash")
    shots(page, "stale-save")
    assert "Your change was not saved: subgoal 2 (steps 1–2): intent “Pay for it”\n" in message
    assert f"'{second.pk}'" not in message and "subgoal =" not in message
    assert page.get_attribute("#ws-status", "data-version") == str(labelled.version)


def zoom_of(page) -> str:
    return page.eval_on_selector("#ws-shot .zoom", "el => el.style.transform")


@pytest.mark.django_db(transaction=True)
def test_the_screens_fit_above_the_fold_with_zoom_pan_and_a_full_view(
    browser, live_server, blank_six, bob
):
    for width, height in SIZES:
        page = open_page(
            browser,
            live_server,
            bob,
            f"/trajectories/{blank_six.pk}/workspace/?step=2",
            size=(width, height),
        )
        before, after = box(page, "#ws-shot"), box(page, "#ws-after .shot")
        assert 0 <= before["y"] < 260 and before["y"] + before["height"] <= height
        assert before["height"] > 0.6 * height
        # The screen the action led to, beside the one it acted on.
        assert after["x"] >= before["x"] + before["width"] and after["y"] == before["y"]
        assert page.get_attribute("#ws-after img", "src") == page.get_attribute(
            "#frame-3 img", "src"
        )
        shot(page, f"workspace-screens-{width}x{height}")
        page.context.close()

    page = open_page(browser, live_server, bob, f"/trajectories/{blank_six.pk}/workspace/?step=2")
    shot_box = box(page, "#ws-shot")
    centre = (shot_box["x"] + shot_box["width"] / 2, shot_box["y"] + shot_box["height"] / 2)
    page.mouse.move(*centre)
    page.mouse.wheel(0, -400)  # returns before the page has handled the wheel event
    page.wait_for_function("document.querySelector('#ws-shot .zoom').style.transform !== ''")
    assert zoom_of(page) == page.eval_on_selector("#ws-after .zoom", "el => el.style.transform")
    zoomed = zoom_of(page)
    page.mouse.down()
    page.mouse.move(centre[0] + 40, centre[1] + 60, steps=4)
    page.mouse.up()
    assert zoom_of(page) != zoomed  # panned
    page.keyboard.press("0")
    assert zoom_of(page) == ""
    page.mouse.dblclick(*centre)
    assert "scale(2.5)" in zoom_of(page)
    shots(page, "screens-zoomed")
    page.keyboard.press("0")
    page.keyboard.press("+")
    assert "scale(1.5)" in zoom_of(page)
    page.keyboard.press("Shift+ArrowDown")
    assert zoom_of(page) != "translate(-0px, -0px) scale(1.5)"
    page.keyboard.press("0")

    page.keyboard.press("f")
    full = box(page, "#ws-main .stage")
    assert (full["x"], full["y"], full["width"], full["height"]) == (0, 0, 1440, 900)
    assert box(page, "#ws-shot")["height"] > 800
    shots(page, "full-view")
    page.keyboard.press("Escape")
    assert box(page, "#ws-main .stage")["width"] < 1440 / 2
    # The after screen can be hidden, and stays hidden on the next step.
    page.uncheck("#ws-show-after")
    assert not page.is_visible("#ws-after")
    page.keyboard.press("j")
    page.wait_for_selector('#ws-main[data-step="3"]')
    assert not page.is_visible("#ws-after")
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_dragging_a_subgoal_edge_moves_the_boundary_it_shares(browser, live_server, blank_six, bob):
    edits.do_split_subgoal(blank_six, bob, blank_six.version, 3)
    edits.do_split_subgoal(blank_six, bob, blank_six.version, 6)  # 0–2, 3–5, 6–7
    middle = blank_six.subgoals.get(start=3)
    page = open_page(browser, live_server, bob, f"/trajectories/{blank_six.pk}/workspace/")

    def drag(handle, to_step):
        page.hover(handle)
        page.mouse.down()
        cell = box(page, f'#ws-track .cell[data-step="{to_step}"]')
        page.mouse.move(cell["x"] + cell["width"] / 2, cell["y"] + 10, steps=5)
        page.mouse.up()

    drag(f'#ws-track .handle.end[data-subgoal="{middle.pk}"]', 4)
    page.wait_for_selector('#ws-status[data-version="4"]')
    assert list(blank_six.subgoals.order_by("start").values_list("start", "end")) == [
        (0, 2),
        (3, 4),
        (5, 7),
    ]
    assert page.locator("#ws-track .cell.uncovered").count() == 0
    drag(f'#ws-track .handle.start[data-subgoal="{middle.pk}"]', 1)
    page.wait_for_selector('#ws-status[data-version="5"]')
    assert list(blank_six.subgoals.order_by("start").values_list("start", "end")) == [
        (0, 0),
        (1, 4),
        (5, 7),
    ]
    shots(page, "track-drag")
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_g_goes_to_the_step_typed(browser, live_server, blank_six, bob):
    page = open_page(browser, live_server, bob, f"/trajectories/{blank_six.pk}/workspace/")
    page.keyboard.press("g")
    page.keyboard.type("6")
    page.keyboard.press("Enter")
    page.wait_for_selector('#ws-main[data-step="6"]')
    assert not page.is_visible("#ws-goto")
    page.keyboard.press("g")
    page.keyboard.type("12")
    page.keyboard.press("Enter")
    assert page.inner_text("#ws-goto-hint") == "no step “12”: this trajectory has steps 0–7"
    shots(page, "goto")
    page.keyboard.press("Escape")
    assert not page.is_visible("#ws-goto")
    # Typed quickly behind a step move, the number still lands in the box.
    page.keyboard.press("k")
    page.keyboard.press("g")
    page.keyboard.type("2")
    page.keyboard.press("Enter")
    page.wait_for_selector('#ws-main[data-step="2"]')
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_next_item_after_submit_and_after_approve_opens_the_queue(
    browser, live_server, project, alice, bob
):
    first, _ = do_import_trajectory(project, make_record(steps=3, seed=1))
    second, _ = do_import_trajectory(project, make_record(steps=3, seed=2))
    for t in (first, second):
        do_assign(t, bob, alice)
    page = open_page(browser, live_server, bob, f"/trajectories/{first.pk}/workspace/")
    assert page.locator("#ws-next").count() == 0
    page.click("#ws-submit")
    page.wait_for_selector("#ws-next")
    shots(page, "next-item")
    page.keyboard.press("n")
    page.wait_for_url(f"**/trajectories/{second.pk}/workspace/")
    page.click("#ws-submit")
    page.wait_for_selector("#ws-next")
    assert page.inner_text("#ws-next").startswith("Queue empty")

    review = open_page(browser, live_server, alice, f"/trajectories/{first.pk}/workspace/")
    review.click("#rv-approve")
    review.wait_for_selector("#ws-next")
    review.keyboard.press("n")
    review.wait_for_url(f"**/trajectories/{second.pk}/workspace/")
    review.wait_for_selector("#rv-approve")
    assert page.errors == [] and review.errors == []


@pytest.mark.django_db(transaction=True)
def test_two_clicks_and_a_relation_key_link_anchors_shown_by_content(
    browser, live_server, blank_six, bob
):
    edits.do_add_anchor(
        blank_six, bob, blank_six.version, step=1, type="context_info", content="price 12.50"
    )
    edits.do_add_anchor(
        blank_six, bob, blank_six.version, step=5, type="finish", content="order placed for you"
    )
    page = open_page(browser, live_server, bob, f"/trajectories/{blank_six.pk}/workspace/")
    labels = page.locator("#ws-graph .node text.content").all_text_contents()
    assert labels == ["price 12.50", "order placed for …"]
    legend = " ".join(page.inner_text("#ws-legend").split())
    for name in ("1 prerequisite", "2 enables", "3 result of", "4 blocks", "critical"):
        assert name in legend
    page.click('#ws-graph .node[data-key="a1"]')
    page.click('#ws-graph .node[data-key="a2"]')
    assert "a1 → a2: press 1 prerequisite" in page.inner_text("#ws-link-hint")
    page.locator("#ws-anchors h3").scroll_into_view_if_needed()
    shots(page, "anchor-link")
    page.keyboard.press("c")
    page.keyboard.press("2")
    page.wait_for_selector("#ws-graph path.edge.rel-enables.critical")
    link = AnchorLink.objects.select_related("source", "target").get()
    assert (link.source.key, link.target.key, link.relation, link.critical) == (
        "a1",
        "a2",
        "enables",
        True,
    )
    # Esc leaves a half-drawn link; the number keys are then the subgoal's again.
    page.click('#ws-graph .node[data-key="a2"]')
    page.click('#ws-graph .node[data-key="a1"]')
    page.keyboard.press("Escape")
    assert "Click two anchors" in page.inner_text("#ws-link-hint")
    page.keyboard.press("1")
    page.wait_for_timeout(300)
    assert AnchorLink.objects.count() == 1
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_history_says_what_changed_and_reverts_one_change(browser, live_server, blank_six, bob):
    edits.do_update_step(blank_six, bob, blank_six.version, 1, {"memory": "price 12.50"})
    edits.do_split_subgoal(blank_six, bob, blank_six.version, 3)
    page = open_page(browser, live_server, bob, f"/trajectories/{blank_six.pk}/workspace/")
    history = page.inner_text("#ws-history")
    assert "step 1 memory: empty → “price 12.50”" in history
    assert "added subgoal steps 3–7" in history
    assert "step.updated" not in history and "None" not in history
    memory_edit = AuditEvent.objects.get(trajectory=blank_six, kind="step.updated")
    page.locator("#ws-history h2").scroll_into_view_if_needed()
    shots(page, "history")
    page.click(f'#ws-history li[data-event="{memory_edit.pk}"] button.revert')
    page.wait_for_selector(f'#ws-status[data-version="{blank_six.version + 1}"]')
    assert blank_six.steps.get(index=1).memory == ""
    assert blank_six.subgoals.count() == 2  # the later split stays
    assert "reverted a change" in page.inner_text("#ws-history")
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_letters_typed_at_a_forms_button_go_to_it_not_to_the_shortcuts(
    browser, live_server, blank_six, bob
):
    """Tab from an anchor's description lands on its Pick evidence button: "start of the…"
    typed there must neither split (s) nor write into the subgoal's intent (t)."""
    edits.do_split_subgoal(blank_six, bob, blank_six.version, 0)  # one subgoal, 0–7
    edits.do_add_anchor(
        blank_six, bob, blank_six.version, step=2, type="context_info", content="price 12.50"
    )
    blank_six.refresh_from_db()
    version = blank_six.version
    page = open_page(browser, live_server, bob, f"/trajectories/{blank_six.pk}/workspace/?step=2")
    active = "document.activeElement.textContent.trim()"

    # the anchor of this step: its description, then Tab
    page.focus('#ws-anchors .label-card input[name="description"]')
    page.keyboard.press("Tab")
    assert page.evaluate(active) == "Pick evidence"
    page.keyboard.type("start of the")
    # a new anchor: content, description, Tab
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    page.keyboard.type("the tent's price")
    page.keyboard.press("Tab")
    page.keyboard.type("needed to compare")
    page.keyboard.press("Tab")
    assert page.evaluate(active) == "Pick evidence"
    page.keyboard.type("start of the list")
    shots(page, "keys-at-a-forms-button")
    page.wait_for_timeout(500)  # anything a shortcut sent has arrived

    blank_six.refresh_from_db()
    assert blank_six.version == version  # nothing split, nothing written
    assert list(blank_six.subgoals.values_list("start", "end", "text")) == [(0, 7, "")]
    assert page.input_value("#sg-text") == ""
    assert page.input_value("#an-content") == "the tent's price"
    assert page.get_attribute("#ws-main", "data-step") == "2"
    # Esc (twice: the space clicked Pick evidence, which then picks) leaves the button, and
    # the keys are shortcuts again.
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    page.wait_for_selector('#ws-main[data-step="3"]')
    page.keyboard.press("?")
    assert "Keys go to the control that has focus" in page.inner_text("#ws-help-focus")
    assert page.errors == []
