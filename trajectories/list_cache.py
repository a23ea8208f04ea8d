"""What a project's trajectory lists compute, kept between requests until the data changes.

The list page and the API list answer most requests of a busy project: many people page
through the same few hundred rows. What those rows read (trajectories, their tasks and their
recorders' names) is kept here in each web process, keyed by a version of the project: every
change to that data adds one to it once the change is committed, so a request that loads the
project (as the access check does) reads the new version and misses the old entries; nothing
has to be deleted.

Two versions, because annotators change labels all day: a label edit raises the trajectory's
``version`` (and ``updated_at``), which the API list shows and the list page does not. It
raises the project's ``data_version`` (the API list's key) but not its ``page_version`` (the
list page's key); every other change raises both.

Changes are seen wherever they are made: saves and deletes (signals), and the querysets'
``update``, ``bulk_create`` and ``bulk_update`` (:class:`ListedQuerySet`). The version is
raised after the commit, never inside a transaction, so a long import does not hold the
project's row locked against everyone else's edits. Inside a transaction (``ATOMIC_REQUESTS``,
a test case) the cache is not used: that transaction's own changes are not counted yet.

``WAYPOINT_LIST_CACHE_S`` bounds how long an entry lives (0 turns the cache off); it also bounds
how long a change made outside Django (SQL by hand) can go unseen.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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


# A trajectory's fields that a label edit changes (trajectories/edits.py bump): shown by the
# API list, not by the list page.
LABEL_FIELDS = frozenset({"version", "updated_at"})
ALL_VERSIONS = ("data_version", "page_version")


@dataclass(frozen=True)
class _Raise:
    """The version bump of some projects (or of all) after the current transaction commits;
    equal bumps are registered once per transaction, however many rows a write touches."""

    project_ids: frozenset[int] | None
    fields: tuple[str, ...]

    def __call__(self) -> None:
        # By name: the models use this module's queryset, so it cannot import them.
        projects = apps.get_model("trajectories", "Project").objects.all()
        if self.project_ids is not None:
            projects = projects.filter(pk__in=self.project_ids)
        projects.update(**{field: F(field) + 1 for field in self.fields})


def _after_commit(bump: _Raise) -> None:
    if connection.in_atomic_block:
        if any(pending == bump for _, pending, _ in connection.run_on_commit):
            return
        transaction.on_commit(bump)
    else:
        bump()


def changed(project_ids: Iterable[int | None], *, labels_only: bool = False) -> None:
    """The listed data of these projects changed: their lists are read again after the commit
    (``labels_only``: only what shows trajectories' versions, the API list)."""
    ids = frozenset(pk for pk in project_ids if pk is not None)
    if ids:
        _after_commit(_Raise(ids, ("data_version",) if labels_only else ALL_VERSIONS))


def changed_everywhere() -> None:
    """A change that any project's list may show (a user's name): every list is read again."""
    _after_commit(_Raise(None, ALL_VERSIONS))


def remembered(project: Any, version: int, name: str, parts: Any, compute: Callable[[], T]) -> T:
    """What ``compute`` returns for this project and these ``parts`` (any repr-able key), from
    this process's cache while the project's ``version`` (its ``data_version`` for what shows
    trajectories' versions, else its ``page_version``) has not changed since it was computed."""
    lifetime = settings.WAYPOINT_LIST_CACHE_S
    if not lifetime or connection.in_atomic_block:
        return compute()
    key, cache = _key(name, project.pk, version, parts), caches[CACHE]
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, lifetime)
    return value


def kept_up(
    project: Any, name: str, parts: Any, compute: Callable[[], T], refresh: Callable[[T], T]
) -> T:
    """:func:`remembered` for what shows trajectories' versions, kept while the project's
    ``page_version`` holds: when only labels changed since (its ``data_version`` rose, with
    trajectories' ``version`` and ``updated_at``), ``refresh(value)`` brings the kept value up
    to date instead of ``compute()`` working it out again. Annotators' edits then cost a list
    a small query instead of all its rows."""
    lifetime = settings.WAYPOINT_LIST_CACHE_S
    if not lifetime or connection.in_atomic_block:
        return compute()
    key, cache = _key(name, project.pk, project.page_version, parts), caches[CACHE]
    kept = cache.get(key)
    if kept is not None and kept[0] == project.data_version:
        return kept[1]
    value = refresh(kept[1]) if kept is not None else compute()
    cache.set(key, (project.data_version, value), lifetime)
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
            changed(projects | {moved_to}, labels_only=set(kwargs) <= LABEL_FIELDS)
        return rows

    def bulk_create(self, objs: Iterable[Any], *args: Any, **kwargs: Any) -> list[Any]:
        created = super().bulk_create(objs, *args, **kwargs)
        changed(o.project_id for o in created)
        return created

    def bulk_update(self, objs: Iterable[Any], fields: Any, *args: Any, **kwargs: Any) -> int:
        objs = list(objs)
        rows = super().bulk_update(objs, fields, *args, **kwargs)
        changed(o.project_id for o in objs)
        return rows


def row_changed(sender: type, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """A saved or deleted trajectory or task."""
    labels_only = update_fields is not None and set(update_fields) <= LABEL_FIELDS
    changed([instance.project_id], labels_only=labels_only)


def user_changed(sender: type, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """A user saved or deleted: lists name recorders. A login (``last_login`` alone) is not a
    change that lists show."""
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return
    changed_everywhere()
