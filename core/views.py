from typing import Any, cast

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.mixins import LoginRequiredMixin
from django.contrib.auth.models import User
from django.core.paginator import Paginator
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import FormView, TemplateView
from django.views.i18n import set_language

from . import services
from .exceptions import ApplicationError
from .forms import ReaderLanguageForm
from .health import Check, components_check
from .ids import identifier_parse
from .languages import language_display_name, language_tag_problem
from .models import RoleChange, WorkerPing
from .roles import ROLE_DESCRIPTIONS, ROLE_LABELS, Role, RoleRequiredMixin, user_roles
from .selectors import DEFAULT_READER_LANGUAGE, reader_languages_declared
from .services import readiness_checks


class ReaderLanguagesView(LoginRequiredMixin, FormView):
    """The languages a signed-in person reads: rating queues give them items in these only."""

    template_name = "core/reader_languages.html"
    form_class = ReaderLanguageForm

    @property
    def reader(self) -> User:
        # LoginRequiredMixin lets only signed-in users this far.
        return cast(User, self.request.user)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["declared"] = reader_languages_declared(user=self.reader)
        context["default_language"] = language_display_name(DEFAULT_READER_LANGUAGE)
        return context

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if "remove" in request.POST:
            tag = request.POST["remove"]
            # Checked before the database sees it: no declared tag fails the check, and a
            # hostile value (a NUL) would make PostgreSQL refuse the query.
            if problem := language_tag_problem(tag):
                messages.error(request, problem)
            else:
                services.reader_language_remove(user=self.reader, language=tag)
                messages.success(request, _("Language removed."))
            return redirect("core:languages")
        return super().post(request, *args, **kwargs)

    def form_valid(self, form: ReaderLanguageForm) -> HttpResponse:
        try:
            declared = services.reader_language_declare(
                user=self.reader, language=form.cleaned_data["language"]
            )
        except ApplicationError as error:
            form.add_error("language", error.message)
            return self.form_invalid(form)
        messages.success(
            self.request,
            _("You read %(language)s.") % {"language": language_display_name(declared.language)},
        )
        return redirect("core:languages")


class DashboardView(LoginRequiredMixin, TemplateView):
    """Each signed-in user's starting point: their roles and what each lets them do."""

    template_name = "core/dashboard.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        roles = user_roles(self.request.user)
        context["role_cards"] = [
            {"role": ROLE_LABELS[role], "description": description}
            for role, description in ROLE_DESCRIPTIONS.items()
            if role in roles
        ]
        return context


def health(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers and the demo smoke test: the database answers (within
    HEALTH_CHECK_TIMEOUT_SECONDS), else 503 naming it; JSON either way."""
    (database,) = components_check(("database",))
    if database.ok:
        try:
            last_ping = (
                WorkerPing.objects.order_by("-answered_at")
                .values_list("answered_at", flat=True)
                .first()
            )
        except DatabaseError as error:
            database = Check("database", False, f"{type(error).__name__}: {error}")
    if not database.ok:
        return JsonResponse(
            {
                "status": "failing",
                "failing": ["database"],
                "checks": {"database": {"ok": False, "detail": database.detail}},
            },
            status=503,
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
            "failing": [c.name for c in checks if not c.ok],
            "checks": {c.name: {"ok": c.ok, "detail": c.detail} for c in checks},
        },
        status=200 if ok else 503,
    )


class RoleAssignmentView(RoleRequiredMixin, TemplateView):
    """Maintainers grant and withdraw the four platform roles; every change is listed below."""

    template_name = "core/roles.html"
    required_roles = (Role.MAINTAINER,)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        query = self.request.GET.get("q", "").strip()
        users = get_user_model().objects.order_by("email").prefetch_related("groups")
        if query:
            users = users.filter(email__icontains=query)
        page = Paginator(users, 25).get_page(self.request.GET.get("page"))
        context.update(
            query=query,
            page_obj=page,
            paginator=page.paginator,
            is_paginated=page.has_other_pages(),
            rows=[{"user": user, "roles": user_roles(user)} for user in page],
            all_roles=list(Role),
            changes=RoleChange.objects.select_related("actor", "user")[:50],
        )
        return context

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        user_id = identifier_parse(request.POST.get("user_id"), name="user_id")
        user = get_object_or_404(get_user_model(), pk=user_id or 0)
        wanted = set(request.POST.getlist("roles"))
        unknown = wanted - {role.value for role in Role}
        if unknown:
            return HttpResponseBadRequest("Only the four platform roles can be assigned.")
        try:
            for role in Role:
                services.role_set(
                    actor=request.user, user=user, role=role, granted=role.value in wanted
                )
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.success(
                request,
                _("Roles of %(user)s saved.") % {"user": user.email or user.get_username()},
            )
        return redirect(f"{reverse('core:roles')}?{urlencode({'q': user.email})}")


def _unused_view(_request: HttpRequest) -> HttpResponse:  # pragma: no cover - never called
    return HttpResponse()


def _csrf_passes(request: HttpRequest) -> bool:
    """Whether the request carries its page's CSRF token (checked as for any protected view)."""
    check = CsrfViewMiddleware(_unused_view)
    return check.process_view(request, _unused_view, (), {}) is None


@csrf_exempt
def language_set(request: HttpRequest) -> HttpResponse:
    """Django's language switch (the footer's form). Exempt from the CSRF check: a token in
    every page's footer would make each signed-out page its reader's own and uncacheable, and
    a forged request changes no more than the language a browser reads the site in. A signed-in
    person's choice, sent with their page's token, is also kept for the emails they get."""
    response = set_language(request)
    if request.method == "POST" and request.user.is_authenticated and _csrf_passes(request):
        services.interface_language_remember(
            user=request.user, language=request.POST.get("language", "")
        )
    return response
