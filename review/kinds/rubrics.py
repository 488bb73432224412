"""Adapters for items the rubrics app produces: rubric criteria (expert consensus) and replies
to rubric items (the user panel's priorities).

Blindness: the rater's screen never names the target model; it is kept in the item's strata
for stratified sampling and for the figures only.
"""

from collections.abc import Iterable
from typing import Any

from django.utils.translation import gettext_lazy

from evaluations.models import ConversationStatus, RubricResponse
from rubrics.dimensions import dimension_choices
from rubrics.models import RubricCriterion

from .base import Candidate, KindAdapter, Question, register
from .questions import FORMS, priority_question


class RubricCriterionAdapter(KindAdapter):
    kind = "rubric_criterion"
    template_name = "review/items/_rubric_criterion.html"
    min_required_ratings = 3
    min_required_reason = gettext_lazy(
        "Rubric criteria need at least three reviews each: the consensus rule asks for three."
    )
    decides_criterion_consensus = True
    queue_section = "consensus"
    language_source = (RubricCriterion, "item__language")

    def questions(self, item) -> list[Question]:
        return list(FORMS["rubric_criterion"])

    def candidates(self) -> Iterable[Candidate]:
        criteria = RubricCriterion.objects.select_related("item").order_by("pk")
        for criterion in criteria:
            yield Candidate(
                object_id=criterion.pk,
                # Rubric items have no subarea or age context: the behaviour dimension and
                # the population (adult, teen, caregiver, clinician) stand in for them.
                strata={
                    "subarea": criterion.dimension,
                    "age_context": criterion.item.population,
                    "model": "",
                },
            )

    def render_context(self, item, assignment) -> dict[str, Any]:
        criterion = RubricCriterion.objects.select_related("item").get(pk=item.object_id)
        return {"criterion": criterion, "rubric_item": criterion.item}


class UserPrioritiesAdapter(KindAdapter):
    """A user panel rates a model's reply to a rubric conversation for what matters to them,
    one question per behaviour dimension of the clinicians' rubrics."""

    kind = "user_priorities"
    template_name = "review/items/_rubric_response.html"
    language_source = (RubricResponse, "item__language")

    def questions(self, item) -> list[Question]:
        return [priority_question(value, label) for value, label in dimension_choices()]

    def candidates(self) -> Iterable[Candidate]:
        responses = (
            RubricResponse.objects.filter(status=ConversationStatus.COMPLETED)
            .exclude(reply="")
            .select_related("item", "target")
            .order_by("pk")
        )
        for response in responses:
            yield Candidate(
                object_id=response.pk,
                strata={
                    "subarea": "",
                    "age_context": response.item.population,
                    "model": response.target.name,
                },
            )

    def render_context(self, item, assignment) -> dict[str, Any]:
        response = RubricResponse.objects.select_related("item").get(pk=item.object_id)
        return {"response": response, "rubric_item": response.item}


for adapter in (RubricCriterionAdapter(), UserPrioritiesAdapter()):
    register(adapter)
