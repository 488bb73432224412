from django.contrib import admin

from .models import Citation, Submission, SubmissionEvent


class CitationInline(admin.TabularInline):
    model = Citation
    extra = 0


class SubmissionEventInline(admin.TabularInline):
    model = SubmissionEvent
    extra = 0
    readonly_fields = ("from_status", "to_status", "actor", "note", "created_at")
    can_delete = False


@admin.register(Submission)
class SubmissionAdmin(admin.ModelAdmin):
    list_display = ("title", "contributor", "status", "submitted_at", "updated_at")
    list_filter = ("status", "age_context")
    search_fields = ("title", "behavior", "contributor__email")
    inlines = [CitationInline, SubmissionEventInline]
    readonly_fields = ("status", "submitted_at", "drafting_error", "drafting_attempts")
