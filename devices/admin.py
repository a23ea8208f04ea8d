from django.contrib import admin

from .models import Device, Lease


@admin.register(Lease)
class LeaseAdmin(admin.ModelAdmin):
    list_display = ("serial", "adb_server", "holder", "trajectory", "heartbeat_at", "expires_at")
    list_select_related = ("holder",)


@admin.register(Device)
class DeviceAdmin(admin.ModelAdmin):
    list_display = ("serial", "label", "max_lease_seconds")
    search_fields = ("serial", "label")
    filter_horizontal = ("projects",)
