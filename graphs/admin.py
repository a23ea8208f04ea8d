from django.contrib import admin

from .models import AppGraph, MemoryGraph


@admin.register(MemoryGraph)
class MemoryGraphAdmin(admin.ModelAdmin):
    list_display = ("project", "version", "status", "node_count", "edge_count", "created_at")
    list_filter = ("status", "project")
    readonly_fields = ("job", "parent", "file")


@admin.register(AppGraph)
class AppGraphAdmin(admin.ModelAdmin):
    list_display = ("project", "app", "version", "status", "node_count", "edge_count")
    list_filter = ("status", "project")
    readonly_fields = ("job", "file")
