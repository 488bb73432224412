"""The researchers' page that imports transcripts into a run: validate, call the service,
render (the same service as `manage.py import_transcripts`)."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views import View

from core.exceptions import ApplicationError
from core.roles import RoleRequiredMixin

from .scenario_views import CURATE_ROLES
from .services.transcript_import import MAX_CONVERSATIONS, MAX_FILE_BYTES, TranscriptFileInvalid
from .services.transcript_runs import transcripts_import
from .transcript_forms import TranscriptImportForm


class TranscriptImportView(RoleRequiredMixin, View):
    required_roles = CURATE_ROLES
    template_name = "evaluations/transcript_import.html"

    def _render(self, request, form, errors=()):
        context = {
            "form": form,
            "line_errors": list(errors),
            "max_mb": MAX_FILE_BYTES // 1024 // 1024,
            "max_conversations": MAX_CONVERSATIONS,
        }
        return render(request, self.template_name, context, status=400 if errors else 200)

    def get(self, request):
        return self._render(request, TranscriptImportForm())

    def post(self, request):
        form = TranscriptImportForm(request.POST, request.FILES)
        if not form.is_valid():
            return self._render(request, form)
        data = form.cleaned_data
        file_name, contents = form.file_contents()
        try:
            run = transcripts_import(
                data=contents,
                file_name=file_name,
                format=data["format"],
                run_name=data["run_name"],
                judge=data["judge"],
                metric_versions=list(data["metric_versions"]),
                judgments_per_conversation=data["judgments_per_conversation"],
                further_judges=[
                    (seat, data["judgments_per_conversation"]) for seat in data["further_judges"]
                ],
                release=data["release"],
                model_name=data["model_name"],
                age_context=data["age_context"],
                language=data["language"],
                imported_by=request.user,
            )
        except TranscriptFileInvalid as invalid:
            form.add_error(None, _("The file was not imported; nothing was saved."))
            return self._render(request, form, invalid.errors)
        except ApplicationError as error:
            form.add_error(None, error.message)
            return self._render(request, form)
        messages.success(
            request,
            _("%(count)d conversations imported; the judges are reading them.")
            % {"count": run.conversations_total},
        )
        return redirect("evaluations:run-detail", pk=run.pk)
