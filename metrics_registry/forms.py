from django import forms
from django.utils.translation import gettext_lazy as _

from core.forms import CheckedTextMixin
from core.languages import language_tag_normalize
from core.uploads import StagedUploadFormMixin

from .models import Polarity, ValidationStatus
from .selectors import (
    area_list_with_subareas,
    benchmark_list,
    label_category_list,
    subarea_list,
)

STAGED_SALT = "metrics_registry.import"


class MetricFilterForm(CheckedTextMixin, forms.Form):
    """The filters of the public metric list (GET); every field is optional."""

    q = forms.CharField(label=_("Search"), required=False)
    area = forms.ChoiceField(required=False, label=_("Area"))
    subarea = forms.ChoiceField(required=False, label=_("Subarea"))
    polarity = forms.ChoiceField(
        required=False, label=_("Polarity"), choices=[("", _("Any polarity")), *Polarity.choices]
    )
    label_category = forms.ChoiceField(required=False, label=_("Label category"))
    status = forms.ChoiceField(
        required=False,
        label=_("Status"),
        choices=[("", _("Any status")), *ValidationStatus.choices],
    )
    benchmark = forms.ChoiceField(required=False, label=_("Source benchmark"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["area"].choices = [("", _("Any area"))] + [
            (area.slug, area.name) for area in area_list_with_subareas()
        ]
        self.fields["subarea"].choices = [("", _("Any subarea"))] + [
            (subarea.slug, f"{subarea.area.name} · {subarea.name}") for subarea in subarea_list()
        ]
        self.fields["label_category"].choices = [("", _("Any category"))] + [
            (category.slug, category.name) for category in label_category_list()
        ]
        self.fields["benchmark"].choices = [("", _("Any source"))] + [
            (benchmark.slug, benchmark.name) for benchmark in benchmark_list()
        ]
        for field in self.fields.values():
            select = isinstance(field, forms.ChoiceField)
            field.widget.attrs["class"] = (
                "form-select form-select-sm" if select else "form-control form-control-sm"
            )

    def filters(self) -> dict[str, str]:
        """Keyword arguments for `metric_list`; invalid input simply does not filter."""
        if not self.is_valid():
            return {}
        data = self.cleaned_data
        return {
            "search": data["q"],
            "area": data["area"],
            "subarea": data["subarea"],
            "polarity": data["polarity"],
            "label_category": data["label_category"],
            "status": data["status"],
            "benchmark": data["benchmark"],
        }


class ReleaseForm(CheckedTextMixin, forms.Form):
    version = forms.CharField(max_length=32, help_text="MAJOR.MINOR.PATCH, for example 1.2.0.")
    title = forms.CharField(max_length=200)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False)


class MetricImportForm(StagedUploadFormMixin, CheckedTextMixin, forms.Form):
    staged_salt = STAGED_SALT
    upload_kinds = "CSV or JSON"

    file = forms.FileField(
        required=False,
        help_text="CSV (header row, subareas separated by ;) or JSON (a list of objects, or "
        '{"metrics": [...]}). Columns: name, criterion, polarity, subareas, label_category, '
        "rubric_notes, age_contexts, source_reference.",
    )
    benchmark_slug = forms.SlugField(
        label="Benchmark identifier",
        help_text="Short id, e.g. companion-harms. New ids create a benchmark.",
    )
    benchmark_name = forms.CharField(label="Benchmark name", required=False, max_length=200)
    citation = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    url = forms.URLField(required=False, label="Benchmark URL", assume_scheme="https")
    license = forms.CharField(required=False, max_length=200)
    skip_bad_rows = forms.BooleanField(
        required=False, label="Import the good rows and skip the bad ones"
    )
    # After a dry run the file travels back signed, so "Import now" imports exactly what was
    # checked without asking the user to pick it again.
    staged = forms.CharField(required=False, widget=forms.HiddenInput)

    def benchmark_details(self) -> dict[str, str]:
        return {
            key: self.cleaned_data.get(field, "")
            for key, field in (
                ("name", "benchmark_name"),
                ("citation", "citation"),
                ("url", "url"),
                ("license", "license"),
            )
        }


class MetricStatusForm(CheckedTextMixin, forms.Form):
    to_status = forms.ChoiceField(
        label="New status",
        choices=ValidationStatus.choices,
        widget=forms.Select(attrs={"class": "form-select form-select-sm"}),
    )
    reason = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 1, "class": "form-control form-control-sm"}),
        help_text="Shown publicly in the validation history; required when retiring.",
    )


class MetricMappingForm(forms.Form):
    """Completes an imported metric that arrived without subareas or a label category."""

    subareas = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple)
    label_category = forms.ChoiceField()

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["subareas"].choices = [
            (area.name, [(s.slug, s.name) for s in area.subareas.all()])
            for area in area_list_with_subareas()
        ]
        self.fields["label_category"].choices = [
            (c.slug, f"{c.name} ({c.polarity})") for c in label_category_list()
        ]


class MetricVersionTextForm(CheckedTextMixin, forms.Form):
    """One language's text of a metric version; the service checks who may write it."""

    language = forms.CharField(
        label=_("Language tag"),
        # Longer than any tag, so a mistyped one reaches the tag check and its message.
        max_length=64,
        help_text=_("A language code, then an optional region or script: es, pt-BR, zh-Hans."),
    )
    name = forms.CharField(label=_("Name"), max_length=200)
    criterion = forms.CharField(label=_("Criterion"), widget=forms.Textarea(attrs={"rows": 3}))
    failure_condition = forms.CharField(
        label=_("Failure condition"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    provenance = forms.ChoiceField(
        label=_("How this text was written"),
        choices=[
            ("native", _("I wrote it in this language (I read it)")),
            ("machine", _("A machine translation: a reader of the language reviews it")),
        ],
        widget=forms.RadioSelect,
        initial="machine",
    )

    def clean_language(self) -> str:
        return language_tag_normalize(self.cleaned_data["language"])
