"""One error path: every domain error is mapped to an HTTP answer here, and only here.

The API answers ``{"detail": message}`` (:func:`api_exception_handler` is DRF's handler),
HTML pages answer a styled page with the site's navigation (:class:`DomainErrorMiddleware`), and
anything under ``/api/`` answers JSON, unknown paths included. Views raise; they never catch an
error only to turn it into a response, and they need no decorator to get the right status.

A database that does not answer is a 503 with ``Retry-After`` everywhere, its page drawn without
the database (no session, no user): :func:`database_unavailable`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.db import DataError, InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import Resolver404, resolve
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

# The one place that imports the domain's exceptions for mapping them to HTTP.
from devices.services import DeviceGone, DeviceUnavailable, LeaseConflict, RecordingError
from devices.services.adb import DeviceNotFound
from trajectories.access import AccessDenied
from trajectories.bounds import human_size
from trajectories.labels.protocol import StaleVersion
from trajectories.validation import MAX_INT, InvalidData, InvalidRequest

API_PREFIX = "/api/"

# How long a client is asked to wait before it tries again when the database is not answering.
RETRY_AFTER_S = 5
DATABASE_UNAVAILABLE = "the database is not answering; try again shortly"

# Domain error → (HTTP status, the page's title). The first matching class wins, so a subclass
# (DeviceGone is a RecordingError) comes before its base.
ERRORS: list[tuple[type[Exception], int, str]] = [
    (AccessDenied, 403, "Not allowed"),
    (StaleVersion, 409, "Changed by someone else"),
    (DeviceGone, 410, "The device disconnected"),
    (LeaseConflict, 409, "The device is busy"),
    (RecordingError, 409, "The recording cannot go on"),
    (DeviceNotFound, 404, "No such device"),
    (DeviceUnavailable, 503, "The device is not available"),
    (InvalidRequest, 400, "Invalid input"),
    # An id or number too large for the database's integers.
    (OverflowError, 400, "Invalid input"),
    (DataError, 400, "Invalid input"),
    # Django's own limits on what a request may hold, hit while the body is read.
    (RequestDataTooBig, 400, "Request too large"),
    (TooManyFieldsSent, 400, "Request too large"),
    (TooManyFilesSent, 400, "Request too large"),
    # Well-formed, but against a rule of the domain given the stored data.
    (InvalidData, 422, "Not possible"),
    # The database refused the connection, dropped it, or is locked or overloaded: a moment's
    # outage, not the request's fault (Django wraps every driver's errors in these two).
    (OperationalError, 503, "The database is not answering"),
    (InterfaceError, 503, "The database is not answering"),
]

# Errors whose own text names the machinery, not the input: they get this message instead.
MESSAGES: dict[type[Exception], Callable[[], str]] = {
    OperationalError: lambda: DATABASE_UNAVAILABLE,
    InterfaceError: lambda: DATABASE_UNAVAILABLE,
    OverflowError: lambda: f"a number in the request is out of range (at most {MAX_INT})",
    DataError: lambda: (
        "a value in the request does not fit where it is stored (too long or too large)"
    ),
    RequestDataTooBig: lambda: (
        "the request body, files aside, is over the limit of "
        f"{human_size(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)} (DATA_UPLOAD_MAX_MEMORY_SIZE); "
        "send a large document as a multipart/form-data file"
    ),
    TooManyFieldsSent: lambda: (
        f"the request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields "
        "(DATA_UPLOAD_MAX_NUMBER_FIELDS)"
    ),
    TooManyFilesSent: lambda: (
        f"the request has more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files "
        "(DATA_UPLOAD_MAX_NUMBER_FILES)"
    ),
}

TITLES = {400: "Bad request", 403: "Not allowed", 404: "Not found", 405: "Method not allowed"}


def status_of(exc: BaseException) -> tuple[int, str] | None:
    """The HTTP status and the page title of a domain error, or None for other exceptions."""
    for kind, status, title in ERRORS:
        if isinstance(exc, kind):
            return status, title
    return None


def message_of(exc: BaseException) -> str:
    for kind, message in MESSAGES.items():
        if isinstance(exc, kind):
            return message()  # the limits as configured when it is raised
    return str(exc)


def extra_fields(exc: BaseException) -> dict[str, Any]:
    """What a client needs beyond the message: a stale edit names the stored version."""
    if isinstance(exc, StaleVersion):
        return {"version": exc.version}
    return {}


def headers_of(exc: BaseException) -> dict[str, str]:
    """The answer's headers: when to try again after a database outage."""
    if is_database_down(exc):
        return {"Retry-After": str(RETRY_AFTER_S)}
    return {}


