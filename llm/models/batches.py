"""Requests sent through a provider's batch API, and the batches that carry them.

A `BatchRequest` is written when a work item asks for something that may wait (a judgment, an
anchor or fidelity check, a rubric grade) in a run that goes by batch: it holds the request
exactly as the provider will get it and a `custom_id` derived from the work item and the
request's fingerprint, so the same question asked again finds its row instead of adding one.
The reaper (`llm.batches_reaper`) gathers pending requests of one configuration into an `LLMBatch`,
submits it, polls it and writes back each request's result; everything is a row here, so a
worker restart or a day of waiting loses nothing.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _

from .configuration import ModelConfiguration, ModelRole


class BatchStatus(models.TextChoices):
    # Recorded before the provider is called: a reaper that dies mid-call leaves this, and the
    # next one looks the batch up at the provider before it would submit anything again.
    SUBMITTING = "submitting", _("Submitting")
    SUBMITTED = "submitted", _("At the provider")
    ENDED = "ended", _("Ended, results collected")
    FAILED = "failed", _("Refused by the provider")


class LLMBatch(models.Model):
    configuration = models.ForeignKey(
        ModelConfiguration, on_delete=models.PROTECT, related_name="batches"
    )
    status = models.CharField(max_length=12, choices=BatchStatus.choices, db_index=True)
    provider_batch_id = models.CharField(max_length=200, blank=True, db_index=True)
    # The provider's own word for where the batch is ("in_progress", "validating", "ended"…).
    provider_status = models.CharField(max_length=40, blank=True)
    request_count = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    polled_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "provider batch"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"batch {self.pk} {self.status} {self.provider_batch_id}"

    @property
    def marker(self) -> str:
        """What the batch is found by at the provider if its id was never stored."""
        return f"impactbench-batch-{self.pk}"


class BatchRequestStatus(models.TextChoices):
    PENDING = "pending", _("Waiting to be sent")
    SUBMITTED = "submitted", _("In a batch")
    SUCCEEDED = "succeeded", _("Answered")
    ERRORED = "errored", _("Errored")
    EXPIRED = "expired", _("Expired")


class BatchRequest(models.Model):
    configuration = models.ForeignKey(
        ModelConfiguration, on_delete=models.PROTECT, related_name="batch_requests"
    )
    batch = models.ForeignKey(
        LLMBatch, null=True, blank=True, on_delete=models.SET_NULL, related_name="requests"
    )
    # Unique per work item and request; the provider hands it back with each result.
    custom_id = models.CharField(max_length=64, unique=True)
    fingerprint = models.CharField(max_length=64)
    role = models.CharField(max_length=32, choices=ModelRole.choices)
    purpose = models.CharField(max_length=100)
    # The platform's messages and parameters (for the call log), and the provider's body.
    messages = models.JSONField(default=list)
    parameters = models.JSONField(default=dict)
    body = models.JSONField(default=dict)
    status = models.CharField(
        max_length=10, choices=BatchRequestStatus.choices, default=BatchRequestStatus.PENDING
    )
    # Who asked (as `LLMCall` attributes its rows).
    run_id = models.BigIntegerField(null=True, blank=True)
    work_item = models.CharField(max_length=40, blank=True)
    claim = models.PositiveIntegerField(null=True, blank=True)
    # The result, as the provider's client read it.
    response_text = models.TextField(blank=True)
    finish_reason = models.CharField(max_length=32, blank=True)
    problem = models.TextField(blank=True)
    refused = models.BooleanField(default=False)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cached_prompt_tokens = models.PositiveIntegerField(default=0)
    cache_write_tokens = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    # Set by `llm.batches.batch_answers`: the id of its answer's call-log row, written when it
    # was collected (`llm.batches_reaper`).
    logged_call_id: int | None = None

    class Meta:
        ordering = ["pk"]
        indexes = [
            models.Index(fields=["status", "configuration"], name="llm_batchreq_status_config"),
            models.Index(fields=["run_id", "work_item"], name="llm_batchreq_work_item"),
        ]

    def __str__(self) -> str:
        return f"{self.custom_id} {self.status}"
