"""Model configurations and the roles they fill.

A configuration names an endpoint, a model and its sampling parameters; a role (judge, target…)
points at configurations.
"""

from decimal import Decimal
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from core.models import TimeStampedModel

from ..keys import api_key_env_is_set, api_key_env_problem
from ..providers import registry
from ..providers.base import MODE_ORDER, OutputMode

ENV_VAR_NAME_VALIDATOR = RegexValidator(
    r"^[A-Za-z_][A-Za-z0-9_]*$",
    "Enter the name of the environment variable that holds the key (for example "
    "OPENAI_API_KEY), not the key itself.",
)
TOKENS_PER_PRICE_UNIT = Decimal(1_000_000)


class Provider(models.TextChoices):
    """The providers the platform ships; the field's choices come from `llm.providers`."""

    OPENAI_COMPATIBLE = "openai_compatible", gettext_lazy("OpenAI-compatible endpoint")
    OFFLINE = "offline", gettext_lazy("Offline demo model")
    IMPORTED = "imported", gettext_lazy("Imported transcripts (never called)")


def provider_choices() -> list[tuple[str, str]]:
    """Every registered provider, so adding one needs no migration."""
    return registry.choices()


class StructuredMode(models.TextChoices):
    """How a configuration is asked for JSON, strongest first (see `STRUCTURED_MODE_ORDER`);
    the values are the providers' (`llm.providers.base.OutputMode`)."""

    JSON_SCHEMA = (
        OutputMode.JSON_SCHEMA.value,
        gettext_lazy("JSON schema (OpenAI, vLLM, Ollama; tool or schema output)"),
    )
    JSON_OBJECT_SCHEMA = (
        OutputMode.JSON_OBJECT_SCHEMA.value,
        gettext_lazy("JSON object with a schema (llama.cpp server turns it into a grammar)"),
    )
    JSON_OBJECT = (
        OutputMode.JSON_OBJECT.value,
        gettext_lazy("JSON object (any JSON, fields described in the prompt)"),
    )
    PROMPT = OutputMode.PROMPT.value, gettext_lazy("Prompt only (no response_format sent)")


# Strongest first: negotiation moves down this list, never up.
STRUCTURED_MODE_ORDER: tuple[str, ...] = MODE_ORDER


class ModelRole(models.TextChoices):
    METRIC_DRAFTER = "metric_drafter", pgettext_lazy("model role", "Metric drafter")
    SCENARIO_WRITER = "scenario_writer", pgettext_lazy("model role", "Scenario writer")
    USER_SIMULATOR = "user_simulator", pgettext_lazy("model role", "User simulator")
    JUDGE = "judge", pgettext_lazy("model role", "Judge")
    FIDELITY_CHECKER = "fidelity_checker", pgettext_lazy("model role", "Simulator fidelity checker")
    TARGET = "target", pgettext_lazy("model role", "Target model")


