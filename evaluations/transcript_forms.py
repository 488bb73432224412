"""The upload form of imported transcripts: a file or pasted lines, and what to judge them on."""

from django import forms
from django.db.models import F
from django.utils.translation import gettext_lazy as _

from core.forms import CheckedTextMixin
from core.languages import DEFAULT_LANGUAGE, language_tag_normalize, language_tag_problem
from llm.models import ModelConfiguration, ModelRole
from llm.selectors import configurations_for_role
from metrics_registry.models import MetricVersion, Release

from .forms import (
    ConfigurationChoiceField,
    ConfigurationMultipleChoiceField,
    MetricVersionChoiceField,
    _role_default,
)
from .models import AgeContext, TranscriptFormat
from .services.transcript_import import MAX_FILE_BYTES

# Pasted lines travel in the form body, which Django caps (DATA_UPLOAD_MAX_MEMORY_SIZE, 2.5 MB
# by default); larger files are uploaded as files.
MAX_PASTED_CHARACTERS = 2_000_000


class TranscriptImportForm(CheckedTextMixin, forms.Form):
    run_name = forms.CharField(label=_("Run name"), max_length=200)
    format = forms.ChoiceField(label=_("Format"), choices=TranscriptFormat.choices)
    file = forms.FileField(
        label=_("File"),
        required=False,
        help_text=_("JSONL, a run export, or an Inspect log (.json or .eval); at most %(mb)d MB.")
        % {"mb": MAX_FILE_BYTES // 1024 // 1024},
    )
    text = forms.CharField(
        label=_("Or paste the lines"),
        required=False,
        max_length=MAX_PASTED_CHARACTERS,
        widget=forms.Textarea(attrs={"rows": 8, "class": "font-monospace"}),
        help_text=_("One conversation per line, as in a JSONL file."),
    )
    metric_versions = MetricVersionChoiceField(
        queryset=MetricVersion.objects.filter(metric__current_version=F("pk"))
        .select_related("metric")
        .order_by("metric__key"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=_("Metrics"),
        help_text=_(
            "Conversations whose line names no metric are judged on each of these (current "
            "versions)."
        ),
    )
    model_name = forms.CharField(
        label=_("Model that answered"),
        max_length=100,
        required=False,
        help_text=_("For lines that do not name it. It is never called."),
    )
    judge = ConfigurationChoiceField(
        label=_("Judge"),
        queryset=ModelConfiguration.objects.filter(is_active=True).order_by("name"),
    )
    further_judges = ConfigurationMultipleChoiceField(
        label=_("Further judges (a panel)"),
        queryset=configurations_for_role(ModelRole.JUDGE),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_(
            "Optional: other judges that read every conversation too, each as many times as "
            "the judge; the verdict is the majority of the judges' own."
        ),
    )
    judgments_per_conversation = forms.IntegerField(
        label=_("Judgments per conversation"), min_value=1, max_value=15, initial=3
    )
    release = forms.ModelChoiceField(
        label=_("Release"),
        queryset=Release.objects.order_by("-created_at"),
        required=False,
        help_text=_("The release whose metrics these are, if the run may be made official."),
    )
    age_context = forms.ChoiceField(
        label=_("Age context"),
        choices=AgeContext.choices,
        initial=AgeContext.ADULT,
        help_text=_("For lines that do not name one."),
    )
    language = forms.CharField(
        label=_("Language"),
        max_length=20,
        initial=DEFAULT_LANGUAGE,
        help_text=_("For lines that do not name one: a tag such as en, es or pt-BR."),
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial.setdefault("judge", _role_default(ModelRole.JUDGE))

    def clean_language(self) -> str:
        language = self.cleaned_data["language"]
        if problem := language_tag_problem(language):
            raise forms.ValidationError(problem)
        return language_tag_normalize(language)

    def clean(self) -> dict:
        data = super().clean()
        upload, text = data.get("file"), (data.get("text") or "").strip()
        if upload and text:
            raise forms.ValidationError(_("Upload a file or paste lines, not both."))
        if not upload and not text:
            raise forms.ValidationError(_("Upload a file or paste the lines to import."))
        if upload is not None and upload.size > MAX_FILE_BYTES:
            self.add_error(
                "file",
                _("The file has %(size).1f MB; at most %(limit)d MB can be imported at once.")
                % {"size": upload.size / 1024 / 1024, "limit": MAX_FILE_BYTES // 1024 // 1024},
            )
        return data

    def file_contents(self) -> tuple[str, bytes]:
        """(the file's name, its bytes): the upload's, or the pasted lines'."""
        upload = self.cleaned_data.get("file")
        if upload is not None:
            return upload.name, upload.read()
        return "pasted.jsonl", self.cleaned_data["text"].encode("utf-8")
