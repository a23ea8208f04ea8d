"""What the workspace shows, for a trajectory with every kind of label and the awkward cases
(HTML and quotes in its texts, empty texts, a screen without XML, every kind of action,
comments, a proposal, history): texts shown as text, links to steps, and what each role may do."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from annotate.permissions import access_workspace_page
from annotate.views import OPERATIONS
from annotate.workspace import labels_context, page_steps, step_context
from tests.annotate.conftest import ODD
from trajectories.labels.cache import kept_at_version
from trajectories.labels.parts import anchor_dict, link_dict, memory_target_dict, subgoal_dict
from trajectories.models import Anchor, AnchorLink, MemoryTarget, Status, Subgoal, Trajectory

pytestmark = pytest.mark.django_db

VOID = {"area", "br", "col", "hr", "img", "input", "link", "meta", "source", "wbr"}


class Element:
    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag, self.attrs, self.children = tag, attrs, []

    @property
    def text(self) -> str:
        """Its text as a browser shows it: character references read, runs of space as one."""
        parts = [c if isinstance(c, str) else c.text for c in self.children]
        return re.sub(r"\s+", " ", "".join(parts)).strip()

    def all(self, tag: str = "", **attrs: str) -> list[Element]:
        found = []
        for child in self.children:
            if isinstance(child, Element):
                if (not tag or child.tag == tag) and all(
                    child.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items()
                ):
                    found.append(child)
                found.extend(child.all(tag, **attrs))
        return found

    def one(self, tag: str = "", **attrs: str) -> Element:
        (found,) = self.all(tag, **attrs)
        return found


class Page(HTMLParser):
    """An HTML text as the tree of elements a browser builds of it."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.open = Element("#document", {})
        self.stack = [self.root]
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self.stack[-1].children.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        while len(self.stack) > 1:
            if self.stack.pop().tag == tag:
                break

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def page_of(client, user, trajectory: Trajectory, step: int = 0, **headers) -> Element:
    client.force_login(user)
    answer = client.get(f"/trajectories/{trajectory.pk}/workspace/?step={step}", **headers)
    assert answer.status_code == 200
    return Page(answer.content.decode()).root


def test_texts_are_escaped_once(client, rich, bob):
    client.force_login(bob)
    html = client.get(f"/trajectories/{rich.pk}/workspace/?step=0").content.decode()
    assert ODD not in html
    # As Jinja2 escapes (the page's templates are annotate/jinja2/).
    assert "&lt;b&gt;&#34;odd&#34;&lt;/b&gt; &amp; &#39;quoted&#39;" in html
    assert "&amp;lt;" not in html  # not twice


def test_hostile_texts_are_shown_as_the_text_they_are(client, rich, bob):
    page = page_of(client, bob, rich, 0)
    assert page.one("textarea", id="sg-text").text == ODD  # the subgoal's intent
    assert page.one("input", id="sg-behaviour").attrs["value"] == ODD
    track = page.one("div", id="ws-track")
    assert track.one("div", data_step="0").attrs["title"] == f"Step 0: {ODD} [0–1] · yes"
    proposed = page.one("div", id="ws-proposed")
    assert proposed.one("div", data_step="0").attrs["title"] == f"Proposed: {ODD} [0–3]"
    memory = page.one("section", id="ws-memory")
    assert [i.attrs.get("value") for i in memory.all("input", name="value")] == [ODD, "", None]
    assert [i.attrs.get("value") for i in memory.all("input", name="key")] == ["price", ODD, None]
    anchors = page.one("section", id="ws-anchors")
    assert anchors.all("input", name="content")[0].attrs["value"] == ODD
    assert f"a1 · step 0 · context_info: {ODD}" in [t.text for t in anchors.all("title")]
    assert page.one("div", data_comment=str(rich.review_comments.get(step_index=0).pk)).text == (
        f"dave: look {ODD}"
    )
    assert ODD in page.one("p", **{"class": "small muted proposed-legend"}).text
    # None of the texts became markup: the only bold texts are the page's own.
    assert all(b.text != '"odd"' for b in page.all("b"))


