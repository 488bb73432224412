"""Model configurations, the roles they fill, and the record of every model call.

A configuration names an endpoint, a model and its sampling parameters; a role (judge, target…)
points at configurations. Every HTTP attempt is kept as an `LLMCall`, so any published number
can be traced to the exact prompt, parameters and raw reply that produced it.
"""

from decimal import Decimal
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from core.models import TimeStampedModel

from .keys import api_key_env_is_set, api_key_env_problem

ENV_VAR_NAME_VALIDATOR = RegexValidator(
    r"^[A-Za-z_][A-Za-z0-9_]*$",
    "Enter the name of the environment variable that holds the key (for example "
    "OPENAI_API_KEY), not the key itself.",
)
TOKENS_PER_PRICE_UNIT = Decimal(1_000_000)


class Provider(models.TextChoices):
    """The providers the platform ships; the field's choices come from `llm.providers`."""

    OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible endpoint"
    OFFLINE = "offline", "Offline demo model"


def provider_choices() -> list[tuple[str, str]]:
    """Every registered provider, so adding one needs no migration."""
    # Imported here: the providers import this module for its types.
    from .providers import registry

    return registry.choices()


class StructuredMode(models.TextChoices):
    """How a configuration is asked for JSON, strongest first (see `STRUCTURED_MODE_ORDER`)."""

    JSON_SCHEMA = "json_schema", "JSON schema (OpenAI, vLLM, Ollama; tool or schema output)"
    JSON_OBJECT_SCHEMA = (
        "json_object_schema",
        "JSON object with a schema (llama.cpp server turns it into a grammar)",
    )
    JSON_OBJECT = "json_object", "JSON object (any JSON, fields described in the prompt)"
    PROMPT = "prompt", "Prompt only (no response_format sent)"


# Strongest first: negotiation moves down this list, never up.
STRUCTURED_MODE_ORDER: tuple[str, ...] = (
    StructuredMode.JSON_SCHEMA,
    StructuredMode.JSON_OBJECT_SCHEMA,
    StructuredMode.JSON_OBJECT,
    StructuredMode.PROMPT,
)


class ModelRole(models.TextChoices):
    METRIC_DRAFTER = "metric_drafter", "Metric drafter"
    SCENARIO_WRITER = "scenario_writer", "Scenario writer"
    USER_SIMULATOR = "user_simulator", "User simulator"
    JUDGE = "judge", "Judge"
    TARGET = "target", "Target model"


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
    max_concurrency = models.PositiveIntegerField(
        null=True, blank=True, help_text="Most requests in flight at once; blank: no limit."
    )
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    is_active = models.BooleanField(default=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.provider not in dict(provider_choices()):
            raise ValidationError({"provider": f"Unknown provider {self.provider!r}."})
        if not self.is_offline and not self.model_id:
            raise ValidationError({"model_id": "An endpoint needs the name of the model to call."})
        if not isinstance(self.extra_params, dict):
            raise ValidationError({"extra_params": 'Enter a JSON object, e.g. {"top_k": 40}.'})
        if problem := api_key_env_problem(self.api_key_env):
            raise ValidationError({"api_key_env": problem})
        if self.base_url and (problem := self._url_mismatch()):
            raise ValidationError({"base_url": problem})

    def _url_mismatch(self) -> str:
        """Why the base URL belongs to another provider's API ("" when it does not)."""
        # Imported here: the providers import this module for its types.
        from .providers import registry

        host = (urlsplit(self.base_url).hostname or "").lower()
        for provider in registry.PROVIDERS.values():
            if provider.name != self.provider and any(
                host == marker or host.endswith("." + marker) for marker in provider.url_markers
            ):
                return (
                    f"{host} is the API of {provider.label}, which does not speak the "
                    f"{self.get_provider_display()} protocol: choose the provider "
                    f"{provider.label!r} for this URL."
                )
        return ""

    @property
    def api_key_is_set(self) -> bool:
        """For the UI: whether the named variable holds a value (the value is never shown)."""
        return api_key_env_is_set(self.api_key_env)

    @property
    def is_offline(self) -> bool:
        return self.provider == Provider.OFFLINE

    @property
    def endpoint(self) -> str:
        if self.is_offline:
            return "offline"
        if self.base_url:
            return self.base_url.rstrip("/")
        if self.provider == Provider.OPENAI_COMPATIBLE:
            return settings.LLM_DEFAULT_BASE_URL.rstrip("/")
        # Imported here: the providers import this module for its types.
        from .providers import registry

        return registry.provider_named(self.provider).default_base_url.rstrip("/")

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
    ) -> Decimal:
        """`prompt_tokens` counts every input token, the cached reads and writes among them."""
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


class CallOutcome(models.TextChoices):
    SUCCESS = "success", "Success"
    CACHED = "cached", "Cached"
    HTTP_ERROR = "http_error", "HTTP error"
    RATE_LIMITED = "rate_limited", "Rate limited"
    TIMEOUT = "timeout", "Timeout"
    CONNECTION_ERROR = "connection_error", "Connection error"
    INVALID_OUTPUT = "invalid_output", "Invalid output"
    MALFORMED = "malformed", "Malformed response"
    FAILED = "failed", "Failed"
    # Sent, but its worker died before the reply was recorded (restored from its journal).
    UNKNOWN = "unknown", "Outcome unknown"


