from django import forms
from django.utils.translation import gettext_lazy as _

from core.uploads import StagedUploadFormMixin

# Kept from when the form lived in evaluations: a file staged before an upgrade still reads.
RUBRIC_STAGED_SALT = "evaluations.rubric_import"


class RubricImportForm(StagedUploadFormMixin, forms.Form):
    staged_salt = RUBRIC_STAGED_SALT
    upload_kinds = "JSON Lines"

    file = forms.FileField(
        required=False,
        help_text="JSON Lines: one item per line. HealthBench's oss_eval.jsonl rows are read "
        "as they are.",
    )
    format = forms.ChoiceField(
        choices=[
            ("auto", _("Detect from the file")),
            ("healthbench", _("HealthBench (simple-evals oss_eval.jsonl)")),
            ("impactbench", _("ImpactBench rubric items")),
        ],
        initial="auto",
    )
    skip_bad_lines = forms.BooleanField(
        required=False, label="Import the good lines and skip the bad ones"
    )
    staged = forms.CharField(required=False, widget=forms.HiddenInput)
