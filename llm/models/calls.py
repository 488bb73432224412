"""The record of every model call, the prompts it sent, and the replies kept for reuse.

Every HTTP attempt is kept as an `LLMCall`, so any published number can be traced to the exact
prompt, parameters and raw reply that produced it.
"""

from decimal import Decimal

from django.db import models
from django.utils.translation import pgettext_lazy

from ..providers.base import FailureOutcome
from .configuration import ModelConfiguration, ModelRole


class CallOutcome(models.TextChoices):
    """How the call log names an attempt; a failure's name is the provider's
    (`llm.providers.base.FailureOutcome`)."""

    SUCCESS = "success", pgettext_lazy("call outcome", "Success")
    CACHED = "cached", pgettext_lazy("call outcome", "Cached")
    HTTP_ERROR = FailureOutcome.HTTP_ERROR.value, pgettext_lazy("call outcome", "HTTP error")
    RATE_LIMITED = FailureOutcome.RATE_LIMITED.value, pgettext_lazy("call outcome", "Rate limited")
    TIMEOUT = FailureOutcome.TIMEOUT.value, pgettext_lazy("call outcome", "Timeout")
    CONNECTION_ERROR = (
        FailureOutcome.CONNECTION_ERROR.value,
        pgettext_lazy("call outcome", "Connection error"),
    )
    INVALID_OUTPUT = "invalid_output", pgettext_lazy("call outcome", "Invalid output")
    MALFORMED = FailureOutcome.MALFORMED.value, pgettext_lazy("call outcome", "Malformed response")
    FAILED = FailureOutcome.FAILED.value, pgettext_lazy("call outcome", "Failed")
    REFUSED = FailureOutcome.REFUSED.value, pgettext_lazy("call outcome", "Refused by the provider")
    # Sent, but its worker died before the reply was recorded (restored from its journal).
    UNKNOWN = "unknown", pgettext_lazy("call outcome", "Outcome unknown")


ERROR_OUTCOMES = frozenset(
    {
        CallOutcome.HTTP_ERROR,
        CallOutcome.RATE_LIMITED,
        CallOutcome.TIMEOUT,
        CallOutcome.CONNECTION_ERROR,
        CallOutcome.INVALID_OUTPUT,
        CallOutcome.MALFORMED,
        CallOutcome.FAILED,
        CallOutcome.REFUSED,
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
    # Sent in a provider's batch (`llm.batches`), billed at the configuration's batch price.
    batched = models.BooleanField(default=False)
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
            # The reaper's lookup of attempts of unknown outcome (`llm.reconcile`) every sweep:
            # a few rows among millions.
            models.Index(
                fields=["created_at"],
                condition=models.Q(outcome="unknown"),
                name="llm_call_unknown_created",
            ),
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
        prompt = self.prompt  # no query when the row keeps its own messages (no prompt_id)
        return prompt.messages if prompt is not None else self.messages


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
