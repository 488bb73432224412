"""Recording a panel's ratings in one go: checked like a rater's, all or nothing."""

import pytest

from core.exceptions import ApplicationError
from core.roles import Role
from review.kinds import Candidate
from review.models import CriterionConsensus, ItemKind, Rating
from review.services import queue_create
from review.services.panel import panel_ratings_record
from rubrics.models import RubricCriterion
from tests.factories import UserFactory
from tests.rubrics.factories import RubricItemFactory

pytestmark = pytest.mark.django_db


def _queue(raters):
    item = RubricItemFactory(criteria__validated=False)
    criteria = list(item.criteria.order_by("position"))
    queue = queue_create(
        name="panel",
        kind=ItemKind.RUBRIC_CRITERION,
        created_by=None,
        fraction=1.0,
        external_panel=True,
        eligible_raters=raters,
        candidates=[Candidate(object_id=c.pk, strata={}) for c in criteria],
    )
    return queue, criteria


def test_a_panel_decides_consensus_like_raters_one_by_one():
    raters = [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in range(3)]
    queue, criteria = _queue(raters)
    answers = [("agree", "agree", "agree"), ("agree", "contradicts", "agree"), ("agree",) * 3]
    recorded = panel_ratings_record(
        queue=queue,
        ratings={
            rater: {c.pk: {"consensus": answers[i][k]} for i, c in enumerate(criteria)}
            for k, rater in enumerate(raters)
        },
    )
    assert recorded == 9
    states = dict(RubricCriterion.objects.values_list("pk", "consensus_state"))
    assert [states[c.pk] for c in criteria] == ["survived", "dropped", "survived"]
    assert CriterionConsensus.objects.get(criterion=criteria[1]).contradicts == 1


def test_a_bad_answer_or_an_outsider_records_nothing():
    raters = [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in range(3)]
    queue, criteria = _queue(raters)
    with pytest.raises(ApplicationError):
        panel_ratings_record(
            queue=queue,
            ratings={raters[0]: {criteria[0].pk: {"consensus": "maybe"}}},
        )
    outsider = UserFactory(roles=[Role.CONTRIBUTOR])
    with pytest.raises(ApplicationError, match="not one of the raters"):
        panel_ratings_record(
            queue=queue, ratings={outsider: {criteria[0].pk: {"consensus": "agree"}}}
        )
    assert not Rating.objects.exists()
