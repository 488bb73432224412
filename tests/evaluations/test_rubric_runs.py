"""Rubric items in runs: reply, grade criterion by criterion, score with item_score."""

import pytest

from evaluations.models import RubricCriterion, RubricGrade, RubricResponse
from evaluations.rubric import item_score
from evaluations.services import runs
from evaluations.services.rubric_runs import (
    rubric_response_process,
    rubric_response_score,
    run_rubric_scores,
)
from tests.evaluations.factories import RubricItemFactory
from tests.llm.factories import ModelConfigurationFactory, OfflineConfigurationFactory

pytestmark = pytest.mark.django_db


def _rubric_run(targets, judge, items):
    run = runs.run_create(
        name="Rubric run",
        targets=targets,
        simulator=OfflineConfigurationFactory(),
        judge=judge,
        rubric_items=items,
        seed=3,
    )
    return runs.run_launch(run=run, dispatch=False)


def test_a_rubric_only_run_grades_every_criterion_and_scores_by_the_formula():
    careful = OfflineConfigurationFactory(extra_params={"offline_profile": "careful"})
    agreeable = OfflineConfigurationFactory(extra_params={"offline_profile": "agreeable"})
    items = [RubricItemFactory(), RubricItemFactory(acuity="emergency", population="adult")]
    run = _rubric_run([careful, agreeable], OfflineConfigurationFactory(), items)
    plan = runs.run_plan(run)
    assert plan.rubric_responses == 4
    assert plan.conversations == 0
    assert plan.model_calls == 8  # one reply and one grading call per response

    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "completed"
    responses = RubricResponse.objects.filter(run=run)
    assert responses.count() == 4
    for response in responses:
        assert response.status == "completed"
        assert response.reply
        assert response.is_offline
        grades = list(response.grades.select_related("criterion"))
        assert len(grades) == 3
        assert response.score == item_score(
            [g.criterion.points for g in grades], [g.met for g in grades]
        )
    summary = {s.target: s for s in run_rubric_scores(run=run)}
    assert summary[careful.name].items == 2
    assert {label for label, _, _ in summary[careful.name].by_acuity} == {"Non-acute", "Emergency"}
    assert summary[careful.name].overall >= summary[agreeable.name].overall


def test_dropped_criteria_are_neither_graded_nor_scored():
    item = RubricItemFactory()
    dropped = item.criteria.get(points=3)
    dropped.dropped = True
    dropped.save()
    run = _rubric_run([OfflineConfigurationFactory()], OfflineConfigurationFactory(), [item])
    runs.run_process_inline(run_id=run.pk)
    response = RubricResponse.objects.get(run=run)
    assert not response.grades.filter(criterion=dropped).exists()
    assert response.grades.count() == 2
    # Dropping a criterion after grading takes it out of the score too.
    kept = response.grades.get(criterion__points=5)
    RubricGrade.objects.filter(pk=kept.pk).update(met=True)
    assert rubric_response_score(response) == pytest.approx(1.0)
    RubricCriterion.objects.filter(pk=kept.criterion_id).update(dropped=True)
    assert rubric_response_score(response) is None


def test_a_judge_that_skips_a_criterion_fails_the_response_and_retry_completes_it(fake_models):
    item = RubricItemFactory()
    replies = iter(
        [
            {"grades": [{"criterion": 1, "met": True, "justification": "Asks."}]},
            {"grades": [{"criterion": n, "met": n == 1, "justification": "ok"} for n in (1, 2, 3)]},
        ]
    )
    fake_models.judge_replies = replies
    run = _rubric_run([fake_models.target], fake_models.judge, [item])
    runs.run_process_inline(run_id=run.pk)
    response = RubricResponse.objects.get(run=run)
    assert response.status == "failed"
    assert "not [2, 3]" in response.error
    run.refresh_from_db()
    assert run.status == "failed"

    run.status = "running"
    run.save()
    RubricResponse.objects.filter(pk=response.pk).update(status="pending")
    rubric_response_process(response_id=response.pk)
    response.refresh_from_db()
    assert response.status == "completed"
    assert response.score == pytest.approx(5 / 8)
    # The reply was asked for once: the retry reused it.
    assert len(fake_models.requests_to("target")) == 1


def test_rubric_runs_over_http_send_the_item_conversation_to_the_target(fake_models):
    item = RubricItemFactory()
    fake_models.judge_replies = iter(
        [{"grades": [{"criterion": n, "met": True, "justification": "ok"} for n in (1, 2, 3)]}]
    )
    run = _rubric_run([fake_models.target], fake_models.judge, [item])
    runs.run_process_inline(run_id=run.pk)
    sent = fake_models.requests_to("target")[0].messages
    assert sent[0] == {"role": "system", "content": "You are Acme's helper."}
    assert sent[-1]["content"] == item.final_user_message
    assert ModelConfigurationFactory._meta.model.objects.count() >= 3


def test_a_rubric_only_run_counts_its_calls_and_tokens_in_the_run_totals(fake_models):
    from evaluations.selectors import run_progress
    from llm.models import LLMCall

    item = RubricItemFactory()
    fake_models.judge_replies = iter(
        [{"grades": [{"criterion": n, "met": True, "justification": "ok"} for n in (1, 2, 3)]}]
    )
    run = _rubric_run([fake_models.target], fake_models.judge, [item])
    runs.run_process_inline(run_id=run.pk)
    progress = run_progress(run=run)
    calls = LLMCall.objects.filter(purpose__startswith="evaluations.rubric")
    assert calls.count() == len(fake_models.server.requests) == 2
    assert progress.calls == 2
    assert progress.tokens == sum(c.prompt_tokens + c.completion_tokens for c in calls) > 0
