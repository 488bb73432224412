"""The one mixin every platform form uses for hostile text: control characters refused before
any field touches the database, line breaks refused in one-line fields, and free text capped
at TEXT_FIELD_MAX_LENGTH characters."""

from typing import Any

from django import forms
from django.core.validators import MaxLengthValidator
from django.forms.utils import ErrorDict
from django.utils.translation import gettext_lazy as _

from .languages import language_tag_normalize
from .validators import control_character_message, single_line, text_max_length


class CheckedTextMixin(forms.BaseForm):
    """Mix into a Form or ModelForm (before the Django base class).

    Raw values are checked before cleaning, because cleaning a choice field looks the value up
    in the database, and PostgreSQL refuses NUL with an error rather than "no such row". The
    form is then invalid with a message on each offending field and the user's text kept.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit = text_max_length()
        for field in self.fields.values():
            if not isinstance(field, forms.CharField):
                continue
            if isinstance(field.widget, forms.Textarea) and field.max_length is None:
                # Free text gets the documented cap; the browser counts down (char-counter.js).
                field.max_length = limit
                field.validators.append(MaxLengthValidator(limit))
                field.widget.attrs.setdefault("maxlength", str(limit))
            elif not isinstance(field.widget, forms.Textarea | forms.HiddenInput):
                field.validators.append(single_line)

    def _raw_values(self, name: str) -> list[str]:
        key = self.add_prefix(name)
        if hasattr(self.data, "getlist"):
            values = self.data.getlist(key)
        else:
            value = self.data.get(key)
            values = value if isinstance(value, list | tuple) else [value]
        return [value for value in values if isinstance(value, str)]

    def full_clean(self) -> None:
        if not self.is_bound:
            return super().full_clean()
        problems = {}
        for name in self.fields:
            for value in self._raw_values(name):
                if message := control_character_message(value):
                    problems[name] = message
                    break
        if not problems:
            return super().full_clean()
        self._errors = ErrorDict()
        self.cleaned_data = {}
        for name, message in problems.items():
            self.add_error(name, message)
        return None


class ReaderLanguageForm(CheckedTextMixin, forms.Form):
    """One language a person reads, as a BCP 47 tag; kept as typed when it is not one."""

    language = forms.CharField(
        label=_("Language tag"),
        # Longer than any tag, so a mistyped one reaches the tag check and its message.
        max_length=64,
        help_text=_("A language code, then an optional region or script: en, es, pt-BR, zh-Hans."),
    )

    def clean_language(self) -> str:
        return language_tag_normalize(self.cleaned_data["language"])
