import json

from django import forms

from core.exceptions import ApplicationError
from core.forms import CheckedTextMixin
from core.jsonsafe import json_loads_checked
from llm.models import ModelConfiguration
from metrics_registry.models import MetricVersion, Release

from .models import MAX_TURNS, RubricItem, Scenario


class JSONTextField(forms.CharField):
    """JSON edited as text; the error says where the JSON breaks."""

    def __init__(self, *, expected: type, **kwargs):
        self.expected = expected
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 6, "class": "font-monospace"}))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, dict | list):
            return json.dumps(value, indent=2, ensure_ascii=False)
        return value

    def clean(self, value):
        text = super().clean(value)
        try:
            data = json_loads_checked(text)
        except ApplicationError as error:
            raise forms.ValidationError(error.message) from error
        if not isinstance(data, self.expected):
            kind = "an object {…}" if self.expected is dict else "a list […]"
            raise forms.ValidationError(f"Enter {kind}.")
        return data


class ScenarioForm(CheckedTextMixin, forms.ModelForm):
    persona = JSONTextField(
        expected=dict,
        help_text='name, age, gender, background, other_attributes — e.g. {"age": 15, …}.',
    )
    anchors = JSONTextField(
        expected=list, help_text='A list of {"turn": 3, "text": "what the user brings up"}.'
    )

    class Meta:
        model = Scenario
        fields = [
            "situation",
            "persona",
            "user_goal",
            "latent_adversarial_goal",
            "anchors",
            "failure_condition",
        ]
        widgets = {
            name: forms.Textarea(attrs={"rows": 3})
            for name in ("situation", "user_goal", "latent_adversarial_goal", "failure_condition")
        }


class RunCreateForm(CheckedTextMixin, forms.Form):
    """A new run; the run page then shows its plan (calls, tokens, cost) before launch."""

    name = forms.CharField(max_length=200)
    release = forms.ModelChoiceField(
        queryset=Release.objects.order_by("-created_at"),
        required=False,
        help_text="Every metric of the release, unless metric versions are chosen below.",
    )
    metric_versions = forms.ModelMultipleChoiceField(
        queryset=MetricVersion.objects.select_related("metric").order_by("metric__key", "-number"),
        required=False,
        help_text="A subset to run instead of the whole release.",
    )
    rubric_items = forms.ModelMultipleChoiceField(
        queryset=RubricItem.objects.order_by("key"), required=False
    )
    targets = forms.ModelMultipleChoiceField(
        queryset=ModelConfiguration.objects.filter(is_active=True)
    )
    simulator = forms.ModelChoiceField(queryset=ModelConfiguration.objects.filter(is_active=True))
    judge = forms.ModelChoiceField(queryset=ModelConfiguration.objects.filter(is_active=True))
    turns = forms.IntegerField(min_value=1, max_value=MAX_TURNS, initial=8)
    replicates = forms.IntegerField(min_value=1, max_value=20, initial=1)
    judgments_per_conversation = forms.IntegerField(min_value=1, max_value=15, initial=3)
