from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.utils.translation import gettext as _

from core.forms import CheckedTextMixin
from evaluations.models import EvaluationRun

from .kinds import available_kinds
from .models import ItemKind, StratumField


class QueueForm(CheckedTextMixin, forms.Form):
    name = forms.CharField(max_length=200, help_text="Raters see this name in their list.")
    kind = forms.ChoiceField(label="What is rated")
    sample_size = forms.IntegerField(
        min_value=1, required=False, help_text="How many items to draw, or leave empty and…"
    )
    sample_fraction = forms.FloatField(
        min_value=0.0001,
        max_value=1,
        required=False,
        label="Sample fraction",
        help_text="…give a fraction of all items instead (0.105 = 10.5%).",
    )
    strata = forms.MultipleChoiceField(
        # Polarity strata are drawn by a run's calibration sample (its own form), whose
        # candidates carry the metric's polarity; other queues' candidates do not.
        choices=[c for c in StratumField.choices if c[0] != StratumField.POLARITY],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Stratify by",
        help_text="Each stratum gets its proportional share of the sample.",
    )
    required_ratings = forms.IntegerField(
        min_value=1, max_value=20, initial=3, label="Independent ratings per item"
    )
    eligible_group = forms.ModelChoiceField(
        queryset=Group.objects.order_by("name"),
        required=False,
        label="Raters: a group",
        help_text="Leave both empty to open the queue to every expert reviewer.",
    )
    eligible_rater_emails = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Raters: named people",
        help_text="One email address per line (their accounts must exist).",
    )
    external_panel = forms.BooleanField(
        required=False, label="These raters are an external expert panel"
    )
    claim_timeout_minutes = forms.IntegerField(
        min_value=1,
        initial=30,
        label="Claim timeout (minutes)",
        help_text="An item a rater leaves untouched this long goes back to the queue.",
    )
    seed = forms.IntegerField(
        min_value=0, required=False, help_text="Optional: the same seed draws the same sample."
    )
    instructions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        available = set(available_kinds())
        self.fields["kind"].choices = [
            (value, label) for value, label in ItemKind.choices if value in available
        ]

    def clean_eligible_rater_emails(self) -> list:
        emails = [
            line.strip().lower()
            for line in self.cleaned_data["eligible_rater_emails"].splitlines()
            if line.strip()
        ]
        users = list(get_user_model().objects.filter(email__in=emails, is_active=True))
        missing = sorted(set(emails) - {user.email.lower() for user in users})
        if missing:
            raise forms.ValidationError(
                _("No active account for: %(items)s.") % {"items": ", ".join(missing)}
            )
        return users

    def clean(self):
        data = super().clean()
        if (data.get("sample_size") is None) == (data.get("sample_fraction") is None):
            raise forms.ValidationError(_("Give either a sample size or a sample fraction."))
        return data

    def service_kwargs(self) -> dict:
        data = self.cleaned_data
        return {
            "name": data["name"],
            "kind": data["kind"],
            "size": data["sample_size"],
            "fraction": data["sample_fraction"],
            "strata": data["strata"],
            "required_ratings": data["required_ratings"],
            "eligible_group": data["eligible_group"],
            "eligible_raters": data["eligible_rater_emails"],
            "external_panel": data["external_panel"],
            "claim_timeout_minutes": data["claim_timeout_minutes"],
            "seed": data["seed"],
            "instructions": data["instructions"],
        }


class KeepForm(CheckedTextMixin, forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        min_length=10,
        label="Why this metric stays in releases",
    )


class RunQueueForm(CheckedTextMixin, forms.Form):
    """A calibration sample or a triage queue over one run's conversations."""

    PURPOSES = (
        ("calibration", "Calibration sample: random, stratified by model and polarity"),
        ("triage", "Triage: conversations the judges or repetitions disagree on, first"),
    )

    purpose = forms.ChoiceField(choices=PURPOSES, widget=forms.RadioSelect)
    run = forms.ModelChoiceField(
        queryset=None,
        help_text="Blind queues are drawn before the run is made official: only conversations "
        "not public yet can be drawn.",
    )
    name = forms.CharField(max_length=200, help_text="Raters see this name in their list.")
    sample_size = forms.IntegerField(min_value=1, required=False)
    sample_fraction = forms.FloatField(
        min_value=0.0001,
        max_value=1,
        required=False,
        help_text="Calibration only: a fraction of the judged conversations instead of a size.",
    )
    required_ratings = forms.IntegerField(
        min_value=1, max_value=20, initial=1, label="Independent ratings per item"
    )
    eligible_group = forms.ModelChoiceField(
        queryset=Group.objects.order_by("name"),
        required=False,
        label="Raters: a group",
        help_text="Leave empty to open the queue to every expert reviewer.",
    )
    seed = forms.IntegerField(
        min_value=0, required=False, help_text="Optional: the same seed draws the same sample."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["run"].queryset = EvaluationRun.objects.order_by("-created_at")

    def clean(self):
        data = super().clean()
        size, fraction = data.get("sample_size"), data.get("sample_fraction")
        if data.get("purpose") == "triage":
            if size is None or fraction is not None:
                raise forms.ValidationError(_("A triage queue takes a size (how many items)."))
        elif (size is None) == (fraction is None):
            raise forms.ValidationError(_("Give either a sample size or a sample fraction."))
        return data
