from django.contrib import admin

from .models import RLSettings, Rollout


@admin.register(RLSettings)
class RLSettingsAdmin(admin.ModelAdmin):
    list_display = ("project", "store_rollouts")


@admin.register(Rollout)
class RolloutAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "run_name", "template", "seed", "status", "reward", "steps")
    list_filter = ("status",)
    search_fields = ("run_name", "template")
    raw_id_fields = ("trajectory",)
