"""The trajectory list's rows, written in Python for speed, are the HTML the template loop
wrote: every column, escaping, a missing recorder, the time zone and no rows at all."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.template import Context, Template
from django.utils import timezone

from tests.trajectories.builders import make_record
from trajectories import selectors
from trajectories.models import Outcome, Status, Task, Trajectory
from trajectories.services import do_import_trajectory
from trajectories.templatetags.list_rows import trajectory_rows

pytestmark = pytest.mark.django_db

# The loop the tag replaced, as it was in trajectories/_trajectory_table.html.
TEMPLATE_LOOP = Template(
    """{% for t in page %}
    <tr>
      <td class="goal"><a href="{% url 'trajectory-detail' t.pk %}" title="{{ t.task.goal }}">{{ t.task.goal }}</a></td>
      <td class="num">{{ t.step_count }}</td>
      <td><span class="pill status-{{ t.status }}">{{ t.get_status_display }}</span></td>
      <td><span class="pill outcome-{{ t.outcome }}">{{ t.get_outcome_display }}</span></td>
      <td>{{ t.get_source_display }}</td>
      <td class="cut">{% if t.recorded_by %}{{ t.recorded_by.get_username }}{% else %}{{ t.recorder_name|default:"—" }}{% endif %}</td>
      <td class="nowrap">{{ t.created_at|date:"Y-m-d H:i" }}</td>
    </tr>
  {% empty %}
    <tr><td colspan="7" class="muted">No trajectories match.</td></tr>
  {% endfor %}"""  # noqa: E501
)


def same_html(a: str) -> str:
    return re.sub(r"\s+", " ", a).strip()


def rows_of(project, alice) -> list[Trajectory]:
    return list(selectors.list_rows(selectors.trajectory_list(alice, project, {}, "")))


def test_the_rows_are_what_the_template_loop_wrote(project, alice, bob):
    records = [
        make_record(steps=2, seed=1, recorded_by="bob"),
        make_record(steps=3, seed=2),
        make_record(steps=1, seed=3),
    ]
    made = [do_import_trajectory(project, r)[0] for r in records]
    Task.objects.filter(pk=made[0].task_id).update(goal='Buy <b>"cheap"</b> & fast')
    Trajectory.objects.filter(pk=made[1].pk).update(
        recorded_by=None, recorder_name="", status=Status.APPROVED, outcome=Outcome.FAILURE
    )
    Trajectory.objects.filter(pk=made[2].pk).update(
        recorded_by=None,
        recorder_name="phone <7>",
        created_at=datetime(2026, 3, 1, 23, 30, tzinfo=UTC),
    )
    for zone in ("UTC", "Asia/Tokyo"):
        with timezone.override(zone):
            rows = rows_of(project, alice)
            expected = TEMPLATE_LOOP.render(Context({"page": rows}))
            written = trajectory_rows(rows)
        assert same_html(written) == same_html(expected)
    assert "Buy &lt;b&gt;&quot;cheap&quot;&lt;/b&gt; &amp; fast" in written
    assert "phone &lt;7&gt;" in written and "—" in written
    assert "2026-03-02 08:30" in written  # Tokyo


def test_no_rows_say_that_none_match(project, alice):
    assert same_html(trajectory_rows([])) == same_html(TEMPLATE_LOOP.render(Context({"page": []})))
    assert "No trajectories match." in trajectory_rows([])
