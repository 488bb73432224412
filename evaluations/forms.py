import json

from django import forms

from .models import Scenario


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
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise forms.ValidationError(
                f"This is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})."
            ) from error
        if not isinstance(data, self.expected):
            kind = "an object {…}" if self.expected is dict else "a list […]"
            raise forms.ValidationError(f"Enter {kind}.")
        return data


class ScenarioForm(forms.ModelForm):
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
