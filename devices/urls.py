"""The recording console's pages and the fragments its script asks for."""

from django.urls import path

from . import views

urlpatterns = [
    path("devices/", views.device_list, name="device-list"),
    path("devices/thumbs/<str:sha256>/", views.thumbnail, name="device-thumbnail"),
    path("devices/<str:serial>/", views.console, name="device-console"),
    path("devices/<str:serial>/settings/", views.device_settings, name="device-settings"),
    path("devices/<str:serial>/take/", views.take_device, name="device-take"),
    path("devices/<str:serial>/release/", views.release_device, name="device-release"),
    path("devices/<str:serial>/heartbeat/", views.heartbeat, name="device-heartbeat"),
    path("devices/<str:serial>/frame/", views.frame, name="device-frame"),
    path("devices/<str:serial>/elements/", views.elements, name="device-elements"),
    path("devices/<str:serial>/start/", views.start_recording, name="device-start"),
    path("devices/<str:serial>/tasks/", views.import_virtual_tasks, name="device-import-tasks"),
    path("devices/<str:serial>/act/", views.act, name="device-act"),
    path("devices/<str:serial>/finish/", views.finish, name="device-finish"),
    path("devices/<str:serial>/undo/", views.undo, name="device-undo"),
    path("devices/<str:serial>/note/", views.note, name="device-note"),
    path("devices/<str:serial>/panel/", views.recording_panel, name="device-panel"),
    path("devices/<str:serial>/labels/undo/", views.undo_labels, name="device-undo-labels"),
    path("devices/<str:serial>/memory/", views.memory_target, name="device-memory"),
    path(
        "devices/<str:serial>/memory/<int:target_id>/",
        views.memory_target_edit,
        name="device-memory-edit",
    ),
    path(
        "devices/<str:serial>/steps/<int:index>/labels/",
        views.step_labels,
        name="device-step-labels",
    ),
]
