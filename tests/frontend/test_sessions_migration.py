"""The upgrade from Waypoint's own session table to Django's keeps people signed in
(frontend/migrations/0002_django_sessions.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("frontend", "0001_sessions")]
AFTER = [("frontend", "0002_django_sessions")]
OUR_BACKEND = "config.auth.UserBackend"


def migrate(to: list[tuple[str, str]]):
    """The database migrated to ``to``; the models as they were there."""
    executor = MigrationExecutor(connection)
    executor.migrate(to)
    return executor.loader.project_state(to).apps


@pytest.fixture
def before_upgrade():
    """The database as it was before the upgrade; migrated to the latest afterwards."""
    try:
        yield migrate(BEFORE)
    finally:
        migrate(AFTER)


def signed_in_data(user, backend: str = OUR_BACKEND) -> dict:
    """A session's data as Django's login() writes it."""
    return {
        "_auth_user_id": str(user.pk),
        "_auth_user_backend": backend,
        "_auth_user_hash": user.get_session_auth_hash(),
    }


def test_the_upgrade_keeps_people_signed_in(before_upgrade, alice, bob):
    ours = before_upgrade.get_model("frontend", "Session")
    store = SessionStore()
    later = timezone.now() + timedelta(days=1)
    ours.objects.create(
        session_key="a" * 32,
        session_data=store.encode(signed_in_data(alice)),
        expire_date=later,
        user_id=alice.pk,
    )
    ours.objects.create(
        session_key="b" * 32,
        session_data=store.encode(signed_in_data(bob)),
        expire_date=timezone.now() - timedelta(seconds=1),
        user_id=bob.pk,
    )
    ours.objects.create(
        session_key="c" * 32, session_data=store.encode({"seen": [1, 2]}), expire_date=later
    )
    # What 0001 copied and left in Django's table, since changed in Waypoint's.
    Session.objects.create(
        session_key="c" * 32, session_data=store.encode({"seen": [1]}), expire_date=later
    )

    migrate(AFTER)

    assert set(Session.objects.values_list("session_key", flat=True)) == {"a" * 32, "c" * 32}
    assert SessionStore("c" * 32).load() == {"seen": [1, 2]}
    browser = Client()
    browser.cookies["sessionid"] = "a" * 32
    response = browser.get(reverse("project-list"))
    assert response.status_code == 200
    assert b'<span class="who">alice</span>' in response.content
    expired = Client()
    expired.cookies["sessionid"] = "b" * 32
    assert expired.get(reverse("project-list")).status_code == 302


def test_the_upgrade_can_be_undone_with_its_sessions(alice):
    store = SessionStore()
    Session.objects.create(
        session_key="a" * 32,
        session_data=store.encode(
            signed_in_data(alice, "django.contrib.auth.backends.ModelBackend")
        ),
        expire_date=timezone.now() + timedelta(days=1),
    )
    try:
        ours = migrate(BEFORE).get_model("frontend", "Session")
        (row,) = ours.objects.all()
        assert (row.session_key, row.user_id) == ("a" * 32, alice.pk)
        assert store.decode(row.session_data) == signed_in_data(alice)
    finally:
        migrate(AFTER)
