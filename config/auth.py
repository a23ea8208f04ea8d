"""Who is asking: the user of a session (read with the session) and of an API token, read by
prepared queries (config/prepared.py), since every signed-in request asks first."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from config.prepared import Prepared
from config.sessions import session_user

USER = Prepared(lambda pk: get_user_model()._default_manager.filter(pk=pk), pk=int)
TOKEN = Prepared(lambda key: Token.objects.select_related("user").filter(key=key), key=str)


class UserBackend(ModelBackend):
    """Django's ModelBackend (passwords, permissions), with the session's user read with the
    session (config/sessions.py), or else by a prepared query."""

    def get_user(self, user_id):
        read = session_user.get()
        if read is not None and str(read.pk) == str(user_id):
            session_user.set(None)  # it is this request's: nobody else takes it
            user = read
        else:
            try:
                user = USER.first(pk=user_id)
            except (TypeError, ValueError):
                return None
        return user if user is not None and self.user_can_authenticate(user) else None


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's ``Authorization: Token <key>``, with the token and its user in one prepared
    query."""

    def authenticate_credentials(self, key):
        token = TOKEN.first(key=key)
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return (token.user, token)
