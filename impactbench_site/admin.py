from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode

from core.roles import Role, user_has_role


class ImpactBenchAdminSite(admin.AdminSite):
    """Admin for maintainers: membership in the Maintainer group opens it, not only is_staff."""

    site_header = "ImpactBench administration"
    site_title = "ImpactBench admin"

    def has_permission(self, request: HttpRequest) -> bool:
        user = request.user
        return bool(user.is_active and (user.is_staff or user_has_role(user, Role.MAINTAINER)))

    def login(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        """No second sign-in form: the site's email sign-in (with its rate limits and lockout)
        is the only way in. Posting a password here does nothing."""
        if request.user.is_authenticated:
            if self.has_permission(request):
                return redirect("admin:index")
            # Signed in without the role: a refusal, not a redirect loop through sign-in.
            raise PermissionDenied("The administration is for maintainers and staff.")
        next_url = request.GET.get("next", "")
        if not url_has_allowed_host_and_scheme(
            next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            next_url = ""
        next_url = next_url or reverse("admin:index")
        return redirect(f"{reverse('account_login')}?{urlencode({'next': next_url})}")
