"""Admin: a window onto the registry. Workflows (versions, statuses, publishing) go through the
pages and services, so the admin shows those rows read-only."""

from django.contrib import admin

from .models import (
    Area,
    Benchmark,
    LabelCategory,
    Metric,
    MetricStatusChange,
    MetricVersion,
    MetricVersionText,
    Release,
    ReleaseItem,
    Subarea,
)


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class SubareaInline(admin.TabularInline):
    model = Subarea
    extra = 0
    fields = ["slug", "name", "position"]


@admin.register(Area)
class AreaAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "position"]
    inlines = [SubareaInline]


@admin.register(Subarea)
class SubareaAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "area", "position"]
    list_filter = ["area"]


@admin.register(LabelCategory)
class LabelCategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "polarity", "position"]
    list_filter = ["polarity"]
    readonly_fields = ["slug"]  # stable: labels and exports refer to it


@admin.register(Benchmark)
class BenchmarkAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "license", "created_at"]
    search_fields = ["name", "slug", "citation"]


class MetricVersionInline(ReadOnlyInline):
    model = MetricVersion
    fields = ["number", "name", "polarity", "label_category", "created_by", "created_at"]
    readonly_fields = fields


class MetricStatusChangeInline(ReadOnlyInline):
    model = MetricStatusChange
    fields = ["from_status", "to_status", "changed_by", "changed_at", "reason"]
    readonly_fields = fields
    show_change_link = False


@admin.register(Metric)
class MetricAdmin(admin.ModelAdmin):
    list_display = ["key", "current_version", "validation_status", "source_kind", "benchmark"]
    list_filter = ["validation_status", "source_kind", "benchmark"]
    search_fields = ["key", "current_version__name", "current_version__criterion", "credit_name"]
    readonly_fields = [
        "key",
        "validation_status",
        "source_kind",
        "contributor",
        "benchmark",
        "current_version",
        "created_at",
        "updated_at",
    ]
    fields = [*readonly_fields, "credit_name", "source_reference"]
    inlines = [MetricVersionInline, MetricStatusChangeInline]

    def has_add_permission(self, request) -> bool:
        return False  # metrics are created by submissions review and imports

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # keys are never reused and releases cite them


@admin.register(MetricVersion)
class MetricVersionAdmin(admin.ModelAdmin):
    list_display = ["__str__", "polarity", "label_category", "created_at"]
    list_filter = ["polarity", "label_category"]
    search_fields = ["metric__key", "name", "criterion"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # immutable by design

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(MetricVersionText)
class MetricVersionTextAdmin(admin.ModelAdmin):
    """Read and, if need be, delete; texts are written and reviewed on the workspace page,
    whose services check that writers and reviewers read the language."""

    list_display = ["metric_version", "language", "name", "provenance", "reviewed_at"]
    list_filter = ["provenance", "language"]
    search_fields = ["metric_version__metric__key", "name", "criterion"]
    list_select_related = ["metric_version__metric"]
    readonly_fields = [
        "metric_version",
        "language",
        "name",
        "criterion",
        "failure_condition",
        "provenance",
        "written_by",
        "reviewed_by",
        "reviewed_at",
        "created_at",
        "updated_at",
    ]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(MetricStatusChange)
class MetricStatusChangeAdmin(admin.ModelAdmin):
    list_display = ["metric", "from_status", "to_status", "changed_by", "changed_at"]
    list_filter = ["to_status"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class ReleaseItemInline(ReadOnlyInline):
    model = ReleaseItem
    fields = ["metric", "metric_version"]
    readonly_fields = fields
    show_change_link = False


@admin.register(Release)
class ReleaseAdmin(admin.ModelAdmin):
    list_display = ["version", "title", "status", "published_at", "published_by"]
    list_filter = ["status"]
    inlines = [ReleaseItemInline]
    readonly_fields = ["status", "published_at", "published_by", "created_by", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.is_published:
            return ["version", "title", "notes", *self.readonly_fields]
        return self.readonly_fields

    def has_add_permission(self, request) -> bool:
        return False  # drafted on the Releases page, which validates the version

    def has_delete_permission(self, request, obj=None) -> bool:
        # The user's own permission first: being in the admin is not permission to delete.
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or not obj.is_published)
