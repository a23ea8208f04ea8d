"""Prepared queries (config/prepared.py) give what their queryset gives, from SQL built once."""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import connection, connections
from django.db.models import Count, Exists, F, OuterRef
from django.db.models.sql.compiler import SQLCompiler
from django.test.utils import CaptureQueriesContext

from config.prepared import NotPreparable, Prepared
from tests.trajectories.builders import make_record
from trajectories.models import Anchor, AuditEvent, Membership, Project, Step, Trajectory
from trajectories.services import do_import_trajectory

pytestmark = pytest.mark.django_db


@pytest.fixture
def trajectory(project):
    return do_import_trajectory(project, make_record(steps=4, seed=3, recorded_by="bob"))[0]


def steps_with_screens(trajectory_id, first):
    return (
        Step.objects.filter(trajectory_id=trajectory_id, index__gte=first)
        .select_related("screen__ui_xml", "trajectory__project")
        .only(
            "index",
            "action",
            "screen__width",
            "screen__ui_xml__sha256",
            "trajectory__project__name",
        )
        .annotate(later=F("index") + 1)
        .order_by("-index")
    )


STEPS = Prepared(steps_with_screens, trajectory_id=int, first=int)


def test_models_come_with_their_related_objects_deferred_fields_and_annotations(trajectory):
    expected = list(steps_with_screens(trajectory.pk, 1))
    found = STEPS(trajectory_id=trajectory.pk, first=1)
    assert [s.index for s in found] == [3, 2, 1]
    for mine, theirs in zip(found, expected, strict=True):
        assert mine.pk == theirs.pk and mine.later == theirs.later == mine.index + 1
        assert mine.action == theirs.action and isinstance(mine.action, dict)  # JSON decoded
        assert mine.screen.width == theirs.screen.width
        assert mine.screen.ui_xml.sha256 == theirs.screen.ui_xml.sha256
        assert mine.trajectory.project.name == "Shops"
        assert mine.get_deferred_fields() == theirs.get_deferred_fields()
        assert not mine._state.adding and mine._state.db == "default"


def test_each_call_runs_its_own_values_in_one_query(trajectory, project):
    other, _ = do_import_trajectory(project, make_record(steps=2, seed=4, recorded_by="bob"))
    STEPS(trajectory_id=trajectory.pk, first=0)  # the plan is built
    with CaptureQueriesContext(connection) as captured:
        assert [s.index for s in STEPS(trajectory_id=other.pk, first=0)] == [1, 0]
        assert [s.index for s in STEPS(trajectory_id=trajectory.pk, first=2)] == [3, 2]
        assert STEPS(trajectory_id=trajectory.pk, first=9) == []
    assert len(captured) == 3


def test_logged_queries_show_their_values(trajectory):
    with CaptureQueriesContext(connection) as captured:
        STEPS(trajectory_id=trajectory.pk, first=2)
    assert f'"trajectory_id" = {trajectory.pk}' in captured[0]["sql"]
    assert '"index" >= 2' in captured[0]["sql"]


def test_the_sql_is_built_once_per_connection(trajectory, monkeypatch):
    query = Prepared(
        lambda trajectory_id: Anchor.objects.filter(trajectory_id=trajectory_id).values("key"),
        trajectory_id=int,
    )
    built = []
    as_sql = SQLCompiler.as_sql
    monkeypatch.setattr(
        SQLCompiler, "as_sql", lambda self, *a, **k: built.append(1) or as_sql(self, *a, **k)
    )
    found = [query(trajectory_id=trajectory.pk) for _ in range(5)]
    # The plan: its SQL with two sets of stand-ins and in another time zone, then never again.
    assert len(built) == 3
    assert found == [list(Anchor.objects.filter(trajectory=trajectory).values("key"))] * 5
    assert found[0]


