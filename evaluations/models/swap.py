"""Swap studies: a sample of an official run's scenarios re-run with another judge or simulator.

The study links the base run (the one published) to the swap run (an ordinary run made by the
run services, restricted to the sampled scenarios), and records what was swapped, the sample
and the seed that drew it, so the comparison can be repeated exactly.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import pgettext_lazy

from .runs import EvaluationRun


class Swapped(models.TextChoices):
    JUDGE = "judge", pgettext_lazy("swapped model", "Judge")
    SIMULATOR = "simulator", pgettext_lazy("swapped model", "User simulator")
    BOTH = "both", pgettext_lazy("swapped model", "Judge and user simulator")


class SwapStudy(models.Model):
    base_run = models.ForeignKey(
        EvaluationRun, on_delete=models.PROTECT, related_name="swap_studies"
    )
    swap_run = models.OneToOneField(
        EvaluationRun, on_delete=models.CASCADE, related_name="swap_study"
    )
    swapped = models.CharField(max_length=10, choices=Swapped.choices)
    sample_size = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    # The sampled scenario ids, sorted: the swap run simulates (or re-judges) these only.
    scenario_ids = models.JSONField(default=list)
    # A judge-only swap re-judges copies of the base run's conversations instead of simulating.
    rejudged = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "swap studies"

    def __str__(self) -> str:
        return f"Swap study {self.pk}: run {self.base_run_id} → run {self.swap_run_id}"
