from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from .models import RoleChange


class ReadOnlyModelAdmin(admin.ModelAdmin):
    """Records that only their author writes, through the product's own pages: the admin lists
    and shows them to everyone it admits (superusers included) and offers no add, change or
    delete, so nobody can write one in another person's name."""

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(RoleChange)
class RoleChangeAdmin(ReadOnlyModelAdmin):
    """The audit trail of role grants: read-only for everyone."""

    list_display = ["changed_at", "actor", "user", "role", "granted"]
    list_filter = ["role", "granted"]
    search_fields = ["actor__email", "user__email"]