def is_database_down(exc: BaseException | None) -> bool:
    return isinstance(exc, OperationalError | InterfaceError)


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


# ------------------------------------------------------------------------------------ the API


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, extended with the domain's errors; every answer is ``{"detail": ...}``."""
    mapped = status_of(exc)
    if mapped is not None:
        response = Response(
            {"detail": message_of(exc), **extra_fields(exc)},
            status=mapped[0],
            headers=headers_of(exc),
        )
    else:
        response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        # A serializer's errors become one message naming the first bad field.
        response.data = {"detail": first_error(response.data)}
    request = context.get("request")
    if request is not None:
        # An error is JSON even from an endpoint that answers YAML, images or files.
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = JSONRenderer.media_type
    return response


def first_error(errors: Any, field: str = "") -> str:
    """``"name: This field is required."`` from DRF's nested error structure."""
    if isinstance(errors, dict) and errors:
        key, inner = next(iter(errors.items()))
        if key in ("non_field_errors", "detail"):
            return first_error(inner, field)
        return first_error(inner, f"{field}.{key}" if field else str(key))
    if isinstance(errors, list) and errors:
        return first_error(errors[0], field)
    return f"{field}: {errors}" if field else str(errors)


@csrf_exempt  # nothing to protect: it changes nothing, and answers JSON, not a CSRF page
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """The answer to any path under ``/api/`` that names no endpoint, whatever the method."""
    detail = f"No API endpoint at {request.path}"
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_not_found:
            detail += f"; did you mean {request.path}/ ?"
    return JsonResponse({"detail": detail}, status=404)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: JSON under ``/api/``, the styled page elsewhere."""
    if is_api(request):
        return JsonResponse({"detail": str(exception) if exception else "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler400``: a request Django refused before a view ran (a body over its limits read
    by a middleware): JSON under ``/api/``, Django's page elsewhere."""
    if is_api(request):
        detail = message_of(exception) if exception and status_of(exception) else "Bad request."
        return JsonResponse({"detail": detail}, status=400)
    return defaults.bad_request(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: JSON under ``/api/``, the plain page elsewhere; the 503 of a database
    outage when that is what went wrong outside a view (a middleware saving the session)."""
    if is_database_down(sys.exc_info()[1]):
        return database_unavailable(request)
    if is_api(request):
        return JsonResponse({"detail": "Server error."}, status=500)
    return defaults.server_error(request)


def database_unavailable(request: HttpRequest) -> HttpResponse:
    """503 with ``Retry-After``: JSON under ``/api/``, the message alone for htmx, else a page
    that asks the database nothing (rendered without the request: no session, no user)."""
    headers = {"Retry-After": str(RETRY_AFTER_S)}
    if is_api(request):
        return JsonResponse({"detail": DATABASE_UNAVAILABLE}, status=503, headers=headers)
    if getattr(request, "htmx", False):
        plain = "text/plain; charset=utf-8"
        return HttpResponse(DATABASE_UNAVAILABLE, content_type=plain, status=503, headers=headers)
    page = render_to_string("503.html", {"message": DATABASE_UNAVAILABLE})
    return HttpResponse(page, status=503, headers=headers)


# ------------------------------------------------------------------------------------- pages


def error_page(request: HttpRequest, status: int, message: str, title: str = "") -> HttpResponse:
    """A page with the site's navigation saying what went wrong; htmx gets the message alone."""
    if getattr(request, "htmx", False):
        return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    context = {"status": status, "title": title or TITLES.get(status, "Error"), "message": message}
    return render(request, "error.html", context, status=status)


class DomainErrorMiddleware:
    """Turns a domain error raised by an HTML view into its status and a page that says why."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        mapped = status_of(exc)
        if mapped is None:
            if isinstance(exc, Http404) and is_api(request):
                return JsonResponse({"detail": str(exc) or "Not found."}, status=404)
            return None  # Http404 and PermissionDenied: Django's handlers render the templates
        if is_database_down(exc):
            return database_unavailable(request)
        status, title = mapped
        if is_api(request):
            return JsonResponse({"detail": message_of(exc), **extra_fields(exc)}, status=status)
        return error_page(request, status, message_of(exc), title)
