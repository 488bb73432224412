import pytest
from django.db import IntegrityError, transaction

from evaluations.models import Judgment, ScenarioStatus, Turn
from rubrics.models import RubricCriterion
from tests.evaluations.factories import ConversationFactory, ScenarioFactory
from tests.rubrics.factories import RubricItemFactory

pytestmark = pytest.mark.django_db


def test_one_active_scenario_per_metric_version_base_and_age_context():
    scenario = ScenarioFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        ScenarioFactory(metric_version=scenario.metric_version)
    # A retired scenario frees its slot: regeneration writes a new active one beside it.
    scenario.status = ScenarioStatus.RETIRED
    scenario.save()
    ScenarioFactory(metric_version=scenario.metric_version)
    ScenarioFactory(metric_version=scenario.metric_version, age_context="teen")


def test_base_index_is_zero_to_two():
    with pytest.raises(IntegrityError), transaction.atomic():
        ScenarioFactory(base_index=3)


def test_one_conversation_per_run_scenario_target_and_replicate():
    conversation = ConversationFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        ConversationFactory(
            run=conversation.run, scenario=conversation.scenario, target=conversation.target
        )
    ConversationFactory(
        run=conversation.run,
        scenario=conversation.scenario,
        target=conversation.target,
        replicate=1,
    )


def test_turns_and_judgments_are_unique_per_index_and_repetition():
    conversation = ConversationFactory()
    Turn.objects.create(
        conversation=conversation,
        index=1,
        user_text="hi",
        user_text_clean="Hi.",
        assistant_text=".",
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        Turn.objects.create(
            conversation=conversation,
            index=1,
            user_text="x",
            user_text_clean="x",
            assistant_text=".",
        )
    judgment = {"judge": conversation.run.judge, "seed": 1, "present": True, "justification": "."}
    Judgment.objects.create(conversation=conversation, repetition=0, **judgment)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(conversation=conversation, repetition=0, **judgment)


@pytest.mark.parametrize("points", [0, 11, -11])
def test_criterion_points_are_checked_by_the_database(points):
    item = RubricItemFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        RubricCriterion.objects.create(
            item=item, position=9, text="x", points=points, dimension="accuracy"
        )
