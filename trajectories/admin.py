from django.contrib import admin

from . import models


class MembershipInline(admin.TabularInline):
    model = models.Membership
    extra = 0


@admin.register(models.Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "created_by", "created_at")
    inlines = [MembershipInline]


@admin.register(models.Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("uid", "goal", "project", "intent", "difficulty")
    list_filter = ("intent", "difficulty", "project")
    search_fields = ("uid", "goal")


class StepInline(admin.TabularInline):
    model = models.Step
    extra = 0
    fields = ("index", "action_type", "action", "summary", "memory", "trainable")
    show_change_link = True


@admin.register(models.Trajectory)
class TrajectoryAdmin(admin.ModelAdmin):
    list_display = ("uid", "task", "project", "status", "outcome", "source", "step_count")
    list_filter = ("status", "outcome", "source", "project")
    search_fields = ("uid", "task__goal", "recorder_name")
    raw_id_fields = ("task", "final_screen", "recorded_by")
    inlines = [StepInline]


@admin.register(models.Step)
class StepAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "index", "action_type", "summary")
    raw_id_fields = ("trajectory", "screen")


@admin.register(models.Screen)
class ScreenAdmin(admin.ModelAdmin):
    list_display = ("id", "trajectory", "package", "activity", "width", "height")
    raw_id_fields = ("trajectory", "screenshot", "ui_xml")


@admin.register(models.Blob)
class BlobAdmin(admin.ModelAdmin):
    list_display = ("sha256", "content_type", "size", "created_at")


@admin.register(models.Subgoal)
class SubgoalAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "start", "end", "text", "success", "origin")
    raw_id_fields = ("trajectory",)


@admin.register(models.MemoryTarget)
class MemoryTargetAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "key", "value", "encode_step")
    raw_id_fields = ("trajectory",)


@admin.register(models.Anchor)
class AnchorAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "key", "type", "step_index", "content")
    raw_id_fields = ("trajectory",)


@admin.register(models.AnchorLink)
class AnchorLinkAdmin(admin.ModelAdmin):
    list_display = ("source", "relation", "target", "critical")
    raw_id_fields = ("source", "target")


@admin.register(models.AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("at", "kind", "actor", "project", "trajectory")
    list_filter = ("kind",)
    raw_id_fields = ("trajectory", "project")


@admin.register(models.Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "format", "status", "project", "done", "total", "created_at")
    list_filter = ("kind", "status")
