"""The workspace page written in Python (annotate/templatetags/workspace_panels.py) is the page
its templates wrote (tests/annotate/workspace_before/: the templates as they were): the same
elements, attributes and texts, for a trajectory with every kind of label and the awkward
cases, seen by an annotator, a reviewer and an admin, on several steps, in every answer of the
workspace (the page, an edit's answer, a refused edit's), and in every state of a proposal."""

from __future__ import annotations

import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.template import Engine, engines
from django.test import RequestFactory
from django.utils import timezone

from annotate.models import Proposal, ProposalStatus
from annotate.permissions import access_workspace_page
from annotate.services import do_assign
from annotate.workspace import labels_context, page_steps, step_context
from tests.annotate.conftest import blank_record
from tests.trajectories.builders import make_record
from trajectories.models import Status, Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db

BEFORE = Path(__file__).parent / "workspace_before"
PARTS = ("_main", "_status", "_track", "_proposal_track", "_problems", "_history")
CSRF = re.compile(r'("X-CSRFToken": "|name="csrfmiddlewaretoken" value=")[^"]+')


class Tokens(HTMLParser):
    """An HTML text as what a browser builds of it: tags with their attributes in order, and
    texts with their runs of white space as one space (but a text area's, kept as it is)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[tuple] = []
        self.exact = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tokens.append(("<", tag, tuple(attrs)))
        self.exact = tag == "textarea"

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag: str) -> None:
        self.tokens.append(("</", tag))
        self.exact = False

    def handle_data(self, data: str) -> None:
        text = data if self.exact else re.sub(r"\s+", " ", data)
        if self.tokens and self.tokens[-1][0] == "text":  # split by a character reference
            text = self.tokens.pop()[1] + text
        if text:
            self.tokens.append(("text", text))


def tokens(html: str) -> list[tuple]:
    found = Tokens(CSRF.sub(r"\1CSRF", html)).tokens
    # White space at the very start and end of an answer is no part of what is drawn.
    while found and found[0] == ("text", " "):
        found.pop(0)
    while found and found[-1] == ("text", " "):
        found.pop()
    return found


@cache
def engine_before() -> Engine:
    """Django's engine with the templates as they were ahead of the app's."""
    now = engines["django"].engine
    return Engine(
        dirs=[str(BEFORE)],
        app_dirs=True,
        context_processors=now.context_processors,
        libraries=now.libraries,
    )


def both(name: str, context: dict, request) -> tuple[list[tuple], list[tuple]]:
    old = engine_before().get_template(f"annotate/{name}.html")
    from django.template.context import make_context

    before = old.render(make_context(dict(context), request))
    after = engines["django"].get_template(f"annotate/{name}.html").render(context, request)
    return tokens(before), tokens(after)


def contexts(trajectory: Trajectory, user, index: int) -> dict:
    """What the workspace view gives its templates (annotate/views.py _render)."""
    found, role = access_workspace_page(user, trajectory.pk)
    steps = page_steps(found)
    context = labels_context(found, index, user, role)
    context.update(step_context(found, index, context, steps))
    context.update(project=found.project, steps=steps, task=found.task)
    return context


def request_of(user):
    request = RequestFactory().get("/")
    request.user = user
    return request


def assert_same(trajectory, user, index: int, **extra) -> None:
    context = {**contexts(trajectory, user, index), **extra}
    request = request_of(user)
    for name in ("workspace", *PARTS):
        before, after = both(name, context, request)
        assert after == before, (name, user.username, index, first_difference(before, after))
    for oob in (True, False):
        for name in PARTS:
            before, after = both(name, {**context, "oob": oob}, request)
            assert after == before, (name, "oob", oob, first_difference(before, after))
    for structural, main_oob, flash in ((True, True, "stale"), (True, False, ""), (False, 0, "")):
        answer = {**context, "structural": structural, "main_oob": main_oob, "flash": flash}
        before, after = both("_response", answer, request)
        assert after == before, ("_response", structural, main_oob, first_difference(before, after))


def first_difference(before: list, after: list) -> tuple:
    for n, (b, a) in enumerate(zip(before, after, strict=False)):
        if a != b:
            return n, before[max(0, n - 2) : n + 2], after[max(0, n - 2) : n + 2]
    return len(before), len(after)


@pytest.mark.parametrize("index", [0, 2, 3, 9])
def test_the_page_and_its_parts_are_what_the_templates_wrote(rich, alice, bob, dave, index):
    for status, user in ((Status.ANNOTATING, bob), (Status.IN_REVIEW, dave), (None, alice)):
        if status is not None:
            Trajectory.objects.filter(pk=rich.pk).update(status=status)
        assert_same(rich, user, index)
    Trajectory.objects.filter(pk=rich.pk).update(status=Status.APPROVED)
    assert_same(rich, alice, index)  # a reviewer reopens


def test_a_trajectory_without_labels_steps_or_screens_is_drawn_the_same(project, alice, bob):
    one, _ = do_import_trajectory(project, blank_record(steps=1, final_screen=None))
    assert_same(one, alice, 0)
    assert_same(one, bob, 0)  # not his: nothing to edit
    Trajectory.objects.filter(pk=one.pk).update(step_count=0)
    one.steps.all().delete()
    assert_same(one, alice, 0)


def test_the_next_item_is_drawn_the_same(project, alice, bob):
    done, waiting = (
        do_import_trajectory(project, make_record(steps=2, seed=seed))[0] for seed in (60, 61)
    )
    for trajectory in (done, waiting):
        do_assign(trajectory, bob, alice)
    Trajectory.objects.filter(pk=done.pk).update(status=Status.IN_REVIEW)
    assert_same(done, bob, 0)  # the next item
    Trajectory.objects.filter(pk=waiting.pk).update(status=Status.IN_REVIEW)
    assert_same(done, bob, 1)  # the queue is empty


@pytest.mark.parametrize("state", ["waiting", "failed", "decided", "decided by nobody"])
def test_every_state_of_a_proposal_is_drawn_the_same(project, alice, bob, state):
    trajectory, _ = do_import_trajectory(project, make_record(steps=3, seed=62))
    do_assign(trajectory, bob, alice)
    fields = {
        "waiting": {"status": ProposalStatus.PENDING},
        "failed": {"status": ProposalStatus.FAILED, "error": "the model said <nothing> & left"},
        "decided": {
            "status": ProposalStatus.ACCEPTED,
            "decided_by": alice,
            "decided_at": timezone.now(),
        },
        "decided by nobody": {"status": ProposalStatus.REJECTED, "decided_at": timezone.now()},
    }[state]
    Proposal.objects.create(
        trajectory=trajectory, proposer="heuristic", prompt_version="h1", **fields
    )
    for user in (alice, bob, get_user_model().objects.create_superuser("root", "r@e.org", "x")):
        assert_same(trajectory, user, 1)
