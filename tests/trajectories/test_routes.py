"""route_parts and route_url (trajectories/routes.py) give what reverse gives, kept per route."""

from __future__ import annotations

from django.template import Context, Template
from django.urls import reverse, set_script_prefix

from trajectories.routes import route_parts, route_url


def test_a_route_url_is_the_reversed_url():
    cases = [
        ("project-list", ()),
        ("trajectory-list", (7,)),
        ("annotate-edit", (12, "split")),  # the last argument is not an id
        ("annotate-workspace", (2**40,)),
    ]
    for name, args in cases:
        assert route_url(name, *args) == reverse(name, args=args), name
    head, tail = route_parts("annotate-edit", before=(12,))
    assert f"{head}merge{tail}" == reverse("annotate-edit", args=[12, "merge"])


def test_route_urls_keep_the_sites_url_prefix():
    route_url("trajectory-list", 7), route_url("project-list")  # kept without a prefix
    set_script_prefix("/waypoint/")
    try:
        assert route_url("trajectory-list", 7) == "/waypoint/projects/7/trajectories/"
        assert route_url("project-list") == "/waypoint/"
    finally:
        set_script_prefix("/")
    assert route_url("project-list") == "/"


def test_the_route_tag_writes_the_url_escaped():
    html = Template("{% load routes %}<a href=\"{% route 'annotate-edit' 3 op %}\">").render(
        Context({"op": "a&b"})
    )
    assert html == f'<a href="{reverse("annotate-edit", args=[3, "a&b"])}">'.replace("&", "&amp;")
