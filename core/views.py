from django.contrib.auth.mixins import LoginRequiredMixin
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.generic import TemplateView

from metrics_registry.selectors import area_list_with_subareas

from .models import WorkerPing
from .roles import ROLE_DESCRIPTIONS, user_roles
from .services import readiness_checks


class HomeView(TemplateView):
    template_name = "core/home.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["areas"] = area_list_with_subareas()
        return context


class DashboardView(LoginRequiredMixin, TemplateView):
    """Each signed-in user's starting point: their roles and what each lets them do."""

    template_name = "core/dashboard.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        roles = user_roles(self.request.user)
        context["role_cards"] = [
            {"role": role.value, "description": description}
            for role, description in ROLE_DESCRIPTIONS.items()
            if role in roles
        ]
        return context


def health(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers and the demo smoke test: database reachable, last worker ping."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    last_ping = (
        WorkerPing.objects.order_by("-answered_at").values_list("answered_at", flat=True).first()
    )
    return JsonResponse(
        {
            "status": "ok",
            "database": connection.vendor,
            "last_worker_ping": last_ping.isoformat() if last_ping else None,
        }
    )


def ready(request: HttpRequest) -> JsonResponse:
    """Readiness: 200 when the database, the broker and a worker (via beat's heartbeat) work,
    else 503 naming what does not."""
    checks = readiness_checks()
    ok = all(check.ok for check in checks)
    return JsonResponse(
        {
            "status": "ready" if ok else "not ready",
            "checks": {c.name: {"ok": c.ok, "detail": c.detail} for c in checks},
        },
        status=200 if ok else 503,
    )
