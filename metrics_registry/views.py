"""Registry pages: thin views over the selectors and services."""

import json
from collections.abc import Iterable
from urllib.parse import quote

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.http import RFC3986_SUBDELIMS
from django.utils.translation import gettext as _
from django.views import View
from django.views.generic import FormView, ListView, TemplateView

from core.exceptions import ApplicationError
from core.pagecache import PublishedPageCacheMixin
from core.roles import Role, RoleRequiredMixin, user_has_role
from core.uploads import StagedImportViewMixin

from .forms import MetricFilterForm, MetricImportForm, MetricStatusForm
from .from_above import FromAboveMixin
from .models import ValidationStatus
from .plain import release_lead
from .selectors import (
    area_list_with_subareas,
    label_category_list,
    metric_current_version,
    metric_list,
    metric_status_history,
    metric_versions,
    release_item_rows,
    release_list,
    user_sees_draft_metrics,
    user_sees_draft_releases,
)
from .services import (
    STATUS_TRANSITIONS,
    TEXT_WRITER_ROLES,
    metric_status_change,
    metrics_import_file,
    release_changelog,
    release_export_csv_lines,
    release_export_document,
    release_export_filename,
    release_export_jsonl_lines,
)
from .text_selectors import metric_version_texts


class TaxonomyView(TemplateView):
    template_name = "metrics_registry/taxonomy.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["areas"] = area_list_with_subareas()
        return context


# --- Metrics -----------------------------------------------------------------------------------


class MetricListView(ListView):
    template_name = "metrics_registry/metric_list.html"
    context_object_name = "metrics"
    paginate_by = 25

    def get_queryset(self):
        self.filter_form = MetricFilterForm(self.request.GET or None)
        return metric_list(user=self.request.user, **self.filter_form.filters())

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        query = self.request.GET.copy()
        query.pop("page", None)
        context.update(filter_form=self.filter_form, query=query.urlencode())
        context["shown_texts"] = metric_version_texts(
            m.current_version for m in context["metrics"] if m.current_version is not None
        )
        return context


class MetricDetailView(TemplateView):
    template_name = "metrics_registry/metric_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        metric = get_object_or_404(metric_list(user=self.request.user), key=kwargs["key"])
        context.update(
            metric=metric,
            current=metric_current_version(metric),
            versions=metric_versions(metric),
            history=metric_status_history(metric),
            can_write_texts=user_has_role(self.request.user, *TEXT_WRITER_ROLES),
        )
        # Researchers and maintainers move metrics through review from this page.
        if user_sees_draft_metrics(self.request.user):
            allowed = STATUS_TRANSITIONS[metric.validation_status]
            form = MetricStatusForm()
            form.fields["to_status"].choices = [
                (value, label) for value, label in ValidationStatus.choices if value in allowed
            ]
            context["status_form"] = form
        return context


class MetricStatusChangeView(RoleRequiredMixin, View):
    required_roles = (Role.RESEARCHER, Role.MAINTAINER)

    def post(self, request, key: str):
        metric = get_object_or_404(metric_list(user=request.user), key=key)
        form = MetricStatusForm(request.POST)
        if not form.is_valid():
            messages.error(request, _("Choose a valid status."))
        else:
            try:
                metric_status_change(
                    metric=metric,
                    to_status=form.cleaned_data["to_status"],
                    changed_by=request.user,
                    reason=form.cleaned_data["reason"],
                )
                messages.success(
                    request,
                    _("%(metric_key)s is now %(status)s.")
                    % {"metric_key": metric.key, "status": form.cleaned_data["to_status"]},
                )
            except ApplicationError as error:
                messages.error(request, error.message)
        return redirect("metrics_registry:metric_detail", key=metric.key)


# --- Releases ----------------------------------------------------------------------------------


class ReleaseObjectMixin:
    """Looks the release up through `release_list`, so drafts 404 for everyone but maintainers."""

    def get_release(self):
        return get_object_or_404(
            release_list(user=self.request.user), version=self.kwargs["version"]
        )


