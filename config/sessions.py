"""The session engine (``SESSION_ENGINE``): Django's database sessions, read by a prepared
query (config/prepared.py), since every signed-in request reads its session first.

An expired session is not one, as in Django's own store; it is left for ``clearsessions``.
"""

from __future__ import annotations

from django.contrib.sessions.backends import db
from django.contrib.sessions.models import Session
from django.utils import timezone

from config.prepared import Prepared

# The expiry is compared here, not in the SQL: a time is not a parameter a plan can hold.
SESSION = Prepared(
    lambda key: Session.objects.filter(session_key=key).values_list("session_data", "expire_date"),
    key=str,
)


class SessionStore(db.SessionStore):
    def load(self) -> dict:
        found = SESSION.first(key=self.session_key) if self.session_key else None
        if found is None or found[1] <= timezone.now():
            self._session_key = None
            return {}
        return self.decode(found[0])
