from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("trajectories.api_urls")),
    path("api/v1/", include("annotate.api_urls")),
    path("api/v1/", include("devices.api_urls")),
    path("", include("frontend.urls")),
    path("", include("trajectories.urls")),
    path("", include("annotate.urls")),
    path("", include("devices.urls")),
]
