"""Evaluation runs: scenarios of some metric versions (or rubric items) × target models."""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.models import TimeStampedModel

DEFAULT_TURNS = 8
MAX_TURNS = 40


class RunStatus(models.TextChoices):
    # Lazily translated: refusals name the status in a sentence ("This run is already paused").
    DRAFT = "draft", pgettext_lazy("run status", "Draft")
    RUNNING = "running", pgettext_lazy("run status", "Running")
    PAUSED = "paused", pgettext_lazy("run status", "Paused")
    CANCELLED = "cancelled", pgettext_lazy("run status", "Cancelled")
    COMPLETED = "completed", pgettext_lazy("run status", "Completed")
    FAILED = "failed", pgettext_lazy("run status", "Failed")


class RubricGrading(models.TextChoices):
    PER_CRITERION = "per_criterion", _("One grader call per criterion (HealthBench)")
    ALL_IN_ONE = "all_in_one", _("One grader call for all criteria")


class EvaluationRun(TimeStampedModel):
    """Scenarios of some metric versions (and/or rubric items) × target models.

    Either a release (all its metric versions) or an explicit choice of metric versions; the
    explicit choice wins when both are given, so a subset of a release can be re-run.
    """

    name = models.CharField(max_length=200)
    release = models.ForeignKey(
        "metrics_registry.Release",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="evaluation_runs",
    )
    metric_versions = models.ManyToManyField(
        "metrics_registry.MetricVersion", blank=True, related_name="evaluation_runs"
    )
    rubric_items = models.ManyToManyField("rubrics.RubricItem", blank=True, related_name="runs")
    targets = models.ManyToManyField(
        "llm.ModelConfiguration", related_name="evaluation_runs_as_target"
    )
    simulator = models.ForeignKey(
        "llm.ModelConfiguration", on_delete=models.PROTECT, related_name="+"
    )
    judge = models.ForeignKey("llm.ModelConfiguration", on_delete=models.PROTECT, related_name="+")
    fidelity_checker = models.ForeignKey(
        "llm.ModelConfiguration",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Reads every transcript for the simulated user's fidelity; empty: the judge.",
    )
    turns = models.PositiveSmallIntegerField(
        default=DEFAULT_TURNS, validators=[MinValueValidator(1), MaxValueValidator(MAX_TURNS)]
    )
    replicates = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    judgments_per_conversation = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1), MaxValueValidator(15)]
    )
    typo_rate = models.FloatField(
        default=0.03, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    seed = models.BigIntegerField(default=0)
    use_anchors = models.BooleanField(
        default=True,
        help_text="Give the user simulator the scenario's anchor plan. Off, the simulator plays "
        "the persona and goals only, so replicates with and without anchors can be compared.",
    )
    rubric_grading = models.CharField(
        max_length=16, choices=RubricGrading.choices, default=RubricGrading.PER_CRITERION
    )
    use_batch = models.BooleanField(
        default=False,
        help_text=_(
            "Send judging, anchor and fidelity checks and rubric grading through the providers' "
            "batch APIs (OpenAI, Anthropic): half the price, answers within 24 hours. "
            "Simulation and target replies are always sent at once."
        ),
    )
    synthetic = models.BooleanField(
        default=False,
        help_text="Generated for load tests and benchmarks (generate_synthetic_dataset): "
        "not results of any real model.",
    )
    status = models.CharField(
        max_length=10, choices=RunStatus.choices, default=RunStatus.DRAFT, db_index=True
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Kept by the services with F() updates on every status change of a conversation, so the
    # progress page reads one row instead of counting tens of thousands.
    conversations_total = models.PositiveIntegerField(default=0)
    conversations_completed = models.PositiveIntegerField(default=0)
    conversations_failed = models.PositiveIntegerField(default=0)
    # Budget and health (evaluations/services/health.py). The cap is in the configurations'
    # price units; the run stops handing out work once the call log's cost reaches it.
    spending_cap = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    halt_reason = models.TextField(blank=True)
    # {configuration id: reason} for targets paused in this run after persistent failures.
    paused_configurations = models.JSONField(default=dict, blank=True)
    # The last time a worker's call journal could not be written while doing this run's work,
    # and why ("<host>: <the system's error>"): its calls were recorded without the journal.
    journal_failed_at = models.DateTimeField(null=True, blank=True)
    journal_failure = models.CharField(max_length=300, blank=True)
    # Public pages read only official runs: a maintainer designates them per published release,
    # so a later test run never silently replaces what visitors see.
    is_official = models.BooleanField(default=False, db_index=True)
    official_changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    official_changed_at = models.DateTimeField(null=True, blank=True)
    # The one official run of its release that public pages show by default. Unmarked, the
    # most complete official run is shown, so a smaller run made official later never
    # replaces it (`results.selectors.public_runs`).
    is_headline = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(turns__gte=1), name="run_turns_gte_1"),
            models.CheckConstraint(condition=Q(replicates__gte=1), name="run_replicates_gte_1"),
            models.CheckConstraint(
                condition=Q(judgments_per_conversation__gte=1), name="run_judgments_gte_1"
            ),
            models.CheckConstraint(
                condition=Q(typo_rate__gte=0) & Q(typo_rate__lte=1), name="run_typo_rate_range"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def conversations_remaining(self) -> int:
        return max(
            0,
            self.conversations_total - self.conversations_completed - self.conversations_failed,
        )

    @property
    def is_finished(self) -> bool:
        return self.status in (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)
