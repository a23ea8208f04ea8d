"""Every page's top bar with the site's links, and on a project's pages a bar below it with the
project's."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse, set_script_prefix

from trajectories.services import do_create_project

pytestmark = pytest.mark.django_db

PROJECT_ROUTES = (
    ("Import", "project-import"),
    ("Export", "project-export"),
    ("Evaluate", "project-evaluate"),
    ("Progress", "annotate-progress"),
    ("Assign", "annotate-assignments"),
    ("Agreement", "annotate-agreement"),
    ("Proposals", "annotate-proposals"),
    ("Graphs", "project-graphs"),
    ("Runs", "project-runs"),
    ("Explore", "project-explorations"),
    ("Environments", "project-generations"),
    ("Members", "project-members"),
)


def links_of(html: str, bar: str = '<nav class="topnav">') -> list[tuple[str, str]]:
    if bar not in html:
        return []
    nav = html.split(bar)[1].split("</nav>")[0]
    return re.findall(r'<a (?:class="[^"]*" )?href="([^"]*)"[^>]*>([^<]*)</a>', nav)


def project_links_of(html: str) -> list[tuple[str, str]]:
    return links_of(html, '<nav class="projectnav" aria-label="Project">')


def test_a_project_page_links_the_site_and_the_project(client, alice):
    project = do_create_project('Shops <b>& "co"</b>', alice)
    client.force_login(alice)
    html = client.get(reverse("trajectory-list", args=[project.pk])).content.decode()
    name = "Shops &lt;b&gt;&amp; &quot;co&quot;&lt;/b&gt;"
    assert links_of(html) == [
        (reverse("project-list"), "Waypoint"),
        (reverse("project-list"), "Projects"),
        (reverse("annotate-inbox"), "Inbox"),
        (reverse("annotate-review"), "Review"),
        (reverse("device-list"), "Devices"),
    ]
    assert project_links_of(html) == [
        (reverse("trajectory-list", args=[project.pk]), name),
        *((reverse(route, args=[project.pk]), label) for label, route in PROJECT_ROUTES),
    ]
    assert f'title="{name}"' in html


def test_other_pages_link_the_site_only(client, alice):
    client.force_login(alice)
    html = client.get(reverse("project-list")).content.decode()
    assert [label for _, label in links_of(html)] == [
        "Waypoint",
        "Projects",
        "Inbox",
        "Review",
        "Devices",
    ]
    assert project_links_of(html) == []


def test_signed_out_pages_link_nothing_but_the_brand(client):
    html = client.get(reverse("login")).content.decode()
    assert links_of(html) == [(reverse("project-list"), "Waypoint")]


def test_links_keep_the_sites_url_prefix(client, alice):
    project = do_create_project("Shops", alice)
    client.force_login(alice)
    client.get(reverse("trajectory-list", args=[project.pk]))  # links known without a prefix
    # As the WSGI handler does for a site served under /waypoint/ (the test client does not).
    set_script_prefix("/waypoint/")
    try:
        html = client.get(f"/projects/{project.pk}/trajectories/").content.decode()
    finally:
        set_script_prefix("/")
    hrefs = [href for href, _ in links_of(html) + project_links_of(html)]
    assert all(href.startswith("/waypoint/") for href in hrefs), hrefs
    assert f"/waypoint/projects/{project.pk}/members/" in hrefs
