"""Interoperability pages: rubric item import (HealthBench or our own lines) and export, a
release's Inspect AI download, and run exports (JSONL and CSV)."""

from django.contrib import messages
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views import View
from django.views.generic import FormView

from core.exceptions import ApplicationError
from core.roles import Role, RoleRequiredMixin, user_has_role
from metrics_registry.views import ReleaseObjectMixin

from .forms import RubricImportForm
from .models import EvaluationRun, RubricItem, RunStatus
from .rubric_dimensions import dimension_choices
from .services.inspect_export import (
    INSPECT_CONTENT_TYPE,
    release_inspect_lines,
    rubric_inspect_lines,
)
from .services.rubric_exports import (
    HEALTHBENCH_CONTENT_TYPE,
    healthbench_jsonl,
    rubric_items_for_export,
)
from .services.rubric_imports import rubric_items_import
from .services.run_exports import (
    run_export_csv_lines,
    run_export_filename,
    run_export_jsonl_lines,
)

CURATE_ROLES = (Role.RESEARCHER, Role.MAINTAINER)


class RubricImportView(RoleRequiredMixin, FormView):
    """Dry run first; the report offers "Import now" with the same file and choices."""

    required_roles = CURATE_ROLES
    template_name = "evaluations/rubric_import.html"
    form_class = RubricImportForm

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["dimensions"] = dimension_choices()
        context["item_count"] = RubricItem.objects.count()
        return context

    def form_valid(self, form):
        data = form.cleaned_data
        try:
            report = rubric_items_import(
                data=data["data"],
                dry_run=self.request.POST.get("action") != "import",
                skip_bad_lines=data["skip_bad_lines"],
                fmt=data["format"],
            )
        except ApplicationError as error:
            form.add_error(None, error.message)
            return self.form_invalid(form)
        if report.committed:
            messages.success(self.request, report.summary)
        bound = self.request.POST.copy()
        bound["staged"] = form.stage(data["data"], data["filename"])
        return self.render_to_response(
            self.get_context_data(
                form=self.form_class(bound), report=report, staged_name=data["filename"]
            )
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


class ReleaseInspectExportView(ReleaseObjectMixin, View):
    """/registry/releases/<version>/export/inspect/ (?kind=rubric for the rubric items)."""

    def get(self, request, version: str):
        release = self.get_release()
        if request.GET.get("kind") == "rubric":
            lines, name = rubric_inspect_lines(), "rubric-items"
        else:
            lines, name = release_inspect_lines(release), "scenarios"
        response = StreamingHttpResponse(lines, content_type=INSPECT_CONTENT_TYPE)
        filename = f"impactbench-{release.version}-{name}-inspect.jsonl"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class RunExportView(View):
    """A run's JSONL (transcripts, verdicts, configurations) or its results CSV.

    Researchers and maintainers see every run; anyone else only finished runs of a published
    release (what the public pages report)."""

    FORMATS = {"jsonl": ("application/jsonl; charset=utf-8", run_export_jsonl_lines)}
    FORMATS["csv"] = ("text/csv; charset=utf-8", run_export_csv_lines)

    def get(self, request, pk: int, fmt: str):
        if fmt not in self.FORMATS:
            raise Http404("Run exports are jsonl or csv.")
        run = get_object_or_404(EvaluationRun.objects.select_related("release"), pk=pk)
        public = run.status == RunStatus.COMPLETED and run.release_id and run.release.is_published
        if not (public or user_has_role(request.user, *CURATE_ROLES)):
            raise Http404("No such run.")
        content_type, lines = self.FORMATS[fmt]
        response = StreamingHttpResponse(lines(run), content_type=content_type)
        filename = run_export_filename(run, fmt)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


def release_run_downloads(*, release) -> list[dict]:
    """The release page's links to the Inspect AI scenarios and each finished run's exports."""
    downloads = [
        {
            "label": "Inspect AI scenarios",
            "url": reverse("release-export-inspect", args=[release.version]),
            "format": "inspect-jsonl",
        }
    ]
    runs = EvaluationRun.objects.filter(release=release, status=RunStatus.COMPLETED)
    for run in runs.order_by("-finished_at", "-pk"):
        for fmt, label in (("jsonl", "transcripts and verdicts"), ("csv", "results CSV")):
            downloads.append(
                {
                    "label": f"Run {run.pk} {label}",
                    "url": reverse("evaluations:run-export", args=[run.pk, fmt]),
                    "format": fmt,
                    "run": run.pk,
                }
            )
    return downloads
