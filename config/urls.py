from django.contrib import admin
from django.urls import include, path, re_path

from config import errors, schema

urlpatterns = [
    path("admin/", admin.site.urls),
    # Both need a login unless WAYPOINT_PUBLIC_API_DOCS opens them.
    path("api/v1/schema/", schema.SchemaView.as_view(), name="api-schema"),
    path("api/v1/docs/", schema.docs_view, name="api-docs"),
    path("api/v1/", include("trajectories.api_urls")),
    path("api/v1/", include("annotate.api_urls")),
    path("api/v1/", include("devices.api_urls")),
    path("api/v1/", include("formats.api_urls")),
    path("api/v1/", include("graphs.api_urls")),
    path("api/v1/", include("evaluation.api_urls")),
    path("api/v1/", include("agents.api_urls")),
    path("api/v1/", include("explore.api_urls")),
    # Everything under /api/ answers JSON: a path that names no endpoint is a JSON 404.
    re_path(r"^api/", errors.api_not_found, name="api-not-found"),
    path("", include("frontend.urls")),
    path("", include("trajectories.urls")),
    path("", include("formats.urls")),
    path("", include("graphs.urls")),
    path("", include("evaluation.urls")),
    path("", include("annotate.urls")),
    path("", include("devices.urls")),
    path("", include("agents.urls")),
    path("", include("explore.urls")),
    path("", include("environments.urls")),
]

handler400 = "config.errors.bad_request"
handler404 = "config.errors.page_not_found"
handler500 = "config.errors.server_error"
