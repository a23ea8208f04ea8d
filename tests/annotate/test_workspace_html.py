"""The workspace's parts written in Python (annotate/templatetags/workspace_html.py) are the HTML
their template loops wrote, for a trajectory with every kind of label and the awkward cases:
HTML and quotes in its texts, empty texts, a screen without XML, every kind of action, comments,
a proposal, history; seen by an admin, an annotator and a reviewer, on several steps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.template import Context, Template
from django.urls import reverse

from annotate.permissions import access_workspace_page
from annotate.views import OPERATIONS
from annotate.workspace import EditUrls, labels_context, page_steps, step_context
from tests.annotate.conftest import ODD, blank_record
from trajectories.labels.parts import anchor_dict, link_dict, memory_target_dict, subgoal_dict
from trajectories.models import Anchor, AnchorLink, MemoryTarget, Status, Subgoal, Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def loops_before() -> dict[str, tuple[str, str]]:
    """Each replaced loop as it was, with the tag that replaced it, by name."""
    text = (Path(__file__).parent / "workspace_loops_before.txt").read_text(encoding="utf-8")
    found = re.findall(r"^\{# part (\w+): ([^\n]*) #\}\n(.*?)\n(?=\{# part |\Z)", text, re.M | re.S)
    return {name: (loop, tag) for name, tag, loop in found}


LOOPS = loops_before()


def page_context(trajectory: Trajectory, user, index: int) -> dict:
    """What the workspace view gives its templates, with the full page's steps."""
    trajectory, role = access_workspace_page(user, trajectory.pk)
    steps = page_steps(trajectory)
    context = labels_context(trajectory, index, user, role)
    context.update(step_context(trajectory, index, context, steps))
    return {**context, "steps": steps, "g": context["current_subgoal"]}


def render(text: str, context: dict) -> str:
    page = "{% load l10n trajectory_tags workspace_html %}{% localize off %}"
    return Template(page + text + "{% endlocalize %}").render(Context(context))


def test_every_replaced_loop_is_checked():
    assert len(LOOPS) == 20
    assert all(loop.startswith("{% for ") and tag.startswith("{% ") for loop, tag in LOOPS.values())


@pytest.mark.parametrize("part", sorted(LOOPS))
def test_each_part_is_what_its_template_loop_wrote(part, rich, alice, bob, dave):
    loop, tag = LOOPS[part]
    for status, user in ((Status.ANNOTATING, bob), (Status.IN_REVIEW, dave), (None, alice)):
        if status is not None:
            Trajectory.objects.filter(pk=rich.pk).update(status=status)
        for index in (0, 2, 3, 9):
            context = page_context(rich, user, index)
            assert render(tag, context) == render(loop, context), (part, user, index)


@pytest.mark.parametrize("part", sorted(LOOPS))
def test_a_trajectory_without_labels_or_history_is_drawn_the_same(part, project, alice):
    trajectory, _ = do_import_trajectory(project, blank_record(steps=1, final_screen=None))
    loop, tag = LOOPS[part]
    context = page_context(trajectory, alice, 0)
    assert render(tag, context) == render(loop, context)


def test_texts_are_escaped_once(client, rich, bob):
    client.force_login(bob)
    html = client.get(f"/trajectories/{rich.pk}/workspace/?step=0").content.decode()
    assert ODD not in html
    assert "&lt;b&gt;&quot;odd&quot;&lt;/b&gt; &amp; &#x27;quoted&#x27;" in html
    assert "&amp;lt;" not in html  # not twice


def test_the_label_rows_are_the_labels_as_dicts(rich, alice):
    context = page_context(rich, alice, 0)
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


def test_the_edit_urls_are_the_reversed_ones(rich):
    edit = EditUrls(rich.pk)
    for op in [*OPERATIONS, "OP"]:
        assert edit[op] == reverse("annotate-edit", args=[rich.pk, op])


def test_texts_are_cut_as_truncatechars_cuts_them():
    from django.template.defaultfilters import truncatechars

    from annotate.templatetags.workspace_html import _truncated

    texts = ["", "short", "x" * 50, "x" * 51, ODD * 4, "e\u0301" * 60, "é" * 60, "ab"]
    for size in (0, 1, 2, 3, 32, 40, 50):
        for text in texts:
            assert _truncated(text, size) == truncatechars(text, size), (text, size)
