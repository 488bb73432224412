import json
from decimal import Decimal

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Div, Field, Layout
from django import forms
from django.db.models import F
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from core.countries import country_code_normalize
from core.exceptions import ApplicationError
from core.forms import CheckedTextMixin
from core.jsonsafe import json_loads_checked
from core.languages import language_tag_normalize
from llm.models import ModelConfiguration, ModelRole
from llm.selectors import configuration_for_role, configurations_for_role
from metrics_registry.models import MetricVersion, Release, ReleaseItem
from rubrics.models import RubricItem

from .models import MAX_TURNS, RubricGrading, Scenario
from .services.scenario_edits import EDITABLE_FIELDS


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
            raise forms.ValidationError(
                _("Enter an object {…}.") if self.expected is dict else _("Enter a list […].")
            )
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
        # What `scenario_update` accepts, no more.
        fields = list(EDITABLE_FIELDS)
        widgets = {
            name: forms.Textarea(attrs={"rows": 3})
            for name in ("situation", "user_goal", "latent_adversarial_goal", "failure_condition")
        }
        labels = {"language": _("Language"), "country": _("Country")}
        help_texts = {
            "language": _("BCP 47 tag of the text, e.g. en, es, pt-BR, zh-Hans."),
            "country": _(
                "Two-letter code of where the persona lives, e.g. ES; the target is told it. "
                "Leave blank for nowhere in particular."
            ),
        }

    # Typed spellings are accepted and stored the standard way (`pt-br` → `pt-BR`, `es` → `ES`).
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["language"].required = False  # left blank: the scenario keeps its own

    def clean_language(self) -> str:
        language = self.cleaned_data["language"]
        return language_tag_normalize(language) if language else self.instance.language

    def clean_country(self) -> str:
        country = self.cleaned_data["country"]
        return country_code_normalize(country) if country else ""


class ConfigurationChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: ModelConfiguration) -> str:
        return f"{obj.name} (offline demo model)" if obj.is_offline else obj.name


class ConfigurationMultipleChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: ModelConfiguration) -> str:
        return ConfigurationChoiceField.label_from_instance(self, obj)


class MetricVersionChoiceField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: MetricVersion) -> str:
        return f"{obj.metric.key} · {obj.name} ({obj.polarity})"


def _role_default(role: str) -> ModelConfiguration | None:
    try:
        return configuration_for_role(role)
    except ApplicationError:  # no default yet: the maintainer picks one
        return None


def _choices_role_first(field: ConfigurationChoiceField, role: str) -> list:
    """The configurations assigned `role` first, every other active one in a group apart (a
    drafter may serve as judge, but rarely should)."""
    with_role = set(configurations_for_role(role).values_list("pk", flat=True))
    ours, others = [], []
    for configuration in field.queryset:
        choice = (configuration.pk, field.label_from_instance(configuration))
        (ours if configuration.pk in with_role else others).append(choice)
    groups: list = [("", field.empty_label)] if field.empty_label is not None else []
    if ours:
        groups.append((gettext("%(role)s role") % {"role": ModelRole(role).label}, ours))
    if others:
        groups.append((gettext("Other configurations"), others))
    return groups


