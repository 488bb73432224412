"""Rubric item pages: import (HealthBench or our own lines, dry run first), export, and
regressions between two configurations."""

import json

from django.http import StreamingHttpResponse
from django.views import View
from django.views.generic import FormView, TemplateView

from core.csvsafe import csv_dict_lines
from core.exceptions import ApplicationError
from core.roles import Role, RoleRequiredMixin
from core.uploads import StagedImportViewMixin

from .dimensions import dimension_choices
from .forms import RubricImportForm, RubricRegressionForm
from .models import RubricItem
from .services.exports import HEALTHBENCH_CONTENT_TYPE, healthbench_jsonl, rubric_items_for_export
from .services.imports import rubric_items_import
from .services.regressions import (
    REGRESSION_FIELDS,
    configuration_choices,
    configuration_resolve,
    regression_records,
    rubric_configurations_compare,
)

CURATE_ROLES = (Role.RESEARCHER, Role.MAINTAINER)


class RubricImportView(StagedImportViewMixin, RoleRequiredMixin, FormView):
    """Dry run first; the report offers "Import now" with the same file and choices."""

    required_roles = CURATE_ROLES
    template_name = "rubrics/rubric_import.html"
    form_class = RubricImportForm

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["dimensions"] = dimension_choices()
        context["item_count"] = RubricItem.objects.count()
        return context

    def run_import(self, form, *, dry_run: bool):
        data = form.cleaned_data
        return rubric_items_import(
            data=data["data"],
            dry_run=dry_run,
            skip_bad_lines=data["skip_bad_lines"],
            fmt=data["format"],
        )


class RubricExportView(RoleRequiredMixin, View):
    """Every rubric item (or ?key=… repeated) as HealthBench JSONL."""

    required_roles = CURATE_ROLES

    def get(self, request):
        keys = request.GET.getlist("key") or None
        response = StreamingHttpResponse(
            healthbench_jsonl(rubric_items_for_export(keys=keys).iterator(chunk_size=200)),
            content_type=HEALTHBENCH_CONTENT_TYPE,
        )
        response["Content-Disposition"] = 'attachment; filename="rubric-items-healthbench.jsonl"'
        return response


class RubricRegressionView(RoleRequiredMixin, TemplateView):
    """Two configurations on the same rubric items: paired differences, flagged where the
    adjusted interval excludes zero; ``?format=csv`` or ``jsonl`` downloads the table."""

    required_roles = (Role.MAINTAINER, Role.RESEARCHER)
    template_name = "rubrics/rubric_regression.html"

    def get(self, request, *args, **kwargs):
        form = RubricRegressionForm(request.GET or None, choices=configuration_choices())
        regression = None
        if form.is_bound and form.is_valid():
            try:
                regression = rubric_configurations_compare(
                    a=configuration_resolve(**form.configuration("a")),
                    b=configuration_resolve(**form.configuration("b")),
                )
            except ApplicationError as error:
                form.add_error(None, error.message)
        fmt = request.GET.get("format", "")
        if regression is not None and fmt in ("csv", "jsonl"):
            records = regression_records(regression)
            if fmt == "csv":
                body = csv_dict_lines(REGRESSION_FIELDS, records)
                content_type = "text/csv; charset=utf-8"
            else:
                body = (json.dumps(r, ensure_ascii=False) + "\n" for r in records)
                content_type = "application/jsonl; charset=utf-8"
            response = StreamingHttpResponse(body, content_type=content_type)
            response["Content-Disposition"] = f'attachment; filename="rubric-regression.{fmt}"'
            return response
        return self.render_to_response(
            self.get_context_data(form=form, regression=regression, query=request.GET.urlencode())
        )
