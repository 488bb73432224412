"""The further judges of a run's panel.

The run's own ``judge`` (with ``judgments_per_conversation`` repetitions) is the panel's first
seat, so a single-judge run has no rows here and works exactly as before. Each row adds one
judge configuration with its own repetitions. A conversation's judgments are numbered across
the panel: the first seat's repetitions first (0 … judgments_per_conversation − 1), then each
further seat's in ``position`` order (`evaluations.services.panel.run_panel`), so every reading
stays unique per conversation and carries the configuration that made it (``Judgment.judge``).
"""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from .runs import EvaluationRun


class RunJudge(models.Model):
    """A further judge of a run's panel, with its number of readings per conversation."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="panel_judges")
    position = models.PositiveSmallIntegerField(
        help_text="1 for the second judge of the panel, 2 for the third, …"
    )
    judge = models.ForeignKey("llm.ModelConfiguration", on_delete=models.PROTECT, related_name="+")
    repetitions = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1), MaxValueValidator(15)]
    )

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "position"], name="run_judge_unique_position"),
            models.UniqueConstraint(fields=["run", "judge"], name="run_judge_unique_judge"),
            models.CheckConstraint(condition=Q(position__gte=1), name="run_judge_position_gte_1"),
            models.CheckConstraint(
                condition=Q(repetitions__gte=1), name="run_judge_repetitions_gte_1"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.run_id} judge {self.position}: {self.judge_id}"
