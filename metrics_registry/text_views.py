"""The workspace page of a metric version's texts in other languages: the list, the form that
adds or edits one, and the review of machine translations (`services.texts`)."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views import View

from core.exceptions import ApplicationError
from core.languages import language_display_name
from core.roles import Role, RoleRequiredMixin

from .forms import MetricVersionTextForm
from .models import MetricVersion, MetricVersionText
from .selectors import metric_list, metric_versions
from .services import (
    TEXT_WRITER_ROLES,
    metric_version_text_reopen,
    metric_version_text_review,
    metric_version_text_save,
)
from .text_selectors import metric_version_text_list, text_reviewable_by


class VersionMixin:
    """The version named by the URL (`key`, `number`), through the registry's visibility."""

    def get_version(self, request: HttpRequest, key: str, number: int) -> MetricVersion:
        metric = get_object_or_404(metric_list(user=request.user), key=key)
        return get_object_or_404(metric_versions(metric).select_related("metric"), number=number)

    def get_text(self, version: MetricVersion, language: str) -> MetricVersionText:
        return get_object_or_404(version.texts.all(), language=language)


class MetricVersionTextsView(VersionMixin, RoleRequiredMixin, View):
    """Every text of the version, with who wrote and reviewed it; the form adds a language's
    text, or edits one (`?language=es` fills it in); reviewers who read a machine translation's
    language get its review button."""

    required_roles = TEXT_WRITER_ROLES
    template_name = "metrics_registry/metric_version_texts.html"

    def _render(
        self, request: HttpRequest, version: MetricVersion, form: MetricVersionTextForm
    ) -> TemplateResponse:
        texts = list(metric_version_text_list(version, request.user))
        rows = [(text, text_reviewable_by(text, request.user)) for text in texts]
        return TemplateResponse(
            request,
            self.template_name,
            {"version": version, "metric": version.metric, "rows": rows, "form": form},
            status=400 if form.is_bound else 200,
        )

    def get(self, request: HttpRequest, key: str, number: int) -> HttpResponse:
        version = self.get_version(request, key, number)
        initial: dict[str, str] = {}
        editing = version.texts.filter(language=request.GET.get("language", "")).first()
        if editing is not None:
            initial = {
                "language": editing.language,
                "name": editing.name,
                "criterion": editing.criterion,
                "failure_condition": editing.failure_condition,
                "provenance": editing.provenance,
            }
        return self._render(request, version, MetricVersionTextForm(initial=initial))

    def post(self, request: HttpRequest, key: str, number: int) -> HttpResponse:
        version = self.get_version(request, key, number)
        form = MetricVersionTextForm(request.POST)
        if form.is_valid():
            try:
                text = metric_version_text_save(
                    version=version, writer=request.user, **form.cleaned_data
                )
            except ApplicationError as error:
                form.add_error(None, error.message)
            else:
                messages.success(
                    request,
                    _("The %(language)s text is saved.")
                    % {"language": language_display_name(text.language)},
                )
                return redirect(
                    "metrics_registry:metric_version_texts", key=key, number=version.number
                )
        return self._render(request, version, form)


class MetricVersionTextReviewView(VersionMixin, RoleRequiredMixin, View):
    """An expert reviewer who reads the text's language marks its machine translation reviewed."""

    required_roles = (Role.EXPERT_REVIEWER,)

    def post(self, request: HttpRequest, key: str, number: int, language: str) -> HttpResponse:
        version = self.get_version(request, key, number)
        text = self.get_text(version, language)
        try:
            metric_version_text_review(text=text, reviewer=request.user)
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.success(
                request, _("Translation reviewed: readers of the language now see this text.")
            )
        return redirect("metrics_registry:metric_version_texts", key=key, number=number)


class MetricVersionTextReopenView(VersionMixin, RoleRequiredMixin, View):
    """A reader of the language reopens a reviewed translation to correct it."""

    required_roles = TEXT_WRITER_ROLES

    def post(self, request: HttpRequest, key: str, number: int, language: str) -> HttpResponse:
        version = self.get_version(request, key, number)
        text = self.get_text(version, language)
        try:
            metric_version_text_reopen(text=text, user=request.user)
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.info(
                request,
                _(
                    "Reopened: the text is off the public pages until it is reviewed again. "
                    "Correct it below."
                ),
            )
            page = reverse("metrics_registry:metric_version_texts", args=[key, number])
            return redirect(f"{page}?{urlencode({'language': text.language})}")
        return redirect("metrics_registry:metric_version_texts", key=key, number=number)
