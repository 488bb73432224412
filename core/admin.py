from django.contrib import admin

from .models import RoleChange


@admin.register(RoleChange)
class RoleChangeAdmin(admin.ModelAdmin):
    """The audit trail of role grants: read-only for everyone."""

    list_display = ["changed_at", "actor", "user", "role", "granted"]
    list_filter = ["role", "granted"]
    search_fields = ["actor__email", "user__email"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
