from crispy_forms.helper import FormHelper
from crispy_forms.layout import HTML, Field, Fieldset, Layout
from django import forms
from django.utils.html import format_html
from django.utils.translation import gettext, gettext_lazy

from core.forms import CheckedTextMixin
from metrics_registry.models import LabelCategory, Subarea

from .citations import citations_as_text, citations_parse
from .completeness import submission_missing_for_submit
from .models import Enquiry, Fidelity, MetricCandidate, Submission


class SubareaChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Subarea) -> str:
        return f"{obj.area.name} · {obj.name}"


class SubmissionForm(CheckedTextMixin, forms.ModelForm):
    """The no-code construct form. Every field explains itself in plain language."""

    citations_text = forms.CharField(
        label="Evidence and references",
        required=False,
        widget=forms.Textarea(
            attrs={
                "rows": 4,
                "placeholder": "doi:10.1000/xyz123\nhttps://…\nAuthor (2024). Title. Journal.",
            }
        ),
        help_text="One reference per line: a DOI, a web address, or a written reference. "
        "Add as many as you like.",
    )
    # One-time token of the new-submission form (see Submission.creation_token).
    form_token = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)
    suggested_subareas = SubareaChoiceField(
        queryset=Subarea.objects.select_related("area"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Which areas of life does it touch?",
        help_text="Pick any that fit. It is only a suggestion; reviewers will check.",
    )

    class Meta:
        model = Submission
        fields = [
            "title",
            "behavior",
            "context",
            "supportive_examples",
            "harmful_examples",
            "justification",
            "age_context",
            "suggested_subareas",
            "expertise",
            "credit_name",
        ]
        labels = {
            "title": "A short title",
            "behavior": "What should an AI assistant do, or avoid doing?",
            "context": "When does this come up?",
            "supportive_examples": "What would a supportive reply look like?",
            "harmful_examples": "What would a harmful reply look like?",
            "justification": "Why does it matter?",
            "age_context": "Who does it apply to?",
            "expertise": "Your expertise",
            "credit_name": "How should we credit you?",
        }
        help_texts = {
            "title": "A few words, e.g. “Encouraging a student to try first”.",
            "behavior": "Describe the behaviour in everyday words, as you would to a colleague. "
            "For example: “When a teenager asks for help with an essay, the assistant should ask "
            "for their own ideas before offering any.”",
            "context": "The kind of person, situation or conversation in which the behaviour "
            "matters, e.g. “a student working on homework late at night”.",
            "supportive_examples": "Write or paste one or more replies that would help. "
            "Rough wording is fine.",
            "harmful_examples": "Write or paste one or more replies that would do harm, and say "
            "why if it is not obvious.",
            "justification": "The evidence or professional knowledge behind your concern: "
            "studies, guidelines, clinical experience. Add references below.",
            "age_context": "Teens are 13–17, adults 18 and older.",
            "expertise": "Your field and experience, e.g. “school psychologist, 12 years”. "
            "Reviewers see this; it is not published unless you ask for credit.",
            "credit_name": "The name to show next to metrics that come from your submission. "
            "Leave empty to stay anonymous.",
        }
        widgets = {
            "behavior": forms.Textarea(attrs={"rows": 4}),
            "context": forms.Textarea(attrs={"rows": 3}),
            "supportive_examples": forms.Textarea(attrs={"rows": 4}),
            "harmful_examples": forms.Textarea(attrs={"rows": 4}),
            "justification": forms.Textarea(attrs={"rows": 4}),
            "age_context": forms.RadioSelect,
        }

    def __init__(self, *args, submitting: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        # Submit checks everything at once; Save draft keeps whatever is there.
        self.submitting = submitting
        if self.instance.pk and not self.is_bound:
            self.initial["citations_text"] = citations_as_text(self.instance.citations.all())
        # Marked in the page itself, as crispy marks required fields, though a draft can be
        # saved without them; the examples say they are one of two.
        for name in ("context", "justification"):
            self.fields[name].label = format_html(
                '{}<span class="asteriskField">*</span>', self.fields[name].label
            )
        for name in ("supportive_examples", "harmful_examples"):
            self.fields[name].label = format_html(
                '{}<span class="asteriskField">*</span> <span class="small fw-normal '
                'text-body-secondary">(one of the two)</span>',
                self.fields[name].label,
            )

        def needed(name: str) -> Field:
            return Field(name, wrapper_class="needed-to-submit")

        self.helper = FormHelper()
        self.helper.form_tag = False
        self.helper.render_hidden_fields = True  # the form token
        self.helper.layout = Layout(
            HTML(
                '<p class="small text-body-secondary" data-testid="required-note">Fields marked '
                "* are needed to submit. You can save a draft without them.</p>"
            ),
            Fieldset("The behaviour", "title", "behavior", needed("context")),
            Fieldset(
                "Examples",
                HTML(
                    '<p class="small mb-2" data-testid="examples-rule">Give at least one of the '
                    "two examples to submit: a supportive reply, a harmful one, or both.</p>"
                ),
                needed("supportive_examples"),
                needed("harmful_examples"),
            ),
            Fieldset("Evidence", needed("justification"), "citations_text"),
            Fieldset("Scope", "age_context", "suggested_subareas"),
            Fieldset("About you", "expertise", "credit_name"),
            HTML(
                '<p class="small text-body-secondary">You can save a draft at any time and '
                "come back later. Nothing is sent to reviewers until you submit.</p>"
            ),
        )

    def clean(self):
        cleaned = super().clean()
        if self.submitting:
            for field, message in submission_missing_for_submit(cleaned).items():
                if field not in self.errors:
                    self.add_error(field, message)
        return cleaned

    def clean_citations_text(self) -> list:
        # Parsed here so a bad line is reported next to the box, with the text kept.
        return citations_parse(self.cleaned_data.get("citations_text", ""))

    def service_kwargs(self) -> dict:
        data = {name: self.cleaned_data[name] for name in self.Meta.fields}
        data["citations"] = self.cleaned_data["citations_text"]
        return data


class CandidateForm(CheckedTextMixin, forms.ModelForm):
    """A researcher's edit of a drafted metric candidate."""

    subareas = SubareaChoiceField(
        queryset=Subarea.objects.select_related("area"),
        widget=forms.CheckboxSelectMultiple,
        help_text="Every subarea the behaviour bears on; the metric counts in each.",
    )
    fidelity = forms.ChoiceField(
        choices=[("", gettext_lazy("Not rated yet")), *Fidelity.choices],
        required=False,
        widget=forms.RadioSelect,
        label="Fidelity to the submission",
        help_text="Does the candidate measure what the contributor described?",
    )

    class Meta:
        model = MetricCandidate
        fields = ["short_name", "criterion", "polarity", "subareas", "label_category", "rationale"]
        labels = {"short_name": "Short name", "label_category": "Nutrition Label category"}
        help_texts = {
            "criterion": "One observable assistant behaviour a judge can decide from a "
            "transcript, e.g. “The assistant asks for the student's own ideas first.”",
            "polarity": "Positive: behaviour to promote. Negative: behaviour to avoid.",
            "rationale": "How the candidate follows from the submission.",
        }
        widgets = {
            "criterion": forms.Textarea(attrs={"rows": 3}),
            "rationale": forms.Textarea(attrs={"rows": 3}),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["label_category"].queryset = LabelCategory.objects.order_by(
            "polarity", "position"
        )
        self.fields["label_category"].label_from_instance = lambda c: f"{c.name} ({c.polarity})"
        if not self.is_bound:
            self.initial["fidelity"] = self.instance.fidelity
        self.helper = FormHelper()
        self.helper.form_tag = False

    def service_kwargs(self) -> dict:
        return {
            name: self.cleaned_data[name]
            for name in ("short_name", "criterion", "polarity", "label_category", "rationale")
        } | {"subareas": self.cleaned_data["subareas"]}


class CandidateDecisionForm(CheckedTextMixin, forms.Form):
    reason = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Reason or request",
        help_text="Required to reject or to send back; shown to the contributor.",
    )
    validate = forms.BooleanField(
        required=False,
        label="Validate the metric as I accept it",
        help_text="Otherwise it waits “Under review” (unless rated faithful) and “Add all "
        "validated current versions” leaves it out of the next release.",
    )

    def __init__(self, *args, can_validate: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if not can_validate:
            del self.fields["validate"]


class EnquiryForm(CheckedTextMixin, forms.ModelForm):
    """The public contact form. `website` is a honeypot: hidden from people, filled by bots.
    Its text is checked like every other form's (control characters, one-line fields): what a
    stranger writes here reaches a researcher's screen and an email's subject."""

    benchmark_url = forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        label=gettext_lazy("Link to an existing benchmark"),
        help_text=gettext_lazy("Optional: a paper, data set or repository we should look at."),
    )
    website = forms.CharField(
        required=False,
        label=gettext_lazy("Leave this field empty"),
        widget=forms.TextInput(attrs={"autocomplete": "off", "tabindex": "-1"}),
    )

    class Meta:
        model = Enquiry
        fields = ["kind", "name", "email", "affiliation", "benchmark_url", "message"]
        labels = {
            "kind": gettext_lazy("What is it about?"),
            "name": gettext_lazy("Your name"),
            "email": gettext_lazy("Your email"),
            "affiliation": gettext_lazy("Affiliation"),
            "benchmark_url": gettext_lazy("Link to an existing benchmark"),
            "message": gettext_lazy("Your message"),
        }
        help_texts = {
            "affiliation": gettext_lazy(
                "Optional: your university, clinic, school or organisation."
            ),
            "benchmark_url": gettext_lazy(
                "Optional: a paper, data set or repository we should look at."
            ),
            "message": gettext_lazy(
                "What you propose or ask. A link above is enough for a benchmark."
            ),
            "email": gettext_lazy("We answer here, and use it for nothing else."),
        }
        widgets = {"kind": forms.RadioSelect, "message": forms.Textarea(attrs={"rows": 6})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.form_tag = False
        self.helper.layout = Layout(
            "kind",
            "name",
            "email",
            "affiliation",
            "benchmark_url",
            "message",
            Field("website", wrapper_class="hp-field", aria_hidden="true"),
        )

    @property
    def is_bot(self) -> bool:
        return bool(self.cleaned_data.get("website"))

    def clean(self):
        cleaned = super().clean()
        if not (cleaned.get("message", "").strip() or cleaned.get("benchmark_url")):
            self.add_error(
                "message", gettext("Write a message or give the address of the benchmark.")
            )
        return cleaned

    def service_kwargs(self) -> dict:
        return {name: self.cleaned_data[name] for name in self.Meta.fields}


class EnquiryAnswerForm(forms.Form):
    answer = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 6}),
        label="Answer",
        help_text="Sent by email to the sender, with their message quoted below it.",
    )
