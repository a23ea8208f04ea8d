"""Querysets of a fixed shape whose SQL Django builds once per process, not once per request.

Building a queryset's SQL (filter, annotate, select_related, then compiling it) costs the
pages that run on every request more than running it: 0.4 ms for a user by its key, 3 ms for
a trajectory with its project, task and facts, against 0.1 ms to run either. A
:class:`Prepared` is written with the ORM as usual, as a function of its parameters; the
first call on a connection builds it with stand-in values and keeps the SQL, the later calls
put the real values in their places and run it, and the rows become what the queryset
would have given: model instances (with their ``select_related`` objects and annotations),
dicts for ``values()``, tuples for ``values_list()``, single values with ``flat=True``.

Parameters are ints or strings (ids and keys), and a query need not use them all. Each must
reach the SQL as it was given, so values that a database adapts (dates, JSON) or that change
the SQL's shape (a list for ``__in``, an optional filter) are not parameters: a plan that
finds one refuses to be built (:class:`NotPreparable`), and such queries are written as usual.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from django.db import DatabaseError, connections
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.db.models import QuerySet
from django.db.models.query import (
    FlatValuesListIterable,
    ModelIterable,
    ValuesIterable,
    ValuesListIterable,
    get_related_populators,
)
from django.db.models.sql.compiler import SQLCompiler
from django.utils import timezone

# The plan is built twice, with two sets of stand-ins; the places where the parameters differ
# are where the real values go. Small ints, since a lookup on a small integer column treats a
# value out of its range as matching nothing.
_INT_STAND_INS = (30001, 30002)
# A plan is also built in another time zone: SQL the same there is the same in every zone.
_OTHER_ZONES = ("Asia/Kathmandu", "America/St_Johns")


class NotPreparable(TypeError):
    """The queryset cannot be run from SQL built once (see the module's docstring)."""


@dataclass(frozen=True)
class _Plan:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, str], ...]  # (position in params, parameter name)
    shape: Callable[[list], list]  # rows -> what the queryset gives


class Prepared:
    """``build(**parameters)`` → a queryset; calling the Prepared with the parameters gives
    the list of what the queryset gives, from SQL built once per connection and time zone.

    ``parameters`` name each parameter's type, ``int`` or ``str``::

        member_role = Prepared(
            lambda project_id, user_id: Membership.objects.filter(
                project_id=project_id, user_id=user_id
            ).values_list("role", flat=True),
            project_id=int,
            user_id=int,
        )
        member_role(project_id=3, user_id=7)  # ["admin"] or []
    """

    def __init__(self, build: Callable[..., QuerySet], **parameters: type) -> None:
        for name, kind in parameters.items():
            if kind not in (int, str):
                raise NotPreparable(f"parameter {name}: an int or a str, not {kind!r}")
        self.build = build
        self.parameters = parameters
        # Per connection object (one per thread and alias), so a plan never crosses threads.
        self._plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._alias: str | None = None  # the database the queryset reads, once known

    def __call__(self, **values: Any) -> list:
        if values.keys() != self.parameters.keys():
            raise TypeError(
                f"expected the parameters {sorted(self.parameters)}, got {sorted(values)}"
            )
        plan, connection = self._plan()
        params = list(plan.params)
        for position, name in plan.slots:
            params[position] = _checked(self.parameters[name](values[name]))
        return plan.shape(_rows(connection, plan.sql, params))

    def first(self, **values: Any) -> Any:
        """The first of what the call gives, or None."""
        found = self(**values)
        return found[0] if found else None

    def queryset(self, **values: Any) -> QuerySet:
        """The queryset itself, built as usual (for what is not run through the plan)."""
        return self.build(**values)

    def _plan(self) -> tuple[_Plan, Any]:
        if self._alias is None:
            self._alias = self.build(**self._stand_ins(0)).db
        connection = connections[self._alias]
        plans = self._plans.get(connection)
        if plans is None:
            plans = self._plans[connection] = {}
        plan = plans.get(None)  # the plan of SQL that no time zone changes
        if plan is None:
            zone = timezone.get_current_timezone_name()
            plan = plans.get(zone)
            if plan is None:
                plan, zoned = self._make_plan()
                plans[zone if zoned else None] = plan
        return plan, connection

    def _stand_ins(self, which: int) -> dict[str, Any]:
        return {
            name: _INT_STAND_INS[which] + 2 * n if kind is int else f"prepared-{which}-{n}"
            for n, (name, kind) in enumerate(self.parameters.items())
        }

    def _make_plan(self) -> tuple[_Plan, bool]:
        """The plan, and whether its SQL depends on the current time zone (a date truncated
        or extracted in it), in which case a plan is kept per zone."""
        queryset = self.build(**self._stand_ins(0))
        if queryset._prefetch_related_lookups or queryset._known_related_objects:
            raise NotPreparable("a prefetch or a related manager's queryset is not preparable")
        shape = _SHAPES.get(queryset._iterable_class)
        if shape is None:
            raise NotPreparable(f"{queryset._iterable_class.__name__} is not preparable")
        compiler = queryset.query.get_compiler(queryset.db)
        sql, params = compiler.as_sql()
        if compiler.has_extra_select:
            raise NotPreparable("extra select columns are not preparable")
        other = self.build(**self._stand_ins(1))
        other_sql, other_params = other.query.get_compiler(other.db).as_sql()
        if other_sql != sql or len(other_params) != len(params):
            raise NotPreparable("the SQL's shape depends on the parameters")
        names = {value: name for name, value in self._stand_ins(0).items()}
        slots = []
        for position, (value, other_value) in enumerate(zip(params, other_params, strict=True)):
            if value == other_value:
                continue
            if not isinstance(value, int | str) or value not in names:
                raise NotPreparable(f"a parameter reaches the SQL changed, as {value!r}")
            slots.append((position, names[value]))
        current = timezone.get_current_timezone_name()
        with timezone.override(_OTHER_ZONES[0] if current != _OTHER_ZONES[0] else _OTHER_ZONES[1]):
            elsewhere = self.build(**self._stand_ins(0))
            zoned = elsewhere.query.get_compiler(elsewhere.db).as_sql() != (sql, params)
        return _Plan(sql, tuple(params), tuple(slots), shape(compiler)), zoned


