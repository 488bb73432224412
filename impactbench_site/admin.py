from django.contrib import admin
from django.http import HttpRequest

from core.roles import Role, user_has_role


class ImpactBenchAdminSite(admin.AdminSite):
    """Admin for maintainers: membership in the Maintainer group opens it, not only is_staff."""

    site_header = "ImpactBench administration"
    site_title = "ImpactBench admin"

    def has_permission(self, request: HttpRequest) -> bool:
        user = request.user
        return bool(user.is_active and (user.is_staff or user_has_role(user, Role.MAINTAINER)))
