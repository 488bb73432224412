from typing import Any

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Fieldset, Layout, Submit
from django import forms
from django.conf import settings
from django.db import models

from core.forms import CheckedTextMixin

from .egress import configuration_problems, endpoint_lookup
from .lookup import HostLookup
from .models import ModelConfiguration, ModelRole, Provider, StructuredMode, provider_choices


def _https_by_default(field: models.Field, **kwargs: Any) -> forms.Field | None:
    if isinstance(field, models.URLField):
        kwargs["assume_scheme"] = "https"
    return field.formfield(**kwargs)


# The page's sections, in order: every field of the form appears once.
_FIELDSETS = (
    ("Endpoint", ("name", "model_line", "provider", "base_url", "model_id", "api_key_env")),
    (
        "Request parameters",
        (
            "temperature",
            "top_p",
            "max_tokens",
            "seed",
            "extra_params",
            "system_prompt",
            "structured_output",
        ),
    ),
    (
        "Cost and limits",
        (
            "price_per_million_input_tokens",
            "price_per_million_output_tokens",
            "price_per_million_cached_input_tokens",
            "price_per_million_cache_write_tokens",
            "max_concurrency",
            "requests_per_minute",
            "input_tokens_per_minute",
            "output_tokens_per_minute",
            "store_completions",
        ),
    ),
    ("Roles", ("roles", "default_roles", "is_active", "description")),
)
_ROLE_FIELDS = ("roles", "default_roles")  # the form's own fields; the rest are the model's


class EgressCheckedMixin(forms.BaseModelForm):
    """Refuses a configuration the egress policy would not call (`llm.egress`): the product's
    form and the admin's, each error on its field, the user's text kept. `host_lookup` is the
    endpoint's one lookup, for the save that follows to reuse."""

    host_lookup: HostLookup | None = None

    def _post_clean(self) -> None:
        # Fills the instance from the form, then the model's own checks. (Django's hook after
        # cleaning is absent from django-stubs.)
        super()._post_clean()  # type: ignore[misc]
        if any(name in self.errors for name in ("provider", "base_url", "api_key_env")):
            return
        self.host_lookup = endpoint_lookup(self.instance)
        problems = configuration_problems(self.instance, looked_up=self.host_lookup)
        for name, problem in problems.items():
            self.add_error(name if name in self.fields else None, problem)


class ModelConfigurationAdminForm(EgressCheckedMixin, forms.ModelForm):
    class Meta:
        model = ModelConfiguration
        formfield_callback = _https_by_default
        fields = "__all__"  # noqa: DJ007 - the admin edits every field, as before


class ModelConfigurationForm(EgressCheckedMixin, CheckedTextMixin, forms.ModelForm):
    roles = forms.MultipleChoiceField(
        choices=ModelRole.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Roles this configuration can fill.",
    )
    default_roles = forms.MultipleChoiceField(
        label="Default for",
        choices=ModelRole.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Becomes the model used for these roles, replacing the current default.",
    )

    class Meta:
        model = ModelConfiguration
        formfield_callback = _https_by_default
        fields = [name for _, names in _FIELDSETS for name in names if name not in _ROLE_FIELDS]
        widgets = {
            "system_prompt": forms.Textarea(attrs={"rows": 3}),
            "description": forms.Textarea(attrs={"rows": 2}),
            "extra_params": forms.Textarea(attrs={"rows": 2}),
        }

    def clean_structured_output(self) -> str:
        return self.cleaned_data.get("structured_output") or StructuredMode.JSON_SCHEMA

    def clean_extra_params(self) -> dict:
        # An emptied box means "no extra parameters", not null.
        return self.cleaned_data.get("extra_params") or {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Scripts and older clients posting without it get the default, not an error.
        self.fields["structured_output"].required = False
        # Imported transcripts' configurations are made by the import, never by hand.
        provider = self.fields["provider"]
        if isinstance(provider, forms.ChoiceField):
            provider.choices = [
                (value, label) for value, label in provider_choices() if value != Provider.IMPORTED
            ]
        if self.instance.pk and not self.is_bound:
            assignments = list(self.instance.role_assignments.all())
            self.initial["roles"] = [a.role for a in assignments]
            self.initial["default_roles"] = [a.role for a in assignments if a.is_default]
        key_field = self.fields["api_key_env"]
        patterns = " or ".join(settings.LLM_API_KEY_ENV_PATTERNS)
        key_field.help_text = (
            f"{key_field.help_text} Names must match {patterns}; a key is sent only to the "
            "hosts its provider or LLM_API_KEY_HOSTS binds its variable to."
        )
        if self.instance.pk and self.instance.api_key_env:
            state = "is set" if self.instance.api_key_is_set else "is not set"
            key_field.help_text += f" On this server {self.instance.api_key_env} {state}."
        self.helper = FormHelper()
        self.helper.layout = Layout(
            *(Fieldset(legend, *names) for legend, names in _FIELDSETS),
            Submit("save", "Save configuration"),
        )