class RunCreateForm(CheckedTextMixin, forms.Form):
    """A new run; the run page then shows its plan (calls, tokens, cost) before launch."""

    name = forms.CharField(max_length=200)
    release = forms.ModelChoiceField(
        queryset=Release.objects.order_by("-created_at"),
        required=False,
        help_text="Every metric of the release, unless metrics are ticked below.",
    )
    metric_versions = MetricVersionChoiceField(
        queryset=MetricVersion.objects.filter(metric__current_version=F("pk"))
        .select_related("metric")
        .prefetch_related("subareas__area")
        .order_by("metric__key"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Metrics",
        help_text="A subset to run instead of the whole release (current versions), grouped "
        "by subarea.",
    )
    rubric_items = forms.ModelMultipleChoiceField(
        queryset=RubricItem.objects.order_by("key"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    targets = ConfigurationMultipleChoiceField(
        queryset=configurations_for_role(ModelRole.TARGET),
        widget=forms.CheckboxSelectMultiple,
        help_text="The models under test: configurations assigned the target role.",
    )
    simulator = ConfigurationChoiceField(
        queryset=ModelConfiguration.objects.filter(is_active=True).order_by("name"),
        label="User simulator",
        help_text="Plays the user; preset to the user-simulator role's default.",
    )
    judge = ConfigurationChoiceField(
        queryset=ModelConfiguration.objects.filter(is_active=True).order_by("name"),
        help_text="Decides each verdict; preset to the judge role's default.",
    )
    fidelity_checker = ConfigurationChoiceField(
        queryset=ModelConfiguration.objects.filter(is_active=True).order_by("name"),
        required=False,
        label=_("Fidelity checker"),
        empty_label=_("The judge"),
        help_text=_(
            "Reads every transcript and checks that the simulated user stayed in persona, "
            "pursued its hidden goal to the end and followed the assistant's replies; empty: "
            "the judge does it."
        ),
    )
    further_judges = ConfigurationMultipleChoiceField(
        queryset=configurations_for_role(ModelRole.JUDGE),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Further judges (a panel)",
        help_text="Optional: other judges (ideally of other model families) that read every "
        "conversation too, each as many times as the judge above. The verdict is then the "
        "majority of the judges' own verdicts; an even split is reported as a tie.",
    )
    turns = forms.IntegerField(min_value=1, max_value=MAX_TURNS, initial=8)
    replicates = forms.IntegerField(min_value=1, max_value=20, initial=1)
    judgments_per_conversation = forms.IntegerField(min_value=1, max_value=15, initial=3)
    no_anchors = forms.BooleanField(
        required=False,
        label="Simulate without anchors",
        help_text="The user simulator gets persona and goals but no anchor plan; run replicates "
        "this way to compare anchor consistency with a run that has anchors.",
    )
    rubric_grading = forms.ChoiceField(
        choices=RubricGrading.choices, initial=RubricGrading.PER_CRITERION, required=False
    )
    use_batch = forms.BooleanField(
        required=False,
        label=_("Judge by batch (half price, within 24 hours)"),
        help_text=_(
            "Judging, the anchor and fidelity checks and rubric grading go through the "
            "providers' batch APIs (OpenAI, Anthropic) at half price; the run may take up to a "
            "day longer. Simulation is always sent at once, as are roles whose provider has no "
            "batch API."
        ),
    )
    spending_cap = forms.DecimalField(
        required=False,
        min_value=Decimal("0.01"),
        max_digits=12,
        decimal_places=4,
        help_text="Optional, in the configurations' price units: launch is refused if the "
        "estimate exceeds it, and the run pauses when its actual cost reaches it.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Querysets are re-evaluated per form, so newly assigned targets appear at once.
        self.fields["targets"].queryset = configurations_for_role(ModelRole.TARGET)
        self.fields["further_judges"].queryset = configurations_for_role(ModelRole.JUDGE)
        roles = (
            ("simulator", ModelRole.USER_SIMULATOR),
            ("judge", ModelRole.JUDGE),
            ("fidelity_checker", ModelRole.FIDELITY_CHECKER),
        )
        for field, role in roles:
            self.fields[field].choices = _choices_role_first(self.fields[field], role)
            if not self.is_bound:
                default = _role_default(role)
                if default is not None:
                    self.initial.setdefault(field, default.pk)
        if not self.fields["targets"].queryset.exists():
            self.fields[
                "targets"
            ].help_text = (
                "No configuration has the target role yet: assign it under Model configurations."
            )
        self.helper = FormHelper()
        self.helper.form_tag = False
        self.helper.layout = Layout(
            "name",
            "release",
            Field("metric_versions", template="evaluations/_metric_version_groups.html"),
            "rubric_items",
            "targets",
            Div(
                Div("simulator", css_class="col-md-6"),
                Div("judge", css_class="col-md-6"),
                css_class="row",
            ),
            "further_judges",
            "fidelity_checker",
            Div(
                Div("turns", css_class="col-sm-4"),
                Div("replicates", css_class="col-sm-4"),
                Div("judgments_per_conversation", css_class="col-sm-4"),
                css_class="row",
            ),
            Div(
                Div("rubric_grading", css_class="col-sm-4"),
                Div("spending_cap", css_class="col-sm-4"),
                Div("no_anchors", css_class="col-sm-4 pt-sm-4"),
                Div("use_batch", css_class="col-sm-4 pt-sm-4"),
                css_class="row",
            ),
        )

    def _chosen_release_id(self) -> int | None:
        """The release of a submitted form (re-shown with its errors), if it names one."""
        if not self.is_bound:
            return None
        raw = self.data.get("release") or ""
        return int(raw) if raw.isdigit() else None

    def metric_version_groups(self) -> list[dict]:
        """The metric checkboxes grouped under each version's first subarea, in taxonomy order.

        Each option says which releases hold its version: ticked with a release, a metric
        outside it is refused, so the form marks it before the maintainer submits."""
        versions = {str(v.pk): v for v in self.fields["metric_versions"].queryset}
        releases: dict[int, list[tuple[int, str]]] = {}
        for version_id, release_id, number in ReleaseItem.objects.filter(
            metric_version_id__in=[v.pk for v in versions.values()]
        ).values_list("metric_version_id", "release_id", "release__version"):
            releases.setdefault(version_id, []).append((release_id, number))
        chosen = self._chosen_release_id()
        groups: dict[tuple, dict] = {}
        for widget in self["metric_versions"]:
            version = versions[str(widget.data["value"])]
            held = releases.get(version.pk, [])
            widget.releases = ", ".join(number for _pk, number in held)
            widget.release_ids = " ".join(str(pk) for pk, _number in held)
            widget.outside = chosen is not None and chosen not in {pk for pk, _n in held}
            subareas = sorted(version.subareas.all(), key=lambda s: (s.area.position, s.position))
            first = subareas[0] if subareas else None
            key = (first.area.position, first.position) if first else (99, 99)
            label = f"{first.area.name} · {first.name}" if first else "No subarea"
            group = groups.setdefault(
                key, {"label": label, "slug": first.slug if first else "none", "widgets": []}
            )
            group["widgets"].append(widget)
        return [groups[key] for key in sorted(groups)]

    def clean(self):
        data = super().clean()
        judge, further = data.get("judge"), data.get("further_judges")
        if judge is not None and further and judge in further:
            self.add_error("further_judges", "The judge above already sits on the panel.")
        return data


class SwapStudyForm(forms.Form):
    """An alternative judge and/or simulator for a sample of a completed run's scenarios.

    Only configurations assigned the role are offered: a drafter or a target judging its own
    kind would make the study measure the wrong thing."""

    judge = ConfigurationChoiceField(
        queryset=ModelConfiguration.objects.none(),
        required=False,
        label=_("Alternative judge"),
        help_text=_(
            "Leave empty to keep the run's judge. A judge-only swap re-judges the run's "
            "own conversations of the sample (nothing is simulated again)."
        ),
    )
    simulator = ConfigurationChoiceField(
        queryset=ModelConfiguration.objects.none(),
        required=False,
        label=_("Alternative user simulator"),
        help_text=_(
            "Leave empty to keep the run's simulator; a new simulator means new "
            "conversations of the sampled scenarios."
        ),
    )
    sample_size = forms.IntegerField(
        min_value=2,
        initial=50,
        label=_("Scenarios to sample"),
        help_text=_("Drawn at random, without replacement, from the scenarios the run finished."),
    )
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        help_text=_("Recorded with the study; leave empty for a random one."),
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Per form, so a role assigned a moment ago is offered at once.
        self.fields["judge"].queryset = configurations_for_role(ModelRole.JUDGE)
        self.fields["simulator"].queryset = configurations_for_role(ModelRole.USER_SIMULATOR)
        self.helper = FormHelper()
        self.helper.form_tag = False


class RubricRegressionForm(forms.Form):
    """Two configurations (a model configuration in a run) with graded rubric replies."""

    a = forms.ChoiceField(label=_("A (baseline)"))
    b = forms.ChoiceField(label=_("B (candidate)"))

    def __init__(self, *args, choices: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["a"].choices = choices
        self.fields["b"].choices = choices

    def clean(self):
        data = super().clean()
        if data.get("a") and data.get("a") == data.get("b"):
            raise forms.ValidationError(_("Pick two different configurations to compare."))
        return data

    def configuration(self, side: str) -> dict[str, str]:
        run_id, _colon, target = self.cleaned_data[side].partition(":")
        return {"run_id": run_id, "target": target}
