"""The trajectory list's rows: every column, escaping, a missing recorder, the time zone and no
rows at all, as the list page shows them."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.trajectories.builders import make_record
from trajectories.models import Outcome, Status, Task, Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


def rows_of(html: str) -> list[str]:
    """The table's rows, each with its runs of white space as one space."""
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    return [re.sub(r"\s+", " ", row).strip() for row in re.findall(r"<tr>.*?</tr>", body, re.S)]


def test_a_row_shows_each_column_of_its_trajectory(client, project, alice):
    made, _ = do_import_trajectory(project, make_record(steps=2, seed=1, recorded_by="bob"))
    Trajectory.objects.filter(pk=made.pk).update(
        status=Status.APPROVED,
        outcome=Outcome.FAILURE,
        created_at=datetime(2026, 3, 1, 23, 30, tzinfo=UTC),
    )
    client.force_login(alice)
    (row,) = rows_of(client.get(reverse("trajectory-list", args=[project.pk])).content.decode())
    link = reverse("trajectory-detail", args=[made.pk])
    goal = made.task.goal
    assert row == (
        f'<tr> <td class="goal"><a href="{link}" title="{goal}">{goal}</a></td>'
        ' <td class="num">2</td>'
        ' <td><span class="pill status-approved">Approved</span></td>'
        ' <td><span class="pill outcome-failure">Failure</span></td>'
        f" <td>{made.get_source_display()}</td>"
        ' <td class="cut">bob</td>'
        ' <td class="nowrap">2026-03-01 23:30</td> </tr>'
    )


def test_texts_are_escaped_and_a_missing_recorder_is_a_dash(client, project, alice):
    made = [do_import_trajectory(project, make_record(steps=1, seed=s))[0] for s in (2, 3)]
    Task.objects.filter(pk=made[0].task_id).update(goal='Buy <b>"cheap"</b> & fast')
    Trajectory.objects.filter(pk=made[0].pk).update(recorded_by=None, recorder_name="")
    Trajectory.objects.filter(pk=made[1].pk).update(recorded_by=None, recorder_name="phone <7>")
    client.force_login(alice)
    html = client.get(reverse("trajectory-list", args=[project.pk])).content.decode()
    # Jinja2 (the rows' templates) writes a quote as &#34;
    assert 'title="Buy &lt;b&gt;&#34;cheap&#34;&lt;/b&gt; &amp; fast"' in html
    assert ">Buy &lt;b&gt;&#34;cheap&#34;&lt;/b&gt; &amp; fast</a>" in html
    assert '<td class="cut">phone &lt;7&gt;</td>' in html
    assert '<td class="cut">—</td>' in html
    assert "<b>" not in "".join(rows_of(html))


def test_the_time_is_in_the_current_time_zone(client, project, alice):
    made, _ = do_import_trajectory(project, make_record(steps=1, seed=4))
    Trajectory.objects.filter(pk=made.pk).update(
        created_at=datetime(2026, 3, 1, 23, 30, tzinfo=UTC)
    )
    client.force_login(alice)
    with timezone.override("Asia/Tokyo"):
        html = client.get(reverse("trajectory-list", args=[project.pk])).content.decode()
    assert '<td class="nowrap">2026-03-02 08:30</td>' in html


def test_no_rows_say_that_none_match(client, project, alice):
    client.force_login(alice)
    html = client.get(reverse("trajectory-list", args=[project.pk])).content.decode()
    assert rows_of(html) == ['<tr><td colspan="7" class="muted">No trajectories match.</td></tr>']
