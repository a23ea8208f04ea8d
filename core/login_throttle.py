"""Login throttling: failed logins are counted per account and per client address (django-axes).

After ``WAYPOINT_LOGIN_FAILURE_LIMIT`` failures for an account, or from an address, further
logins for it are refused for ``WAYPOINT_LOGIN_COOLOFF_SECONDS``, the right password included,
on the login page (the page again, with the reason, status 429) and on the token endpoint
(``{"detail": ...}``, status 429, ``Retry-After``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

LOCKED_OUT_STATUS = 429


class ThrottledLogins(AxesStandaloneBackend):
    """Axes' check, for logins made through a web request.

    Logins without a request (Django's test client, a shell) have no address to count by;
    every web login path passes its request (the login form, the token endpoint, the admin).
    """

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def failure_limit(request: HttpRequest, credentials: Any = None) -> int:
    return settings.WAYPOINT_LOGIN_FAILURE_LIMIT


def cool_off(request: HttpRequest | None = None) -> timedelta:
    return timedelta(seconds=settings.WAYPOINT_LOGIN_COOLOFF_SECONDS)


def client_ip(request: HttpRequest) -> str:
    """The client's address: ``REMOTE_ADDR``, or behind ``WAYPOINT_PROXY_HOPS`` proxies the
    address the outermost of them saw (each appends one to ``X-Forwarded-For``; anything left of
    that was written by the client and is not trusted)."""
    hops = settings.WAYPOINT_PROXY_HOPS
    remote = request.META.get("REMOTE_ADDR", "")
    if hops <= 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [part for part in forwarded if part]
    if not forwarded:
        return remote
    return forwarded[-hops] if len(forwarded) >= hops else forwarded[0]


def _duration(seconds: int) -> str:
    if seconds % 60:
        return f"{seconds} seconds"
    minutes = seconds // 60
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


def locked_out_message() -> str:
    return (
        f"Too many failed logins for this account or from this address: logging in is "
        f"blocked for {_duration(settings.WAYPOINT_LOGIN_COOLOFF_SECONDS)} after the last "
        "failed attempt. Try again later, or ask an admin to unblock you."
    )


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: Any = None
) -> HttpResponse:
    """Axes' answer to a locked-out login: JSON for the API, the login page otherwise."""
    if request.path.startswith("/api/"):
        response: HttpResponse = locked_out_json()
    else:
        username = (credentials or {}).get("username") or request.POST.get("username", "")
        form = AuthenticationForm(request, initial={"username": username})
        context = {"form": form, "locked_out": locked_out_message(), "next": ""}
        response = render(request, "frontend/login.html", context, status=LOCKED_OUT_STATUS)
        response["Retry-After"] = str(settings.WAYPOINT_LOGIN_COOLOFF_SECONDS)
    return response


def locked_out_json() -> JsonResponse:
    response = JsonResponse({"detail": locked_out_message()}, status=LOCKED_OUT_STATUS)
    response["Retry-After"] = str(settings.WAYPOINT_LOGIN_COOLOFF_SECONDS)
    return response
