"""Device URLs of the REST API, mounted under ``/api/v1/`` by ``config.urls``."""

from django.urls import path

from . import api

urlpatterns = [
    path("devices/", api.DeviceListView.as_view(), name="api-devices"),
    path("devices/<str:serial>", api.DeviceView.as_view(), name="api-device"),
    path("devices/<str:serial>/lease", api.LeaseView.as_view(), name="api-device-lease"),
    path(
        "devices/<str:serial>/trajectories",
        api.StartRecordingView.as_view(),
        name="api-device-trajectories",
    ),
    path("devices/<str:serial>/actions", api.ActionView.as_view(), name="api-device-actions"),
    path(
        "devices/<str:serial>/finish", api.FinishRecordingView.as_view(), name="api-device-finish"
    ),
    path("devices/<str:serial>/frame", api.FrameView.as_view(), name="api-device-frame"),
]
