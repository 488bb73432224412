"""A checked upload carried back to the page signed, so "Import now" imports exactly the file
the dry run checked without asking the user to choose it again."""

import base64
from typing import Any, Protocol

from django import forms
from django.contrib import messages
from django.core import signing
from django.http import HttpResponse
from django.utils.translation import gettext as _
from django.views.generic import FormView

from .exceptions import ApplicationError

MAX_IMPORT_BYTES = 2 * 1024 * 1024
STAGED_MAX_AGE = 3600  # seconds a dry-run file stays valid for "Import now"


def upload_stage(data: bytes, filename: str, *, salt: str) -> str:
    payload = {"name": filename, "data": base64.b64encode(data).decode()}
    return signing.dumps(payload, salt=salt, compress=True)


def upload_from_form(cleaned: dict[str, Any], *, salt: str, kinds: str) -> tuple[bytes, str]:
    """(data, filename) from the form's `file` or its `staged` token; ValidationError else."""
    upload = cleaned.get("file")
    if upload:
        if upload.size > MAX_IMPORT_BYTES:
            raise forms.ValidationError(_("The file is larger than 2 MB; split it into parts."))
        return upload.read(), upload.name
    if cleaned.get("staged"):
        try:
            staged = signing.loads(cleaned["staged"], salt=salt, max_age=STAGED_MAX_AGE)
        except signing.BadSignature:
            raise forms.ValidationError(
                _("The checked file expired; choose the file again and re-run the check.")
            ) from None
        return base64.b64decode(staged["data"]), staged["name"]
    raise forms.ValidationError(_("Choose a %(kinds)s file to import.") % {"kinds": kinds})


class StagedUploadFormMixin(forms.BaseForm):
    """A form with a `file` field and a hidden `staged` one: `clean` puts the chosen or staged
    file into `data` and `filename`, and `stage` signs a checked file for the next post."""

    staged_salt: str
    upload_kinds: str  # what the "choose a file" error asks for, e.g. "CSV or JSON"

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        cleaned["data"], cleaned["filename"] = upload_from_form(
            cleaned, salt=self.staged_salt, kinds=self.upload_kinds
        )
        return cleaned

    @classmethod
    def stage(cls, data: bytes, filename: str) -> str:
        return upload_stage(data, filename, salt=cls.staged_salt)


class ImportReport(Protocol):
    """What an import answers with: whether it wrote anything, and a sentence saying what."""

    @property
    def committed(self) -> bool: ...

    @property
    def summary(self) -> str: ...


class StagedImportViewMixin(FormView):
    """A FormView over a `StagedUploadFormMixin` form: a dry run first, then "Import now"
    imports the file the dry run checked. `run_import` returns a report with `committed` and
    `summary`; the page gets it as `report`, the file's name as `staged_name`, and whatever
    `report_context` adds."""

    def run_import(self, form: StagedUploadFormMixin, *, dry_run: bool) -> ImportReport:
        raise NotImplementedError

    def report_context(self, report: ImportReport) -> dict[str, Any]:
        return {}

    def form_valid(self, form: StagedUploadFormMixin) -> HttpResponse:
        data = form.cleaned_data
        try:
            report = self.run_import(form, dry_run=self.request.POST.get("action") != "import")
        except ApplicationError as error:
            form.add_error(None, error.message)
            return self.form_invalid(form)
        if report.committed:
            messages.success(self.request, report.summary)
        # Re-bind with the staged file so the page keeps every choice and can confirm.
        bound = self.request.POST.copy()
        bound["staged"] = form.stage(data["data"], data["filename"])
        context = self.get_context_data(
            form=self.get_form_class()(bound),
            report=report,
            staged_name=data["filename"],
            **self.report_context(report),
        )
        return self.render_to_response(context)