class ReleaseListView(ListView):
    template_name = "metrics_registry/release_list.html"
    context_object_name = "releases"
    paginate_by = 25

    def get_queryset(self):
        return release_list(user=self.request.user)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["can_draft"] = user_sees_draft_releases(self.request.user)
        return context


RELEASE_ITEMS_PER_PAGE = 100
CHANGELOG_SHOWN = 50


METRIC_KEY_SLOT = "__metric_key__"
URL_ARG_SAFE = RFC3986_SUBDELIMS + "/~:@"


def metric_rows_linked(rows: Iterable[dict]) -> list[dict]:
    """Rows with a `key` and the address of that metric's page as `url`, reversed once for
    all of them: a hundred `{% url %}` tags cost more than the rest of the table."""
    address = reverse("metrics_registry:metric_detail", args=[METRIC_KEY_SLOT])
    # Quoted as `reverse` quotes an argument, so each address is the one it would build.
    return [
        {**row, "url": address.replace(METRIC_KEY_SLOT, quote(row["key"], safe=URL_ARG_SAFE))}
        for row in rows
    ]


class ReleaseDetailView(FromAboveMixin, PublishedPageCacheMixin, ReleaseObjectMixin, TemplateView):
    template_name = "metrics_registry/release_detail.html"
    page_cache_params = ("page",)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        release = self.get_release()
        # A full release holds ~800 metrics: the table is paged, so the page stays light.
        page = Paginator(release_item_rows(release), RELEASE_ITEMS_PER_PAGE).get_page(
            self.request.GET.get("page")
        )
        context.update(
            release=release,
            items=metric_rows_linked(page.object_list),
            page_obj=page,
            paginator=page.paginator,
            is_paginated=page.has_other_pages(),
            changelog=release_changelog(release),
            changelog_shown=CHANGELOG_SHOWN,
            can_edit=user_sees_draft_releases(self.request.user) and not release.is_published,
            downloads=self.from_above("release_downloads")(release=release),
        )
        # The plain first sentence, from the page's own count (no extra query).
        context["lead"] = release_lead(release.version, page.paginator.count, release.is_published)
        return context


class ReleaseExportView(ReleaseObjectMixin, View):
    def get(self, request, version: str, fmt: str):
        release = self.get_release()
        filename = release_export_filename(release, fmt)
        if fmt == "json":
            body = json.dumps(release_export_document(release), ensure_ascii=False, indent=2)
            response = HttpResponse(body, content_type="application/json; charset=utf-8")
        elif fmt == "jsonl":
            response = StreamingHttpResponse(
                release_export_jsonl_lines(release), content_type="application/jsonl; charset=utf-8"
            )
        elif fmt == "csv":
            response = StreamingHttpResponse(
                release_export_csv_lines(release), content_type="text/csv; charset=utf-8"
            )
        else:
            raise Http404("Exports are json, jsonl or csv.")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class MetricImportView(StagedImportViewMixin, RoleRequiredMixin, FormView):
    """Dry run first; the report page offers "Import now" with the same file and choices."""

    required_roles = (Role.RESEARCHER, Role.MAINTAINER)
    template_name = "metrics_registry/metric_import.html"
    form_class = MetricImportForm

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["areas"] = area_list_with_subareas()
        context["label_categories"] = label_category_list()
        return context

    def run_import(self, form, *, dry_run: bool):
        data = form.cleaned_data
        return metrics_import_file(
            data=data["data"],
            filename=data["filename"],
            benchmark_slug=data["benchmark_slug"],
            benchmark_details=form.benchmark_details(),
            created_by=self.request.user,
            dry_run=dry_run,
            skip_bad_rows=data["skip_bad_rows"],
        )

    def report_context(self, report) -> dict:
        url = reverse("metrics_registry:metric_list") + f"?benchmark={report.benchmark_slug}"
        return {"metrics_url": url}