def test_sql_that_depends_on_the_time_zone_is_planned_per_zone(trajectory):
    from datetime import UTC, datetime

    from django.db.models.functions import ExtractHour
    from django.utils import timezone

    Trajectory.objects.filter(pk=trajectory.pk).update(
        created_at=datetime(2026, 1, 1, 23, 30, tzinfo=UTC)
    )
    hour = Prepared(
        lambda pk: (
            Trajectory.objects.filter(pk=pk)
            .annotate(hour=ExtractHour("created_at"))
            .values_list("hour", flat=True)
        ),
        pk=int,
    )
    assert hour(pk=trajectory.pk) == [23]
    with timezone.override("Asia/Kathmandu"):  # UTC+5:45
        assert hour(pk=trajectory.pk) == [5]
    with timezone.override("America/St_Johns"):  # UTC-3:30
        assert hour(pk=trajectory.pk) == [20]
    assert hour(pk=trajectory.pk) == [23]


def test_values_lists_and_flat_lists_are_what_the_queryset_gives(trajectory, project, alice):
    def members(project_id):
        return Membership.objects.filter(project_id=project_id).order_by("user__username")

    as_dicts = Prepared(
        lambda project_id: members(project_id).values("role", name=F("user__username")),
        project_id=int,
    )
    as_tuples = Prepared(
        lambda project_id: members(project_id).values_list("user__username", "role"),
        project_id=int,
    )
    flat = Prepared(
        lambda project_id: members(project_id).values_list("role", flat=True), project_id=int
    )
    assert as_dicts(project_id=project.pk) == list(
        members(project.pk).values("role", name=F("user__username"))
    )
    assert as_dicts(project_id=project.pk) == [
        {"role": "admin", "name": "alice"},
        {"role": "annotator", "name": "bob"},
    ]
    assert as_tuples(project_id=project.pk) == [("alice", "admin"), ("bob", "annotator")]
    assert flat(project_id=project.pk) == ["admin", "annotator"]
    assert flat.first(project_id=project.pk + 1000) is None


def test_subqueries_and_aggregates_take_their_parameters_too(trajectory, project, charlie):
    def projects(user_id):
        return (
            Project.objects.annotate(
                member=Exists(Membership.objects.filter(project=OuterRef("pk"), user_id=user_id)),
                trajectories_count=Count("trajectories"),
            )
            .filter(member=True)
            .values_list("name", "trajectories_count")
        )

    query = Prepared(projects, user_id=int)
    assert query(user_id=project.memberships.get(role="admin").user_id) == [("Shops", 1)]
    assert query(user_id=charlie.pk) == []


def test_a_string_parameter_reaches_the_sql_as_it_was_given(trajectory):
    query = Prepared(
        lambda kind: AuditEvent.objects.filter(trajectory=trajectory, kind=kind).values_list(
            "kind", flat=True
        ),
        kind=str,
    )
    kind = AuditEvent.objects.filter(trajectory=trajectory).values_list("kind", flat=True)[0]
    assert set(query(kind=kind)) == {kind}
    assert query(kind="'; DROP TABLE trajectories_trajectory; --") == []
    assert Trajectory.objects.filter(pk=trajectory.pk).exists()


def test_a_value_no_id_takes_is_refused_before_any_query(trajectory):
    with CaptureQueriesContext(connection) as captured:
        for value in (2**63, -(2**63) - 1):
            with pytest.raises(ValueError, match="out of range for an id"):
                STEPS(trajectory_id=value, first=0)
        with pytest.raises(ValueError):
            STEPS(trajectory_id="x", first=0)
    assert len(captured) == 0


def test_it_names_the_parameters_it_expects():
    with pytest.raises(TypeError, match=r"expected the parameters \['first', 'trajectory_id'\]"):
        STEPS(trajectory_id=1)


def test_queries_whose_parameters_change_on_the_way_are_refused(db):
    def changed(goal):
        return Trajectory.objects.filter(task__goal__icontains=goal)  # sent as %goal%

    def shaped(count):
        return Trajectory.objects.all()[:count]  # LIMIT is written into the SQL

    def list_of(pks):
        return Trajectory.objects.filter(pk__in=pks)

    with pytest.raises(NotPreparable, match="a parameter reaches the SQL changed"):
        Prepared(changed, goal=str)(goal="buy")
    with pytest.raises(NotPreparable, match="the SQL's shape depends on the parameters"):
        Prepared(shaped, count=int)(count=2)
    with pytest.raises(NotPreparable, match="an int or a str"):
        Prepared(list_of, pks=list)
    with pytest.raises(NotPreparable, match="not preparable"):
        Prepared(lambda pk: Trajectory.objects.filter(pk=pk).prefetch_related("steps"), pk=int)(
            pk=1
        )


postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's"
)


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


@postgresql_only
def test_on_postgresql_the_server_plans_it_once_per_connection(trajectory):
    before = prepared_statements()
    found = [STEPS(trajectory_id=trajectory.pk, first=first) for first in (0, 1, 0)]
    assert [len(steps) for steps in found] == [4, 3, 4]
    new = [sql for sql in prepared_statements() if sql not in before]
    assert len(new) == 1 and '"trajectories_step"' in new[0] and "$1" in new[0]


@postgresql_only
def test_without_prepared_statements_it_runs_the_same_query(trajectory, monkeypatch):
    connection.ensure_connection()
    monkeypatch.setattr(connection.connection, "prepare_threshold", None)
    before = prepared_statements()
    assert [s.index for s in STEPS(trajectory_id=trajectory.pk, first=2)] == [3, 2]
    assert prepared_statements() == before


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_dropped_between_requests_costs_no_request(client, alice):
    import psycopg
    from django.core.handlers.wsgi import WSGIHandler
    from django.test.client import RequestFactory

    client.force_login(alice)
    application = WSGIHandler()  # as gunicorn runs it: each request checks old connections

    def get(path: str) -> tuple[str, bytes]:
        environ = RequestFactory().get(path).environ
        environ["HTTP_COOKIE"] = f"sessionid={client.cookies['sessionid'].value}"
        answer = []
        body = application(environ, lambda status, headers: answer.append(status))
        return answer[0], b"".join(body)

    settings_dict = connection.settings_dict
    saved = settings_dict["CONN_MAX_AGE"], settings_dict["CONN_HEALTH_CHECKS"]
    settings_dict["CONN_MAX_AGE"], settings_dict["CONN_HEALTH_CHECKS"] = 60, True
    try:
        assert get("/")[0] == "200 OK"  # the connection now outlives the request
        pid = connection.connection.info.backend_pid
        params = connection.get_connection_params()
        params.pop("cursor_factory", None)
        with psycopg.connect(**params, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", [pid])
        status, body = get("/")  # the session is read by a prepared statement first
        assert status == "200 OK" and b'<span class="who">alice</span>' in body
        assert connection.connection.info.backend_pid != pid
    finally:
        settings_dict["CONN_MAX_AGE"], settings_dict["CONN_HEALTH_CHECKS"] = saved
        connection.close()


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_kept_connection_is_checked_by_the_first_query_not_a_select_1(client, alice):
    from django.core.handlers.wsgi import WSGIHandler
    from django.test.client import RequestFactory

    client.force_login(alice)
    application = WSGIHandler()
    environ = RequestFactory().get("/").environ
    environ["HTTP_COOKIE"] = f"sessionid={client.cookies['sessionid'].value}"
    settings_dict = connection.settings_dict
    saved = settings_dict["CONN_MAX_AGE"], settings_dict["CONN_HEALTH_CHECKS"]
    settings_dict["CONN_MAX_AGE"], settings_dict["CONN_HEALTH_CHECKS"] = 60, True
    checks, answers = [], []
    wrapper = type(connections["default"])
    is_usable = wrapper.is_usable
    try:
        with mock.patch.object(
            wrapper, "is_usable", lambda self: checks.append(1) or is_usable(self)
        ):
            for _ in range(3):
                b"".join(application(dict(environ), lambda status, h: answers.append(status)))
        assert answers == ["200 OK"] * 3
        assert checks == []
    finally:
        settings_dict["CONN_MAX_AGE"], settings_dict["CONN_HEALTH_CHECKS"] = saved
        connection.close()
