"""In Chromium: long project names stay in their column, lists sort by a header click, and the
app filter finds an app by part of its name."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from fixtures.generate import generate_record
from tests.annotate.test_workspace_browser import eventually, page_as
from tests.conftest import shot
from tests.trajectories.builders import make_record
from trajectories.models import Trajectory
from trajectories.services import do_create_project, do_import_trajectory

LONG_NAME = "Shopping-and-notes-trajectories-recorded-on-the-virtual-device-" * 2 + "X" * 70
SIZES = [(1440, 900), (1920, 1080)]


def _fits(page) -> dict:
    return page.evaluate(
        """() => {
        const table = document.querySelector('#projects');
        const right = Math.max(...[...table.querySelectorAll('th')].map(
            th => th.getBoundingClientRect().right));
        return {page: document.documentElement.scrollWidth, viewport: window.innerWidth,
                table: table.getBoundingClientRect().right, lastColumn: right};
    }"""
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width, height", SIZES)
def test_long_project_names_are_cut_and_the_table_stays_in_view(
    browser, live_server, width, height
):
    alice = get_user_model().objects.create_user("alice", password="alice-password")
    long = do_create_project(LONG_NAME, alice, "A description " * 30)
    do_create_project("Alpine notes", alice)
    for seed in range(2):
        do_import_trajectory(long, make_record(steps=1, seed=seed))

    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/")
    sizes = _fits(page)
    assert sizes["page"] <= sizes["viewport"], sizes
    assert sizes["lastColumn"] <= sizes["viewport"], sizes
    link = page.locator("#projects td.name a", has_text="Shopping-and-notes")
    assert link.get_attribute("title") == LONG_NAME  # the whole name, on hover
    assert link.evaluate("a => a.scrollWidth > a.clientWidth")  # cut with an ellipsis
    shot(page, f"lists-projects-{width}")

    # Its own page: the navigation stays one line, the heading wraps beside its buttons.
    link.click()
    page.wait_for_selector(".page-head h1")
    nav = page.locator("nav.topnav").bounding_box()
    assert nav["height"] < 60, nav
    # The project's own bar, below: one line, its name readable (cut at 28rem at most).
    bar = page.locator("nav.projectnav").bounding_box()
    assert bar["height"] < 50 and bar["y"] >= nav["y"] + nav["height"], (nav, bar)
    name = page.locator("nav.projectnav .project-name")
    assert name.bounding_box()["width"] >= 300, name.bounding_box()
    assert name.get_attribute("title") == LONG_NAME
    assert page.locator("nav.projectnav >> text=Members").is_visible()
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], widths
    buttons = page.locator(".page-head .actions").bounding_box()
    assert buttons["x"] + buttons["width"] <= width
    shot(page, f"lists-long-project-{width}")
    page.go_back()

    names = lambda: page.locator("#projects td.name a").all_inner_texts()  # noqa: E731
    assert names()[0] == "Alpine notes"
    page.click("#projects th a[data-sort=trajectories]")
    page.click("#projects th a[data-sort=trajectories]")  # a second click: most first
    eventually(lambda: names()[0].startswith("Shopping"))
    assert "sort=-trajectories" in page.url
    page.fill("#project-search", "alp")
    page.press("#project-search", "Enter")
    eventually(lambda: names() == ["Alpine notes"])


@pytest.mark.django_db(transaction=True)
def test_trajectories_sort_by_a_header_and_the_app_filter_takes_part_of_a_name(
    browser, live_server
):
    alice = get_user_model().objects.create_user("alice", password="alice-password")
    project = do_create_project("Shops", alice)
    plain, _ = do_import_trajectory(project, make_record(steps=2, seed=1))
    shop, _ = do_import_trajectory(project, generate_record(3, steps=6))
    Trajectory.objects.filter(pk=plain.pk).update(step_count=40)

    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/projects/{project.pk}/trajectories/")
    rows = lambda: page.locator("#trajectory-table tbody tr td.num").all_inner_texts()  # noqa: E731
    assert rows() == ["6", "40"]  # newest first
    page.click("#trajectory-table th a[data-sort=steps]")
    eventually(lambda: rows() == ["6", "40"] and "sort=steps" in page.url)
    page.click("#trajectory-table th a[data-sort=steps]")
    eventually(lambda: rows() == ["40", "6"])
    assert page.get_attribute("#trajectory-table th.num", "aria-sort") == "descending"
    clipped = page.eval_on_selector_all(
        "#trajectory-table td:not(.goal):not(.cut)",
        "cells => cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.innerText)",
    )
    assert clipped == []  # every column is wide enough for its values

    page.locator("#id_app").press_sequentially("shopmate", delay=20)
    eventually(lambda: rows() == ["6"])
    assert "sort=-steps" in page.url  # the filter keeps the order
    shot(page, "lists-trajectories-app-filter")


@pytest.mark.django_db(transaction=True)
def test_the_trajectory_list_filters_by_outcome_and_source(browser, live_server):
    alice = get_user_model().objects.create_user("alice", password="alice-password")
    project = do_create_project("Shops", alice)
    made = [do_import_trajectory(project, make_record(steps=n, seed=n))[0] for n in (1, 2, 3)]
    Trajectory.objects.filter(pk=made[0].pk).update(outcome="failure", source="imported")
    Trajectory.objects.filter(pk=made[1].pk).update(outcome="success", source="imported")
    Trajectory.objects.filter(pk=made[2].pk).update(outcome="failure", source="recorded")

    page = page_as(browser, live_server, alice)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{live_server.url}/projects/{project.pk}/trajectories/")
    rows = lambda: page.locator("#trajectory-table tbody tr td.num").all_inner_texts()  # noqa: E731
    assert rows() == ["3", "2", "1"]
    page.select_option("#id_outcome", "failure")
    eventually(lambda: rows() == ["3", "1"] and "outcome=failure" in page.url)
    page.select_option("#id_source", "imported")
    eventually(lambda: rows() == ["1"] and "source=imported" in page.url)
    filters = page.locator("form.filters").bounding_box()
    assert filters["x"] + filters["width"] <= 1440
    shot(page, "lists-outcome-source")
    page.reload()  # the address keeps the filters, and the form shows them
    assert rows() == ["1"]
    assert page.input_value("#id_outcome") == "failure"
    assert page.input_value("#id_source") == "imported"
