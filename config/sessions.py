"""The session engine (``SESSION_ENGINE``): Django's database sessions, each stored with the
user it signs in (frontend.models.Session), so that a request reads its session and its user
in one prepared query (config/prepared.py), the first query of nearly every request.

An expired session is not one, as in Django's own store; it is left for ``clearsessions``.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends import db
from django.utils import timezone

from config.prepared import Prepared
from frontend.models import Session

# The expiry is compared here, not in the SQL: a time is not a parameter a plan can hold.
SESSION = Prepared(
    lambda key: Session.objects.filter(session_key=key).select_related("user"), key=str
)

# The user of the session this thread read last (None: nobody), for the authentication
# backend (config/auth.py), which Django asks for the session's user right after.
session_user: ContextVar[Any] = ContextVar("session_user", default=None)


class SessionStore(db.SessionStore):
    @classmethod
    def get_model_class(cls) -> type[Session]:
        return Session

    def load(self) -> dict:
        found = SESSION.first(key=self.session_key) if self.session_key else None
        if found is None or found.expire_date <= timezone.now():
            session_user.set(None)
            self._session_key = None
            return {}
        session_user.set(found.user)
        return self.decode(found.session_data)

    def create_model_instance(self, data: dict) -> Session:
        session = super().create_model_instance(data)
        session.user_id = signed_in(data)
        return session

    async def acreate_model_instance(self, data: dict) -> Session:
        session = await super().acreate_model_instance(data)
        session.user_id = signed_in(data)
        return session


def signed_in(data: dict) -> int | None:
    """The id of the user a session's data signs in, if any."""
    try:
        return int(data[SESSION_KEY])
    except (KeyError, TypeError, ValueError):
        return None
