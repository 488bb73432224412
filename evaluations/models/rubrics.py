"""A run's replies to rubric items and their grades: the run rows of the rubrics app's content.

Claimed and processed like conversations (``run``, ``status``, ``attempts``, ``claimed_by``,
``lease_expires_at``, ``dispatched_at``: the columns `services.claims` works on).
"""

from django.db import models

from core.models import TimeStampedModel
from rubrics.models import RubricCriterion, RubricItem

from ..evidence_support import GradeEvidence
from .conversations import ConversationStatus
from .runs import EvaluationRun


class RubricResponse(TimeStampedModel):
    """A target model's reply to a rubric item's final user message, within a run."""

    run = models.ForeignKey(
        EvaluationRun, on_delete=models.CASCADE, related_name="rubric_responses"
    )
    item = models.ForeignKey(RubricItem, on_delete=models.PROTECT, related_name="responses")
    target = models.ForeignKey("llm.ModelConfiguration", on_delete=models.PROTECT, related_name="+")
    reply = models.TextField(blank=True)
    status = models.CharField(
        max_length=10, choices=ConversationStatus.choices, default=ConversationStatus.PENDING
    )
    error = models.TextField(blank=True)
    score = models.FloatField(
        null=True, blank=True, help_text="HealthBench item score; not clipped, can be negative."
    )
    counted_criteria = models.JSONField(
        null=True,
        blank=True,
        help_text="Ids of the criteria that counted, frozen when grading began, so later "
        "reviews never change this score.",
    )
    attempts = models.PositiveIntegerField(default=0)
    call_ids = models.JSONField(default=list, blank=True)
    is_offline = models.BooleanField(default=False)
    claimed_by = models.CharField(max_length=200, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "item", "target"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "target"], name="rubric_response_unique_per_run_item_target"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item} × {self.target}"


class RubricGrade(models.Model):
    response = models.ForeignKey(RubricResponse, on_delete=models.CASCADE, related_name="grades")
    criterion = models.ForeignKey(RubricCriterion, on_delete=models.PROTECT, related_name="grades")
    # Counted as met: the grader said met and quoted the reply's words that show it. A grade
    # the grader called met without such a quote is stored unmet, `evidence_status` unsupported.
    met = models.BooleanField()
    justification = models.TextField(blank=True)
    quote = models.TextField(blank=True, help_text="The reply's words the grader quoted.")
    evidence_status = models.CharField(
        max_length=16,
        choices=GradeEvidence.choices,
        default=GradeEvidence.UNCHECKED,
    )
    reasked_for_evidence = models.BooleanField(default=False)
    call_ids = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["response", "criterion__position"]
        constraints = [
            models.UniqueConstraint(
                fields=["response", "criterion"], name="rubric_grade_unique_per_criterion"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.response_id} {self.criterion_id}: {'met' if self.met else 'not met'}"
