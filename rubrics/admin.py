from django.contrib import admin

from .models import RubricDimension


@admin.register(RubricDimension)
class RubricDimensionAdmin(admin.ModelAdmin):
    """The dimension vocabulary is data: maintainers add dimensions without a code change."""

    list_display = ("slug", "name", "position")
    ordering = ("position", "slug")
    search_fields = ("slug", "name")
