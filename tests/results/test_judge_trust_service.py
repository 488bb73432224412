"""Judge trust per metric and per target, from blind expert verdicts submitted through the
review queues, checked against a hand count and sklearn's Cohen's kappa."""

import pytest
from sklearn.metrics import cohen_kappa_score

from evaluations.models import EvaluationRun
from results.services.judge_trust import (
    judge_family_effect,
    run_judge_trust,
    target_self_preference,
)
from review.services import assignment_claim, queue_create, queue_set_status, rating_submit
from stats.judge_trust import NOT_CHECKED
from tests.factories import UserFactory
from tests.llm.factories import ModelConfigurationFactory, OfflineConfigurationFactory
from tests.results.factories import completed_run, metric_version, scenario

pytestmark = pytest.mark.django_db


def _rated_run(replicates: int = 7):
    """Two targets, one metric (three base scenarios, teen and adult, ``replicates`` each); a
    blind panelist who disagrees with the judge on base 0 (and on target B's teen forms too)."""
    a = OfflineConfigurationFactory(name="A")
    b = OfflineConfigurationFactory(name="B")
    version = metric_version()
    outcomes = []
    for base in range(3):
        for age in ("teen", "adult"):
            scen = scenario(version, base, age)
            for target in (a, b):
                for replicate in range(replicates):
                    passed = (base + replicate + len(age)) % 3 != 0
                    outcomes.append((scen, target, passed, replicate))
    run = completed_run(
        targets=[a, b], versions=[version], outcomes=outcomes, replicates=replicates
    )
    rater = UserFactory()
    # Blind items are drawn from conversations not public yet: the queue is drawn while the
    # run is not official, as a researcher would before publishing it.
    official = run.is_official
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=False)
    panel = queue_create(
        name="Panel",
        kind="external_panel",
        created_by=None,
        size=len(outcomes),
        seed=1,
        required_ratings=1,
        eligible_raters=[rater],
        external_panel=True,
    )
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=official)
    by_conversation = {c.pk: c for c in run.conversations.select_related("scenario", "target")}
    while (assignment := assignment_claim(queue=panel, rater=rater)) is not None:
        c = by_conversation[assignment.item.object_id]
        flip = c.scenario.base_index == 0 or (
            c.target.name == "B" and c.scenario.age_context == "teen"
        )
        expert = c.verdict_present != flip
        rating_submit(
            assignment=assignment,
            rater=rater,
            answers={"examples_adequate": "yes", "verdict": "present" if expert else "absent"},
        )
    # A blind queue's ratings count once it is released.
    queue_set_status(queue=panel, status="closed")
    return run, version, a, b, by_conversation


@pytest.mark.slow(reason="an expert panel rates a judged run; every figure recomputed by hand")
def test_figures_match_hand_count_and_sklearn():
    run, version, a, b, conversations = _rated_run()
    trust = run_judge_trust(run)
    key = version.metric.key
    for target in (a, b):
        mine = [c for c in conversations.values() if c.target_id == target.pk]
        judge = [c.verdict_present for c in mine]
        flips = [
            c.scenario.base_index == 0 or (target.name == "B" and c.scenario.age_context == "teen")
            for c in mine
        ]
        expert = [j != f for j, f in zip(judge, flips, strict=True)]
        # Hand count: A disagrees on base 0 (both ages, 7 replicates) = 14 of 42.
        agree = sum(not f for f in flips)
        cell = trust["metric_target"][(key, target.pk)]
        assert cell.agreement.n == 42
        assert cell.agreement.value == pytest.approx(agree / 42)
        assert cell.kappa.value == pytest.approx(cohen_kappa_score(judge, expert))
        assert cell.agreement.low <= cell.agreement.value <= cell.agreement.high
        assert trust["target"][target.pk].agreement.n == 42
    assert trust["metric_target"][(key, a.pk)].agreement.value == pytest.approx(28 / 42)
    assert trust["metric"][key].agreement.n == 84
    assert trust["category"]["agency"].agreement.n == 84
    # 67 % and 33 % agreement: experts checked and neither clears the bar.
    assert trust["metric_target"][(key, b.pk)].low
    assert not trust["metric"][key].synthetic


def test_too_few_verdicts_not_checked():
    run, version, a, _b, _ = _rated_run(replicates=2)
    cell = run_judge_trust(run)["metric_target"][(version.metric.key, a.pk)]
    assert cell.badge == NOT_CHECKED
    assert "external-panel" in cell.as_api()["how_to_fill"]


def test_self_preference_only_for_same_family_judge():
    gpt_judge = ModelConfigurationFactory(name="J", model_id="gpt-4.1")
    gpt = ModelConfigurationFactory(name="G", model_id="gpt-4o")
    claude = ModelConfigurationFactory(name="C", model_id="claude-3-opus")
    version = metric_version()
    run = completed_run(targets=[gpt, claude], versions=[version], outcomes=[], judge=gpt_judge)
    assert target_self_preference(run, gpt) == {"judge": "J", "family": "OpenAI"}
    assert target_self_preference(run, claude) is None
    effect = judge_family_effect(run)
    assert not effect["estimable"]
    assert "one judge" in effect["reason"]
