"""Interoperability pages: a release's Inspect AI download and run exports (JSONL and CSV)."""

from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured
from django.db.models import QuerySet
from django.http import Http404, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext_noop
from django.views import View

from core.roles import Role, user_has_role
from metrics_registry.views import ReleaseObjectMixin
from rubrics.services.exports import rubric_inspect_lines

from .models import EvaluationRun
from .services.inspect_export import INSPECT_CONTENT_TYPE, release_inspect_lines
from .services.run_exports import (
    run_export_csv_lines,
    run_export_filename,
    run_export_jsonl_lines,
    run_languages,
)
from .visibility import HeldScenarios, run_is_public, runs_public

CURATE_ROLES = (Role.RESEARCHER, Role.MAINTAINER)


class HeldBackMixin:
    """A public download that leaves out the scenarios held back for blind review, except for
    the researchers and maintainers who run the queues. Which are held is the review app's to
    say: the site's URL configuration passes its function in (`as_view(held_scenarios=...)`)."""

    held_scenarios: Callable[[], QuerySet] | None = None

    def held(self, request) -> HeldScenarios:
        if self.held_scenarios is None:
            raise ImproperlyConfigured(f"{type(self).__name__} needs held_scenarios.")
        return None if user_has_role(request.user, *CURATE_ROLES) else self.held_scenarios()


class ReleaseInspectExportView(HeldBackMixin, ReleaseObjectMixin, View):
    """/registry/releases/<version>/export/inspect/ (?kind=rubric for the rubric items, a
    dataset of their own: their grading is per criterion)."""

    def get(self, request, version: str):
        release = self.get_release()
        if request.GET.get("kind", "") == "rubric":
            lines, name = rubric_inspect_lines(), "rubric-items"
        else:
            # Scenarios held back for blind review wait for their queue to close.
            lines, name = release_inspect_lines(release, held=self.held(request)), "scenarios"
        response = StreamingHttpResponse(lines, content_type=INSPECT_CONTENT_TYPE)
        filename = f"impactbench-{release.version}-{name}-inspect.jsonl"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class RunExportView(HeldBackMixin, View):
    """A run's JSONL (transcripts, verdicts, configurations) or its results CSV.

    Researchers and maintainers see every run, whole; anyone else only public runs (official,
    finished, of a published release: what the public pages report), without the transcripts
    held back for blind review (`evaluations.visibility`). The CSV's figures leave those out
    too and count them apart, as the public pages' do.

    ``?lang=`` ("all", the default, or one of the run's languages) narrows both to one
    language; any other value is a 400 whose JSON names the run's languages."""

    FORMATS = {"jsonl": ("application/jsonl; charset=utf-8", run_export_jsonl_lines)}
    FORMATS["csv"] = ("text/csv; charset=utf-8", run_export_csv_lines)

    def get(self, request, pk: int, fmt: str):
        if fmt not in self.FORMATS:
            raise Http404("Run exports are jsonl or csv.")
        run = get_object_or_404(EvaluationRun.objects.select_related("release"), pk=pk)
        curator = user_has_role(request.user, *CURATE_ROLES)
        if not (curator or run_is_public(run)):
            raise Http404("No such run.")
        languages = run_languages(run)
        language = request.GET.get("lang", "") or "all"
        if language != "all" and language not in languages:
            choices = ", ".join(("all", *languages))
            return JsonResponse(
                {"detail": f"lang: choose one of {choices}.", "languages": languages}, status=400
            )
        language = "" if language == "all" else language
        content_type, lines = self.FORMATS[fmt]
        body = lines(run, held=self.held(request), language=language)
        response = StreamingHttpResponse(body, content_type=content_type)
        filename = run_export_filename(run, fmt, language)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


def release_run_downloads(*, release) -> list[dict]:
    """The release page's links to the Inspect AI scenarios and each finished run's exports."""
    downloads = [
        {
            # Kept in English (the API's words); the release page translates it.
            "label": gettext_noop("Inspect AI scenarios"),
            "url": reverse("release-export-inspect", args=[release.version]),
            "format": "inspect-jsonl",
        }
    ]
    # Public runs only: a run's own page links every run's exports for those who may read them.
    runs = runs_public().filter(release=release)
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