class ModelConfiguration(TimeStampedModel):
    name = models.CharField(max_length=120, unique=True)
    synthetic = models.BooleanField(
        default=False,
        help_text="Generated for load tests and benchmarks (generate_synthetic_dataset): "
        "not results of any real model.",
    )
    provider = models.CharField(
        max_length=32, choices=provider_choices, default=Provider.OPENAI_COMPATIBLE
    )
    base_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="Leave blank to use the platform default endpoint (OPENAI_BASE_URL).",
    )
    model_id = models.CharField(max_length=200, help_text="The model name the endpoint expects.")
    model_line = models.CharField(
        max_length=120,
        blank=True,
        help_text='The product these settings are one version of (e.g. "Acme Chat"): a '
        "model's label follows its line across versions and releases. Blank: this "
        "configuration alone.",
    )
    temperature = models.FloatField(
        null=True,
        blank=True,
        default=0.7,
        validators=[MinValueValidator(0.0), MaxValueValidator(2.0)],
        help_text="Blank: not sent, the endpoint's default applies.",
    )
    top_p = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Blank: not sent.",
    )
    max_tokens = models.PositiveIntegerField(
        null=True, blank=True, default=1024, validators=[MinValueValidator(1)]
    )
    seed = models.BigIntegerField(
        null=True, blank=True, help_text="Default seed; a call may pass its own."
    )
    extra_params = models.JSONField(
        default=dict,
        blank=True,
        help_text=(
            "Other request parameters sent as they are (e.g. presence_penalty, top_k). "
            "Keys starting with offline_ are read by the offline demo model only."
        ),
    )
    system_prompt = models.TextField(blank=True)
    structured_output = models.CharField(
        max_length=20,
        choices=StructuredMode.choices,
        default=StructuredMode.JSON_SCHEMA,
        help_text="For judge, simulator and other structured calls. configure_model and "
        '"Test this endpoint" store the strongest mode the endpoint accepts; a run moves a '
        "configuration down one mode when its server refuses the request's response format.",
    )
    structured_output_note = models.TextField(
        blank=True,
        help_text="What the platform found about this endpoint's structured output: the modes "
        "it tried, and why it moved to a weaker one.",
    )
    api_key_env = models.CharField(
        "API key environment variable",
        max_length=100,
        blank=True,
        default="OPENAI_API_KEY",
        validators=[ENV_VAR_NAME_VALIDATOR],
        help_text="Name of the environment variable holding the key. Blank for local servers "
        "without authentication.",
    )
    price_per_million_input_tokens = models.DecimalField(
        max_digits=10, decimal_places=4, default=Decimal(0), validators=[MinValueValidator(0)]
    )
    price_per_million_output_tokens = models.DecimalField(
        max_digits=10, decimal_places=4, default=Decimal(0), validators=[MinValueValidator(0)]
    )
    price_per_million_cached_input_tokens = models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="Input tokens read from the provider's prompt cache; blank: the input price.",
    )
    price_per_million_cache_write_tokens = models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="Input tokens written to the provider's prompt cache (Anthropic charges "
        "1.25 × input for a 5-minute cache); blank: the input price.",
    )
    batch_price_ratio = models.DecimalField(
        max_digits=4,
        decimal_places=3,
        default=Decimal("0.5"),
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text=gettext_lazy(
            "What a request sent through the provider's batch API costs, as a share of the "
            "prices above (OpenAI and Anthropic bill batches at half price, cache reads and "
            "writes included)."
        ),
    )
    # Off by default: the provider then keeps every completion of this configuration (a
    # data-retention choice), for an exact bill after a worker is killed (llm.reconcile).
    store_completions = models.BooleanField(
        default=False,
        help_text=gettext_lazy(
            "OpenAI-compatible endpoints only: send every request with store: true and metadata "
            "naming its attempt, so that an attempt whose worker died before reading the reply "
            "is looked up at the provider and billed exactly. The provider then keeps these "
            "completions (prompts and replies) on its side: a data-retention choice."
        ),
    )
    max_concurrency = models.PositiveIntegerField(
        null=True, blank=True, help_text="Most requests in flight at once; blank: no limit."
    )
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    input_tokens_per_minute = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text=gettext_lazy(
            "Most input tokens sent per minute; blank: no limit. Input tokens read from the "
            "provider's prompt cache do not count (as Anthropic counts on most models)."
        ),
    )
    output_tokens_per_minute = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text=gettext_lazy(
            "Most output tokens per minute; each request reserves its max_tokens until the "
            "reply says how many it used. Blank: no limit."
        ),
    )
    # Until when the provider's rate-limit headers said to send nothing more (the database
    # limits backend's copy of the pause; with Redis it is a key there). See llm.limits.
    paced_until = models.DateTimeField(null=True, blank=True, editable=False)
    is_active = models.BooleanField(default=True)
    description = models.TextField(blank=True)
    # Set once, by the evaluations app through `configurations_publish`, when a run using this
    # configuration is made official; never cleared, as readers may have cited the names.
    published_in_run = models.PositiveIntegerField(
        null=True,
        blank=True,
        editable=False,
        help_text="The first official run that used this configuration: from then on the "
        "names public results show (PUBLISHED_FIELDS) cannot change.",
    )

    # What public pages, exports and labels show of a configuration: frozen once published.
    # Prices, limits, the endpoint, the description and whether it is active stay editable.
    PUBLISHED_FIELDS = ("name", "provider", "model_id", "model_line")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.provider not in dict(provider_choices()):
            raise ValidationError(
                {"provider": _("Unknown provider %(provider)r.") % {"provider": self.provider}}
            )
        if not (self.is_offline or self.is_imported) and not self.model_id:
            raise ValidationError(
                {"model_id": _("An endpoint needs the name of the model to call.")}
            )
        if not isinstance(self.extra_params, dict):
            raise ValidationError({"extra_params": _('Enter a JSON object, e.g. {"top_k": 40}.')})
        if problem := api_key_env_problem(self.api_key_env):
            raise ValidationError({"api_key_env": problem})
        if self.base_url and (problem := self._url_mismatch()):
            raise ValidationError({"base_url": problem})
        if changed := self._published_fields_changed():
            # Every way of saving runs full_clean (the forms, the admin, configuration_save).
            message = _(
                "This configuration is part of published results (run %(run)s); create a new "
                "configuration for new runs."
            ) % {"run": self.published_in_run}
            raise ValidationError(dict.fromkeys(changed, message))

    def _published_fields_changed(self) -> list[str]:
        """The published names this unsaved edit changes (none before publication)."""
        if self.pk is None:
            return []
        stored = (
            type(self)
            .objects.filter(pk=self.pk, published_in_run__isnull=False)
            .values("published_in_run", *self.PUBLISHED_FIELDS)
            .first()
        )
        if stored is None:
            return []
        # The stored row decides: an instance loaded before publication is frozen too.
        self.published_in_run = stored["published_in_run"]
        return [name for name in self.PUBLISHED_FIELDS if getattr(self, name) != stored[name]]

    def _url_mismatch(self) -> str:
        """Why the base URL belongs to another provider's API ("" when it does not)."""
        host = (urlsplit(self.base_url).hostname or "").lower()
        for provider in registry.all_facts().values():
            if provider.name != self.provider and any(
                host == marker or host.endswith("." + marker) for marker in provider.url_markers
            ):
                return _(
                    "%(host)s is the API of %(provider)s, which does not speak the "
                    "%(protocol)s protocol: choose the provider %(provider)r for this URL."
                ) % {
                    "host": host,
                    "provider": provider.label,
                    "protocol": self.get_provider_display(),
                }
        return ""

    @property
    def api_key_is_set(self) -> bool:
        """For the UI: whether the named variable holds a value (the value is never shown)."""
        return api_key_env_is_set(self.api_key_env)

    @property
    def is_offline(self) -> bool:
        return self.provider == Provider.OFFLINE

    @property
    def is_imported(self) -> bool:
        """Names the model of imported transcripts; never called (`llm.request`)."""
        return self.provider == Provider.IMPORTED

    @property
    def endpoint(self) -> str:
        if self.is_offline:
            return "offline"
        if self.is_imported:
            return "imported"
        if self.base_url:
            return self.base_url.rstrip("/")
        if self.provider == Provider.OPENAI_COMPATIBLE:
            return settings.LLM_DEFAULT_BASE_URL.rstrip("/")
        return registry.facts(self.provider).default_base_url.rstrip("/")

    @property
    def offline_profile(self) -> str:
        return str((self.extra_params or {}).get("offline_profile", ""))

    def cost_estimate(
        self,
        *,
        prompt_tokens: int,
        completion_tokens: int,
        cached_prompt_tokens: int = 0,
        cache_write_tokens: int = 0,
        batched: bool = False,
    ) -> Decimal:
        """`prompt_tokens` counts every input token, the cached reads and writes among them;
        `batched`: answered through the provider's batch API, at `batch_price_ratio`."""
        if self.is_offline:
            return Decimal(0)
        input_price = self.price_per_million_input_tokens
        cached_price = self.price_per_million_cached_input_tokens
        write_price = self.price_per_million_cache_write_tokens
        plain = max(0, prompt_tokens - cached_prompt_tokens - cache_write_tokens)
        total = (
            Decimal(plain) * input_price
            + Decimal(cached_prompt_tokens)
            * (input_price if cached_price is None else cached_price)
            + Decimal(cache_write_tokens) * (input_price if write_price is None else write_price)
            + Decimal(completion_tokens) * self.price_per_million_output_tokens
        )
        if batched:
            total *= self.batch_price_ratio
        return (total / TOKENS_PER_PRICE_UNIT).quantize(Decimal("0.00000001"))


class ModelRoleAssignment(TimeStampedModel):
    """A configuration filling a role. One default per role; targets are usually many."""

    role = models.CharField(max_length=32, choices=ModelRole.choices)
    configuration = models.ForeignKey(
        ModelConfiguration, on_delete=models.CASCADE, related_name="role_assignments"
    )
    is_default = models.BooleanField(default=False)

    class Meta:
        ordering = ["role", "-is_default", "configuration__name"]
        constraints = [
            models.UniqueConstraint(
                fields=["role", "configuration"], name="llm_assignment_unique_role_configuration"
            ),
            models.UniqueConstraint(
                fields=["role"],
                condition=models.Q(is_default=True),
                name="llm_assignment_one_default_per_role",
            ),
        ]

    def __str__(self) -> str:
        default = " (default)" if self.is_default else ""
        return f"{self.get_role_display()}: {self.configuration}{default}"
