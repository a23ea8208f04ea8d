"""The OpenAPI schema and its docs page: who may read them, and what the schema says.

Both need a login unless ``WAYPOINT_PUBLIC_API_DOCS`` opens them: the schema lists every
endpoint and field, which is more than an anonymous visitor of a private instance should learn.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import BasePermission

from trajectories.validation import MAX_INT


class DocsReadable(BasePermission):
    """Signed in (session or token), or the docs are public by setting."""

    def has_permission(self, request, view) -> bool:
        return settings.WAYPOINT_PUBLIC_API_DOCS or bool(request.user.is_authenticated)


class SchemaView(SpectacularAPIView):
    permission_classes = [DocsReadable]


class DocsView(SpectacularSwaggerView):
    permission_classes = [DocsReadable]


def docs_view(request: HttpRequest, *args, **kwargs) -> HttpResponse:
    """The browsable docs; a visitor who is not signed in is sent to the login page.

    Only a visit (GET or HEAD) is redirected: any other method answers in JSON, as everything
    under ``/api/`` does.
    """
    visit = request.method in ("GET", "HEAD")
    if visit and not settings.WAYPOINT_PUBLIC_API_DOCS and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return DocsView.as_view(url_name="api-schema")(request, *args, **kwargs)


# ------------------------------------------------------------------ what the schema documents

ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
GENERIC = {
    400: "The request is malformed: a missing or mistyped field, an unknown choice, a bad page "
    "number or page size (the message names the field).",
    401: "Not authenticated.",
    404: "No such object, or not one of the user's projects (or a page past the last one).",
    406: "None of the media types in the Accept header can be served.",
    415: "The request body's content type is not one this operation reads.",
    422: "The request is well-formed but breaks a rule given the stored data (a step past the "
    "last one, an unknown user, a file that is not an archive); the message names the field.",
}
METHODS = ("get", "post", "put", "patch", "delete")


def _add(responses: dict[str, Any], status: int) -> None:
    responses.setdefault(str(status), {"description": GENERIC[status], "content": ERROR})


def document_errors(result: dict[str, Any], generator, request, public) -> dict[str, Any]:
    """Document the statuses that ``config/errors.py`` and DRF answer for every operation.

    A drf-spectacular postprocessing hook: each view documents its own outcomes (201, 409, …);
    the ones every endpoint shares are added here, so that no answer is undocumented.
    """
    for operation in _operations(result):
        responses = operation["responses"]
        parameters = operation.get("parameters", [])
        if operation.get("security") != [{}] and "security" in operation:
            _add(responses, 401)
        _add(responses, 406)
        if any(p["in"] == "path" for p in parameters) or _paginated(parameters):
            _add(responses, 404)
        if operation.get("requestBody") or any(p["in"] == "query" for p in parameters):
            _add(responses, 400)
        if operation.get("requestBody"):
            _add(responses, 415)
        if "400" in responses and operation["operationId"] not in NO_DOMAIN_RULES:
            _add(responses, 422)
        for parameter in parameters:
            _bound(parameter.get("schema", {}))
    for name, component in result.get("components", {}).get("schemas", {}).items():
        if name.endswith("Request"):
            _bound(component)
    return result


NO_NULL = "^[^\\x00]*$"


def _bound(schema: dict[str, Any]) -> None:
    """Say what the API refuses in any input: text with a NUL character (DRF refuses it, as
    PostgreSQL cannot store one) and integers beyond the database's (a 400)."""
    if schema.get("type") == "string" and not ({"format", "enum", "pattern"} & set(schema)):
        schema["pattern"] = NO_NULL
    if schema.get("format") == "binary":
        schema.setdefault("minLength", 1)  # an empty upload is no upload
    if schema.get("type") == "integer":
        schema.setdefault("maximum", MAX_INT)
        schema.setdefault("minimum", -MAX_INT - 1)
    for child in schema.get("properties", {}).values():
        _bound(child)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            _bound(schema[key])


# Operations whose input is checked by its shape alone: they never answer 422.
NO_DOMAIN_RULES = {"auth_token_create"}


def _operations(result: dict[str, Any]):
    for item in result.get("paths", {}).values():
        for method in METHODS:
            if method in item:
                yield item[method]


def _paginated(parameters: list[dict[str, Any]]) -> bool:
    return any(p["in"] == "query" and p["name"] == "page" for p in parameters)


# ----------------------------------------------------------------- query parameters, checked


@functools.cache
def documented_query_parameters() -> dict[tuple[str, str], frozenset[str]]:
    """(path, method) → the query parameters the schema documents for that operation."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    found = {}
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                names = {
                    p["name"] for p in item[method].get("parameters", []) if p["in"] == "query"
                }
                found[(path, method.upper())] = frozenset(names)
    return found


class UnknownQueryParameterMiddleware:
    """An API request naming a query parameter its operation does not take is a 400.

    A misspelt filter (``?stauts=approved``) would otherwise be ignored and answer every row.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view, args, kwargs) -> HttpResponse | None:
        if not request.path.startswith("/api/") or not request.GET:
            return None
        route = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", request.resolver_match.route)
        known = documented_query_parameters().get((route, request.method))
        if known is None:
            return None  # not a documented operation: its own answer says what is wrong
        unknown = sorted(set(request.GET) - known)
        if not unknown:
            return None
        listed = ", ".join(sorted(known)) or "none"
        return JsonResponse(
            {"detail": f"unknown query parameter {unknown[0]!r} (known: {listed})"}, status=400
        )
