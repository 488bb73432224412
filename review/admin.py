from django.contrib import admin

from .models import Assignment, ContestedMetricKeep, QueueItem, Rating, RatingQueue


@admin.register(RatingQueue)
class RatingQueueAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "required_ratings", "status", "external_panel", "created_at")
    list_filter = ("kind", "status", "external_panel")
    search_fields = ("name",)
    filter_horizontal = ("eligible_raters",)


@admin.register(QueueItem)
class QueueItemAdmin(admin.ModelAdmin):
    # Counters are the assignment invariant; only the services change them.
    list_display = ("queue", "kind", "object_id", "ratings_done", "claims_open", "required")
    list_filter = ("kind",)
    readonly_fields = ("ratings_done", "claims_open", "required", "completed_at")
    raw_id_fields = ("queue", "metric", "owner")


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("item", "rater", "status", "claimed_at", "expires_at")
    list_filter = ("status",)
    raw_id_fields = ("queue", "item", "rater")

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ("item", "rater", "submitted_at", "seconds_spent", "undone")
    list_filter = ("undone",)
    raw_id_fields = ("queue", "item", "assignment", "rater")

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(ContestedMetricKeep)
class ContestedMetricKeepAdmin(admin.ModelAdmin):
    list_display = ("metric", "kept_by", "kept_at")
    raw_id_fields = ("metric", "kept_by")