ERROR_OUTCOMES = frozenset(
    {
        CallOutcome.HTTP_ERROR,
        CallOutcome.RATE_LIMITED,
        CallOutcome.TIMEOUT,
        CallOutcome.CONNECTION_ERROR,
        CallOutcome.INVALID_OUTPUT,
        CallOutcome.MALFORMED,
        CallOutcome.FAILED,
    }
)


class PromptText(models.Model):
    """The messages of a request, stored once per distinct text (keyed by their SHA-256).

    A conversation's calls repeat long prompts (the persona sheet, the transcript so far), so
    the call log references them instead of copying them into every attempt.
    """

    sha256 = models.CharField(max_length=64, primary_key=True)
    messages = models.JSONField(default=list)

    class Meta:
        verbose_name = "prompt text"

    def __str__(self) -> str:
        return self.sha256[:12]


class LLMCall(models.Model):
    """One attempt at a model call: every HTTP attempt, retry, re-ask and cache hit."""

    configuration = models.ForeignKey(
        ModelConfiguration, on_delete=models.PROTECT, related_name="calls"
    )
    role = models.CharField(max_length=32, choices=ModelRole.choices)
    purpose = models.CharField(max_length=100, help_text='What asked, e.g. "judge.verdict".')
    group_id = models.UUIDField(
        db_index=True, help_text="Shared by the attempts of one gateway call."
    )
    attempt = models.PositiveIntegerField(default=1)
    fingerprint = models.CharField(max_length=64, db_index=True)
    # Rows written before prompts were stored once keep their messages here; newer rows point
    # at a PromptText (read either through `prompt_messages`).
    messages = models.JSONField(default=list, blank=True)
    prompt = models.ForeignKey(
        PromptText, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    parameters = models.JSONField(default=dict)
    response_text = models.TextField(blank=True)
    parsed_json = models.JSONField(null=True, blank=True)
    outcome = models.CharField(max_length=20, choices=CallOutcome.choices)
    error_message = models.TextField(blank=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    finish_reason = models.CharField(
        max_length=32, blank=True, help_text='As the endpoint sent it: "stop", "length"…'
    )
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cached_prompt_tokens = models.PositiveIntegerField(
        default=0, help_text="Input tokens the provider read from its prompt cache."
    )
    cache_write_tokens = models.PositiveIntegerField(
        default=0, help_text="Input tokens the provider wrote to its prompt cache."
    )
    latency_ms = models.PositiveIntegerField(default=0)
    limit_wait_ms = models.PositiveIntegerField(
        default=0, help_text="Time waited for a concurrency or rate slot before this attempt."
    )
    backoff_ms = models.PositiveIntegerField(
        default=0,
        help_text="Time waited after this failed attempt before the next (Retry-After or backoff).",
    )
    cost_estimate = models.DecimalField(max_digits=14, decimal_places=8, default=Decimal(0))
    is_offline = models.BooleanField(default=False)
    # What the call was made for (llm/attribution.py): a run's accounting is a sum over its
    # rows, and `claim` is the fencing token of the work item's claim that made the attempt.
    run_id = models.BigIntegerField(null=True, blank=True)
    work_item = models.CharField(max_length=40, blank=True)
    claim = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["configuration", "created_at"], name="llm_call_config_created"),
            models.Index(fields=["run_id", "outcome"], name="llm_call_run_outcome"),
            models.Index(fields=["work_item"], name="llm_call_work_item"),
        ]
        constraints = [
            # The natural key of an attempt: a batch written again after a commit whose
            # outcome the client never learned finds its rows instead of adding them twice.
            models.UniqueConstraint(fields=["group_id", "attempt"], name="llm_call_unique_attempt"),
        ]

    def __str__(self) -> str:
        return f"{self.purpose} #{self.attempt} {self.outcome}"

    @property
    def is_error(self) -> bool:
        return self.outcome in ERROR_OUTCOMES

    @property
    def prompt_messages(self) -> list[dict]:
        """The messages as sent, wherever this row keeps them."""
        return self.prompt.messages if self.prompt_id else self.messages


class LLMResponseCache(models.Model):
    """A successful reply, keyed by everything that shaped the request."""

    key = models.CharField(max_length=64, unique=True)
    configuration = models.ForeignKey(
        ModelConfiguration, on_delete=models.CASCADE, related_name="cached_responses"
    )
    response_text = models.TextField()
    parsed_json = models.JSONField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "cached response"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.configuration} {self.key[:12]}"


class RequestLease(models.Model):
    """A request slot of a rate-limited configuration (the database limits backend).

    Counts towards max_concurrency until released or expired, and towards requests_per_minute
    for a minute after `acquired_at`. See llm.limits.
    """

    configuration = models.ForeignKey(
        ModelConfiguration, on_delete=models.CASCADE, related_name="+"
    )
    token = models.CharField(max_length=32, unique=True)
    acquired_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["configuration", "acquired_at"], name="llm_lease_config_acquired")
        ]

    def __str__(self) -> str:
        return f"{self.configuration_id} {self.token[:8]}"
