"""What a project's trajectory lists compute, kept between requests until the data changes.

The list page and the API list answer most requests of a busy project: many people page
through the same few hundred rows. What those rows read (trajectories, their tasks and their
recorders' names) is kept here in each web process, keyed by the project's ``list_version``:
every change to that data adds one to it once the change is committed, so a request that loads
the project (as the access check does) reads the new version and misses the old entries;
nothing has to be deleted.

Changes are seen wherever they are made: saves and deletes (signals), and the querysets'
``update``, ``bulk_create`` and ``bulk_update`` (:class:`ListedQuerySet`). The version is
raised after the commit, never inside a transaction, so a long import does not hold the
project's row locked against everyone else's edits; however many rows a transaction writes,
one query raises the versions of the projects it touched. Inside a transaction
(``ATOMIC_REQUESTS``, a test case) the cache is not used: that transaction's own changes are
not counted yet.

``WAYPOINT_LIST_CACHE_S`` bounds how long an entry lives (0 turns the cache off); it also bounds
how long a change made outside Django (SQL by hand) can go unseen.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.apps import apps
from django.conf import settings
from django.core.cache import caches
from django.db import connection, models, transaction
from django.db.models import F
from django.urls import get_script_prefix
from django.utils import timezone, translation

T = TypeVar("T")
CACHE = "lists"
EVERY_PROJECT = None  # a change any project's list may show (a user's name)

# The projects changed since this thread's last commit ran its callbacks: each change registers
# a callback, and the first to run after the commit raises them all in one query; the others
# find nothing left. After a rollback the set is left over and raised by the next commit: a
# version raised once too often costs a list one computation, never a stale answer.
_pending = threading.local()


def _raise(projects: set[int | None]) -> None:
    # By name: the models use this module's queryset, so it cannot import them.
    rows = apps.get_model("trajectories", "Project").objects.all()
    if EVERY_PROJECT not in projects:
        rows = rows.filter(pk__in=projects)
    rows.update(list_version=F("list_version") + 1)


def _raise_pending() -> None:
    projects = getattr(_pending, "projects", None)
    _pending.projects = None
    if projects:
        _raise(projects)


def changed(project_ids: Iterable[int | None]) -> None:
    """The listed data of these projects changed: their lists are read again after the commit.
    ``EVERY_PROJECT`` (None) among them stands for all projects."""
    ids = set(project_ids)
    if not ids:
        return
    if not connection.in_atomic_block:
        _raise(ids)
        return
    if getattr(_pending, "projects", None) is None:
        _pending.projects = set()
    _pending.projects |= ids
    transaction.on_commit(_raise_pending)


def remembered(project: Any, name: str, parts: Any, compute: Callable[[], T]) -> T:
    """What ``compute`` returns for this project and these ``parts`` (any repr-able key), from
    this process's cache while the project's ``list_version`` has not changed since."""
    lifetime = settings.WAYPOINT_LIST_CACHE_S
    if not lifetime or connection.in_atomic_block:
        return compute()
    key, cache = _key(name, project.pk, project.list_version, parts), caches[CACHE]
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, lifetime)
    return value


def _key(name: str, project_id: int, version: int, parts: Any) -> str:
    # What a rendered value depends on besides the data: time zone, language, URL prefix.
    context = (
        timezone.get_current_timezone_name(),
        translation.get_language(),
        get_script_prefix(),
        parts,
    )
    digest = hashlib.blake2b(repr(context).encode(), digest_size=16).hexdigest()
    return f"{name}:{project_id}:{version}:{digest}"


class ListedQuerySet(models.QuerySet):
    """A queryset of a model whose rows lists show (it has a ``project``): writes that send no
    signals still raise the version of the projects they touch."""

    def _projects(self) -> set[int]:
        return set(self.order_by().values_list("project_id", flat=True).distinct())

    def update(self, **kwargs: Any) -> int:
        projects = self._projects()  # before: the update may move rows out of the filter
        rows = super().update(**kwargs)
        if rows:
            moved_to = kwargs.get("project_id", getattr(kwargs.get("project"), "pk", None))
            changed(projects | ({moved_to} if moved_to is not None else set()))
        return rows

    def update_in_project(self, project_id: int, **kwargs: Any) -> int:
        """:meth:`update` of rows the caller knows to be in the project ``project_id`` and to
        stay there (a trajectory it has loaded): no query to find their projects."""
        rows = super().update(**kwargs)
        if rows:
            changed({project_id})
        return rows

    def bulk_create(self, objs: Iterable[Any], *args: Any, **kwargs: Any) -> list[Any]:
        created = super().bulk_create(objs, *args, **kwargs)
        changed({o.project_id for o in created})
        return created

    def bulk_update(self, objs: Iterable[Any], fields: Any, *args: Any, **kwargs: Any) -> int:
        objs = list(objs)
        rows = super().bulk_update(objs, fields, *args, **kwargs)
        changed({o.project_id for o in objs})
        return rows


def row_changed(sender: type, instance: Any, **kwargs: Any) -> None:
    """A saved or deleted trajectory or task."""
    if instance.project_id is not None:
        changed({instance.project_id})


def user_changed(sender: type, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """A user saved or deleted: lists name recorders. A login (``last_login`` alone) is not a
    change that lists show."""
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return
    changed({EVERY_PROJECT})
