from django.contrib import admin

from core.admin import ReadOnlyModelAdmin

from .models import Assignment, ContestedMetricKeep, QueueItem, Rating, RatingQueue


@admin.register(RatingQueue)
class RatingQueueAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "required_ratings", "status", "external_panel", "created_at")
    list_filter = ("kind", "status", "external_panel")
    search_fields = ("name",)
    filter_horizontal = ("eligible_raters",)

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # deleting a queue would delete its ratings with it


@admin.register(QueueItem)
class QueueItemAdmin(admin.ModelAdmin):
    # Counters are the assignment invariant; only the services change them.
    list_display = ("queue", "kind", "object_id", "ratings_done", "claims_open", "required")
    list_filter = ("kind",)
    readonly_fields = ("ratings_done", "claims_open", "required", "completed_at")
    raw_id_fields = ("queue", "metric", "owner")

    def has_add_permission(self, request) -> bool:
        return False  # items are drawn by the queue services

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # deleting an item would delete its ratings with it


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyModelAdmin):
    """Claimed and released by the rater through the queue pages only."""

    list_display = ("item", "rater", "status", "claimed_at", "expires_at")
    list_filter = ("status",)


@admin.register(Rating)
class RatingAdmin(ReadOnlyModelAdmin):
    """Written by the expert who rated, through the rating pages only."""

    list_display = ("item", "rater", "submitted_at", "seconds_spent", "undone")
    list_filter = ("undone",)


@admin.register(ContestedMetricKeep)
class ContestedMetricKeepAdmin(admin.ModelAdmin):
    list_display = ("metric", "kept_by", "kept_at")
    raw_id_fields = ("metric", "kept_by")