def _rows(connection: Any, sql: str, params: list) -> list:
    """The rows of ``sql``, as the first query of a request checks the connection.

    Django checks a connection kept from an earlier request (``CONN_HEALTH_CHECKS``) with a
    ``SELECT 1`` before the request's first query; a prepared query, the first of nearly every
    request (the session), is that check itself instead, and one round trip fewer: if it fails
    on a connection the server dropped, it runs again on a new one.
    """
    checking = (
        connection.connection is not None
        and connection.health_check_enabled
        and not connection.health_check_done
        and not connection.in_atomic_block
    )
    if not checking:
        return _run(connection, sql, params)
    connection.health_check_done = True  # no SELECT 1 from Django's cursor()
    try:
        return _run(connection, sql, params)
    except DatabaseError:
        if connection.is_usable():
            raise  # the query's own error
    connection.close()
    return _run(connection, sql, params)


def _run(connection: Any, sql: str, params: list) -> list:
    """On PostgreSQL, as a prepared statement when the connection prepares them
    (``prepare_threshold``, config/settings.py): the server plans the query once per connection
    instead of on every call, which cost it more than running the query."""
    if connection.vendor == "postgresql":
        # What Django's cursor() does first: a connection checked, opened if need be, and
        # used by the thread that opened it.
        connection.close_if_health_check_failed()
        connection.ensure_connection()
        connection.validate_thread_sharing()
        if connection.connection.prepare_threshold is not None:
            # Django's cursors bind parameters on the client, and such a query is never
            # prepared; a server-side binding cursor is, in Django's wrapper (which logs
            # queries and turns the driver's errors into Django's).
            with connection.wrap_database_errors:
                server = psycopg.Cursor(connection.connection)
            wrap = _LoggedStatement if connection.queries_logged else CursorWrapper
            with wrap(server, connection) as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


class _LoggedStatement(CursorDebugWrapper):
    """Django's cursor that logs its queries (``DEBUG``, tests): Django names a query by the
    text its cursor sent, and a prepared statement is sent by name; the text is written from
    the SQL and its parameters instead, as Django writes it for server-side binding."""

    def execute(self, sql: str, params: Any = None) -> Any:
        with self.debug_sql(self.db.ops.compose_sql(sql, params), params):
            return CursorWrapper.execute(self, sql, params)


def _checked(value: Any) -> Any:
    # No id is past 64 bits (SQLite could not even take it): such a value matches nothing, as
    # the ORM decides for a value out of a column's range, and callers treat it as not found.
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        raise ValueError(f"{value} is out of range for an id")
    return value


# The shapes turn rows into what each kind of queryset yields, as Django's own iterables do;
# each is made once per plan, from the compiler that built its SQL.


def _converted(compiler: SQLCompiler) -> Callable[[list], Any]:
    """Rows with the database's values turned into Python's (dates, JSON, decimals)."""
    fields = [column[0] for column in compiler.select[0 : compiler.col_count]]
    if compiler.has_composite_fields(fields):
        raise NotPreparable("composite fields are not preparable")
    converters = compiler.get_converters(fields)
    if not converters:
        return lambda rows: rows
    return lambda rows: compiler.apply_converters(rows, converters)


def _models(compiler: SQLCompiler) -> Callable[[list], list]:
    select, klass_info = compiler.select, compiler.klass_info
    db = compiler.using
    model = klass_info["model"]
    fields = klass_info["select_fields"]
    start, end = fields[0], fields[-1] + 1
    names = [column[0].target.attname for column in select[start:end]]
    populators = get_related_populators(klass_info, select, db)
    annotations = list(compiler.annotation_col_map.items())
    converted = _converted(compiler)

    def shape(rows: list) -> list:
        found = []
        for row in converted(rows):
            obj = model.from_db(db, names, row[start:end])
            for populator in populators:
                populator.populate(row, obj)
            for name, position in annotations:
                setattr(obj, name, row[position])
            found.append(obj)
        return found

    return shape


def _dicts(compiler: SQLCompiler) -> Callable[[list], list]:
    query = compiler.query
    names = (
        list(query.selected)
        if query.selected
        else [*query.extra_select, *query.values_select, *query.annotation_select]
    )
    converted = _converted(compiler)
    # A row may hold more than the names (as in Django's ValuesIterable, which reads by index).
    return lambda rows: [dict(zip(names, row, strict=False)) for row in converted(rows)]


def _tuples(compiler: SQLCompiler) -> Callable[[list], list]:
    converted = _converted(compiler)
    return lambda rows: [tuple(row) for row in converted(rows)]


def _flat(compiler: SQLCompiler) -> Callable[[list], list]:
    converted = _converted(compiler)
    return lambda rows: [row[0] for row in converted(rows)]


_SHAPES = {
    ModelIterable: _models,
    ValuesIterable: _dicts,
    ValuesListIterable: _tuples,
    FlatValuesListIterable: _flat,
}
