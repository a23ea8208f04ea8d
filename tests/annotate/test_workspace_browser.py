"""End to end in Chromium: a full labelling pass by keyboard, submit, review, approve."""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from annotate.services import do_assign
from tests.annotate.conftest import blank_record
from tests.conftest import shot
from trajectories.models import Anchor, AnchorLink, MemoryTarget, Trajectory
from trajectories.services import do_create_project, do_import_trajectory, do_set_membership


def page_as(browser, live_server, user, size=(1400, 1000)):
    """A page of Chromium logged in as ``user``; its ``errors`` collects the page's JS errors."""
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
    return page


def eventually(check, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
        except AssertionError:
            result = False
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {timeout} s: {check.__doc__ or check}")
        time.sleep(0.1)


def settled(page):
    """Wait until htmx has no request in flight and has wired what it swapped in (a control
    swapped in works only once htmx has settled it)."""
    page.wait_for_function(
        "!document.querySelector('.htmx-request, .htmx-added, .htmx-settling, .htmx-swapping')"
    )


def saved(page):
    try:
        page.wait_for_selector("#ws-saved.ok", timeout=10_000)
    except Exception:
        shot(page, "failed", full_page=True)
        print(page.inner_html("#ws-status"), page.inner_html("#ws-flash"), page.errors)
        raise


def synced(page, trajectory):
    """Wait until no save is in flight: the page shows the version the database holds."""

    def shows_stored_version():
        stored = Trajectory.objects.get(pk=trajectory.pk).version
        return int(page.get_attribute("#ws-status", "data-version")) == stored

    eventually(shows_stored_version)
    saved(page)


def go_to(page, index):
    page.keyboard.press("Escape")
    while int(page.get_attribute("#ws-main", "data-step")) != index:
        here = int(page.get_attribute("#ws-main", "data-step"))
        page.keyboard.press("j" if index > here else "k")
        page.wait_for_selector(f'#ws-main[data-step="{here + (1 if index > here else -1)}"]')
    # htmx wires the swapped-in buttons and forms when it settles (it then drops .htmx-added).
    page.wait_for_selector(f'#ws-main[data-step="{index}"]:not(.htmx-added)')


@pytest.mark.django_db(transaction=True)
def test_a_full_labelling_pass_by_keyboard(browser, live_server):
    users = get_user_model().objects
    alice = users.create_user("alice", password="alice-password")
    bob = users.create_user("bob", password="bob-password")
    project = do_create_project("Shops", alice)
    do_set_membership(project, bob, "annotator", alice)
    trajectory, _ = do_import_trajectory(project, blank_record(steps=6))
    do_assign(trajectory, bob, alice)

    page = page_as(browser, live_server, bob)
    page.goto(f"{live_server.url}/trajectories/{trajectory.pk}/workspace/")
    assert page.locator("#ws-track .cell.uncovered").count() == 6

    # Three subgoals: 0–1, 2–3, 4–5.
    page.keyboard.press("s")
    page.wait_for_selector('#ws-status[data-version="2"]')
    go_to(page, 2)
    page.keyboard.press("s")
    page.wait_for_selector('#ws-status[data-version="3"]')
    go_to(page, 4)
    page.keyboard.press("s")
    page.wait_for_selector('#ws-status[data-version="4"]')
    assert page.locator("#ws-track .cell.uncovered").count() == 0
    assert page.locator("#ws-track .cell.first").count() == 3

    for start, text, key in (
        (0, "Find the headphones", "1"),
        (2, "Compare prices", "3"),
        (4, "Buy the cheapest", "1"),
    ):
        go_to(page, start)
        page.keyboard.press("t")
        page.keyboard.type(text)
        page.keyboard.press("Escape")
        eventually(
            lambda s=start, t=text: (
                Trajectory.objects.get(pk=trajectory.pk).subgoals.get(start=s).text == t
            )
        )
        synced(page, trajectory)
        page.keyboard.press(key)
        eventually(
            lambda s=start, k=key: (
                Trajectory.objects.get(pk=trajectory.pk).subgoals.get(start=s).success
                == {"1": "yes", "3": "uncertain"}[k]
            )
        )
    labels = list(
        trajectory.subgoals.order_by("start").values_list("start", "end", "text", "success")
    )
    assert labels == [
        (0, 1, "Find the headphones", "yes"),
        (2, 3, "Compare prices", "uncertain"),
        (4, 5, "Buy the cheapest", "yes"),
    ]

    # A memory target picked on step 1's screen, needed at step 4.
    go_to(page, 1)
    page.keyboard.press("r")
    page.keyboard.type("price")
    page.click('[data-pick="#mt-evidence"]')
    box = page.locator("#ws-xml").bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)  # Buy button
    page.fill('#ws-memory-form input[name="retrieve_steps"]', "4")
    page.press('#ws-memory-form input[name="retrieve_steps"]', "Enter")
    eventually(lambda: MemoryTarget.objects.filter(trajectory=trajectory).exists())
    synced(page, trajectory)
    target = MemoryTarget.objects.get(trajectory=trajectory)
    assert (target.key, target.value, target.encode_step, target.retrieve_steps) == (
        "price",
        "Buy 1",
        1,
        [4],
    )
    assert target.evidence["bounds"] == [10, 100, 110, 140]

    # Two anchors and a critical link between them.
    page.wait_for_selector("#ws-anchor-form")
    page.keyboard.press("a")
    page.select_option("#an-type", "context_info")
    page.fill("#an-content", "price 12.50")
    page.press("#an-content", "Enter")
    eventually(lambda: Anchor.objects.filter(trajectory=trajectory).count() == 1)
    synced(page, trajectory)
    go_to(page, 5)
    page.keyboard.press("a")
    page.select_option("#an-type", "finish")
    page.fill("#an-content", "order placed")
    page.press("#an-content", "Enter")
    eventually(lambda: Anchor.objects.filter(trajectory=trajectory).count() == 2)
    synced(page, trajectory)
    page.wait_for_selector("#ws-link-form")
    page.click('#ws-graph .node[data-key="a1"]')
    page.click('#ws-graph .node[data-key="a2"]')
    page.select_option("#ln-relation", "enables")
    page.check("#ln-critical")
    page.click('#ws-link-form button[type="submit"]')
    eventually(lambda: AnchorLink.objects.filter(source__trajectory=trajectory).exists())
    link = AnchorLink.objects.select_related("source", "target").get()
    assert (link.source.key, link.target.key, link.relation, link.critical) == (
        "a1",
        "a2",
        "enables",
        True,
    )
    page.wait_for_selector("#ws-graph path.edge.critical")
    synced(page, trajectory)

    # Undo and redo by keyboard.
    page.keyboard.press("Escape")
    page.keyboard.press("Control+z")
    eventually(lambda: not AnchorLink.objects.exists())
    synced(page, trajectory)
    page.wait_for_selector("#ws-redo:not([disabled])")
    page.keyboard.press("Control+Shift+z")
    eventually(lambda: AnchorLink.objects.exists())
    synced(page, trajectory)
    page.keyboard.press("?")
    assert page.is_visible("#ws-help")
    shot(page, "workspace-help", full_page=True)
    page.keyboard.press("Escape")
    shot(page, "workspace", full_page=True)

    page.wait_for_selector("#ws-problems .pill.success-yes")
    page.click("#ws-submit")
    eventually(lambda: Trajectory.objects.get(pk=trajectory.pk).status == "in_review")
    assert page.errors == []

    # alice reviews from her queue and approves.
    review = page_as(browser, live_server, alice)
    review.goto(f"{live_server.url}/review/")
    review.click(f'#to-review a[href="/trajectories/{trajectory.pk}/workspace/"]')
    review.wait_for_selector("#rv-approve")
    shot(review, "review")
    review.click("#rv-approve")
    eventually(lambda: Trajectory.objects.get(pk=trajectory.pk).status == "approved")
    assert review.errors == []
