from django import forms

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
            ("auto", "Detect from the file"),
            ("healthbench", "HealthBench (simple-evals oss_eval.jsonl)"),
            ("impactbench", "ImpactBench rubric items"),
        ],
        initial="auto",
    )
    skip_bad_lines = forms.BooleanField(
        required=False, label="Import the good lines and skip the bad ones"
    )
    staged = forms.CharField(required=False, widget=forms.HiddenInput)


class RubricRegressionForm(forms.Form):
    """Two configurations (a model configuration in a run) with graded rubric replies."""

    a = forms.ChoiceField(label="A (baseline)")
    b = forms.ChoiceField(label="B (candidate)")

    def __init__(self, *args, choices: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["a"].choices = choices
        self.fields["b"].choices = choices

    def clean(self):
        data = super().clean()
        if data.get("a") and data.get("a") == data.get("b"):
            raise forms.ValidationError("Pick two different configurations to compare.")
        return data

    def configuration(self, side: str) -> dict[str, str]:
        run_id, _, target = self.cleaned_data[side].partition(":")
        return {"run_id": run_id, "target": target}