def test_the_partial_and_an_edits_answer_escape_too(client, rich, bob):
    client.force_login(bob)
    partial = client.get(f"/trajectories/{rich.pk}/workspace/?step=0", HTTP_HX_REQUEST="true")
    assert partial.content.decode().lstrip().startswith('<div id="ws-main"')
    answer = client.post(
        reverse("annotate-edit", args=[rich.pk, "split"]),
        {"version": Trajectory.objects.get(pk=rich.pk).version, "step": 0, "at": 1},
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 200
    for html in (partial.content.decode(), answer.content.decode()):
        assert ODD not in html and "&lt;b&gt;&#34;odd&#34;" in html


def test_the_filmstrip_has_a_frame_per_step_with_its_action_and_caption(client, rich, bob):
    page = page_of(client, bob, rich, 2)
    frames = page.one("ol", **{"class": "filmstrip ws-film"}).all("li")
    assert [f.attrs["id"] for f in frames] == [f"frame-{i}" for i in range(10)]
    assert [f.attrs["class"] for f in frames].count("frame selected") == 1
    assert frames[2].attrs["class"] == "frame selected"
    assert frames[0].one("a").attrs["title"] == "Step 0: click (60, 120)"
    assert frames[1].one("span", **{"class": "caption"}).text == f"1 {ODD}"
    assert frames[2].one("span", **{"class": "caption"}).text == "2 " + "x" * 39 + "…"
    assert frames[0].one("svg", **{"class": "overlay"}).one("circle", **{"class": "tap"})
    shots = [f.one("img").attrs["src"] for f in frames]
    assert shots[0] == reverse("blob", args=[rich.steps.get(index=0).screen.screenshot_id])


def test_steps_are_linked_where_labels_name_them(client, rich, bob):
    page = page_of(client, bob, rich, 0)
    memory = page.one("section", id="ws-memory")
    assert [a.attrs["data-jump"] for a in memory.all("a", **{"class": "steplink"})] == ["3", "9"]
    jumps = page.one("section", id="ws-anchors").all("p", **{"class": "small"})[-1]
    assert [(a.attrs["href"], a.text) for a in jumps.all("a")] == [
        ("?step=0", "a1@0"),
        ("?step=0", "a2@0"),
        ("?step=3", "a4@3"),
        ("?step=9", "a3@9"),
    ]
    problems = page.one("section", id="ws-problems")
    assert all(a.attrs["href"] == f"?step={a.attrs['data-jump']}" for a in problems.all("a"))


def test_every_edit_the_page_posts_is_an_operation_of_this_trajectory(client, rich, bob):
    page = page_of(client, bob, rich, 0)
    ws = page.one("div", id="ws")
    assert ws.attrs["data-edit"] == reverse("annotate-edit", args=[rich.pk, "OP"])
    assert ws.attrs["data-url"] == reverse("annotate-workspace", args=[rich.pk])
    posts = {e.attrs["hx-post"] for e in page.all() if "hx-post" in e.attrs}
    edit = re.compile(rf"^/trajectories/{rich.pk}/workspace/(\w+)/$")
    assert {edit.match(url).group(1) for url in posts} <= set(OPERATIONS)
    assert len(posts) > 15


def test_the_annotator_edits_and_the_reviewer_reviews(client, rich, bob, dave):
    page = page_of(client, bob, rich, 0)
    assert page.one("button", id="ws-undo") and page.one("button", id="ws-submit")
    assert all("disabled" not in f.attrs for f in page.all("fieldset"))
    assert not page.all("form", id="ws-review-form")
    assert page.one("button", id="pr-accept-all")  # the open proposal, to decide

    Trajectory.objects.filter(pk=rich.pk).update(status=Status.IN_REVIEW)
    page = page_of(client, dave, rich, 0)
    assert not page.all("button", id="ws-undo") and not page.all("button", id="ws-submit")
    assert all("disabled" in f.attrs for f in page.all("fieldset"))
    review = page.one("form", id="ws-review-form")
    assert [b.text for b in review.all("button")] == [
        "Approve",
        "Send back",
        "Reject",
        "Comment only",
    ]
    assert page.one("details", id="ws-anchor-new").attrs.get("hidden") == ""


def test_the_label_rows_are_the_labels_as_dicts(rich, alice):
    found, role = access_workspace_page(alice, rich.pk)
    kept = kept_at_version(found, "labels", "steps")
    context = labels_context(found, 0, alice, role, kept["labels"])
    context.update(step_context(found, 0, context, page_steps(kept["steps"])))
    subgoals = [subgoal_dict(g) for g in Subgoal.objects.filter(trajectory=rich)]
    assert [{k: g[k] for k in subgoals[0]} for g in context["subgoals"]] == subgoals
    memory = [
        memory_target_dict(m)
        for m in MemoryTarget.objects.filter(trajectory=rich).order_by("encode_step", "key", "id")
    ]
    assert [{k: m[k] for k in memory[0]} for m in context["memory_targets"]] == memory
    anchors = Anchor.objects.filter(trajectory=rich).order_by("step_index", "id")
    assert context["anchors"] == [anchor_dict(a) for a in anchors]
    keys = {a.pk: a.key for a in anchors}
    links = AnchorLink.objects.filter(source__trajectory=rich).order_by("id")
    assert context["links"] == [link_dict(link, keys) for link in links]
    assert len(context["links"]) == 2
