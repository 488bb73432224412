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
    # Who wrote a submission is set when its author creates it and never changes.
    readonly_fields = (
        "contributor",
        "status",
        "submitted_at",
        "drafting_error",
        "drafting_attempts",
    )

    def has_add_permission(self, request) -> bool:
        return False  # submissions are written by their contributors, on the site
