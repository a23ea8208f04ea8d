"""Waypoint's own session table gives way to Django's (django_session): every unexpired session
is copied there, so nobody is signed out by the upgrade, and the table is dropped.

Both tables hold what Django's session store encodes (the same signing salt); a signed-in
session also names the authentication backend that signed it in, and Waypoint's own
(``config.auth.UserBackend``) is gone: Django asks the backend a session names for its user
and signs the session out when the backend is not configured, so the name is changed to
Django's ModelBackend, which that backend was.
"""

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.db import migrations
from django.utils import timezone

BATCH = 1000
OURS = "config.auth.UserBackend"
DJANGOS = "django.contrib.auth.backends.ModelBackend"


def renamed(store, session_data, old, new):
    """The session's data with the backend ``old`` renamed ``new`` (as it was otherwise)."""
    data = store.decode(session_data)  # {} for what does not decode: left as it is
    if data.get(BACKEND_SESSION_KEY) != old:
        return session_data
    data[BACKEND_SESSION_KEY] = new
    return store.encode(data)


def copy_unexpired(source, target, alias, row_of):
    batch = []
    rows = source.objects.using(alias).filter(expire_date__gt=timezone.now())
    for row in rows.iterator(chunk_size=BATCH):
        batch.append(row_of(row))
        if len(batch) >= BATCH:
            write(target, alias, batch)
            batch = []
    write(target, alias, batch)


def write(model, alias, batch):
    # A key may be in both tables (0001 copied Django's sessions and left them): the copy
    # being carried over is the newer one.
    model.objects.using(alias).bulk_create(
        batch,
        update_conflicts=True,
        unique_fields=["session_key"],
        update_fields=["session_data", "expire_date"],
    )


def to_django_sessions(apps, schema_editor):
    target = apps.get_model("sessions", "Session")
    store = SessionStore()
    copy_unexpired(
        apps.get_model("frontend", "Session"),
        target,
        schema_editor.connection.alias,
        lambda row: target(
            session_key=row.session_key,
            session_data=renamed(store, row.session_data, OURS, DJANGOS),
            expire_date=row.expire_date,
        ),
    )


def to_our_sessions(apps, schema_editor):
    """Back: the sessions of Django's table, with the user each signs in (as 0001 did)."""
    alias = schema_editor.connection.alias
    target = apps.get_model("frontend", "Session")
    user_model = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    users = set(user_model.objects.using(alias).values_list("pk", flat=True))
    store = SessionStore()

    def row_of(row):
        try:
            user = int(store.decode(row.session_data)[SESSION_KEY])
        except (KeyError, TypeError, ValueError):
            user = None
        return target(
            session_key=row.session_key,
            session_data=renamed(store, row.session_data, DJANGOS, OURS),
            expire_date=row.expire_date,
            user_id=user if user in users else None,
        )

    copy_unexpired(apps.get_model("sessions", "Session"), target, alias, row_of)


class Migration(migrations.Migration):
    dependencies = [
        ("frontend", "0001_sessions"),
        ("sessions", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(to_django_sessions, to_our_sessions),
        migrations.DeleteModel(name="Session"),
    ]
