from django.contrib import admin

from .models import Assignment, ReviewComment


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "annotator", "assigned_by", "assigned_at")
    list_select_related = ("trajectory__task", "annotator", "assigned_by")
    raw_id_fields = ("trajectory",)


@admin.register(ReviewComment)
class ReviewCommentAdmin(admin.ModelAdmin):
    list_display = ("trajectory", "step_index", "author", "created_at", "resolved")
    list_filter = ("resolved",)
    raw_id_fields = ("trajectory",)
