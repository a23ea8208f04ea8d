"""The OpenAPI schema and its docs page: who may read them, and what the schema says.

Both need a login unless ``WAYPOINT_PUBLIC_API_DOCS`` opens them: the schema lists every
endpoint and field, which is more than an anonymous visitor of a private instance should learn.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import BasePermission


class DocsReadable(BasePermission):
    """Signed in (session or token), or the docs are public by setting."""

    def has_permission(self, request, view) -> bool:
        return settings.WAYPOINT_PUBLIC_API_DOCS or bool(request.user.is_authenticated)


class SchemaView(SpectacularAPIView):
    permission_classes = [DocsReadable]


class DocsView(SpectacularSwaggerView):
    permission_classes = [DocsReadable]


def docs_view(request: HttpRequest, *args, **kwargs) -> HttpResponse:
    """The browsable docs; a visitor who is not signed in is sent to the login page."""
    if not settings.WAYPOINT_PUBLIC_API_DOCS and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return DocsView.as_view(url_name="api-schema")(request, *args, **kwargs)
