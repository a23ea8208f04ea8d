"""The web front's own data: the sessions of signed-in browsers."""

from __future__ import annotations

from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models
from django.utils.module_loading import import_string


class Session(AbstractBaseSession):
    """A browser's session, with the user it signs in (Django's own sessions keep only their
    data): a request reads the two in one query (config/sessions.py), and a user's sessions
    end with the user."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )

    class Meta(AbstractBaseSession.Meta):
        db_table = "frontend_session"

    @classmethod
    def get_session_store_class(cls):
        return import_string(f"{settings.SESSION_ENGINE}.SessionStore")
