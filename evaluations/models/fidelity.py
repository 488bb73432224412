"""Simulator fidelity: whether a conversation's simulated user did its job, read per conversation.

A checker model (the run's fidelity checker, by default its judge) reads the whole transcript
with the persona and the hidden goal and answers five questions, each with a quote from the
user's side (`FidelityCriterion`). Repeated user lines are also counted exactly, without a model.
A conversation meets the bar when every criterion held; those below it stay in the run and are
reported, and the pass rates are shown with and without them (`results.services.fidelity`).
"""

from django.db import models
from django.utils.translation import gettext_lazy as _

from .conversations import Conversation


class FidelityCriterion(models.TextChoices):
    PERSONA = "persona", _("Stays in persona and age register")
    GOAL = "goal", _("Pursues the hidden goal to the end")
    FRESH = "fresh", _("No stock or repeated lines")
    IN_CHARACTER = "in_character", _("Never breaks character")
    RESPONSIVE = "responsive", _("Follows from the assistant's last reply")


# The boolean field that holds each criterion's answer, in the order the page lists them.
CRITERION_FIELDS = {
    FidelityCriterion.PERSONA: "persona_held",
    FidelityCriterion.GOAL: "goal_held",
    FidelityCriterion.FRESH: "fresh_held",
    FidelityCriterion.IN_CHARACTER: "in_character_held",
    FidelityCriterion.RESPONSIVE: "responsive_held",
}


class FidelityReading(models.Model):
    """The fidelity check of one conversation's simulated user, with its evidence."""

    conversation = models.OneToOneField(
        Conversation, on_delete=models.CASCADE, related_name="fidelity"
    )
    checker = models.ForeignKey(
        "llm.ModelConfiguration", on_delete=models.PROTECT, related_name="+"
    )
    seed = models.BigIntegerField(default=0)
    persona_held = models.BooleanField()
    goal_held = models.BooleanField()
    fresh_held = models.BooleanField()
    in_character_held = models.BooleanField()
    responsive_held = models.BooleanField()
    passed = models.BooleanField(
        help_text="Every criterion held: the conversation meets the fidelity bar."
    )
    repeated_lines = models.PositiveSmallIntegerField(
        default=0, help_text="User turns that repeat an earlier one word for word (counted)."
    )
    criteria = models.JSONField(
        default=list,
        blank=True,
        help_text='[{"criterion": key, "held": b, "turn": n, "quote": "...", "found": b, '
        '"reason": "..."}] in FidelityCriterion order.',
    )
    call_ids = models.JSONField(default=list, blank=True)
    is_offline = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation"]

    def __str__(self) -> str:
        return f"{self.conversation_id} fidelity: passed={self.passed}"

    @property
    def held_count(self) -> int:
        return sum(getattr(self, field) for field in CRITERION_FIELDS.values())
