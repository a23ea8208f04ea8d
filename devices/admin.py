from django.contrib import admin

from .models import Lease


@admin.register(Lease)
class LeaseAdmin(admin.ModelAdmin):
    list_display = ("serial", "adb_server", "holder", "trajectory", "heartbeat_at", "expires_at")
    list_select_related = ("holder",)
