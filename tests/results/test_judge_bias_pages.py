"""A judge planted harsh on one model: the stored comparison flags that model and no other, and
the label, the methodology page and the label API show it."""

import pytest
from django.test import TestCase
from django.urls import reverse

from evaluations.models import Conversation, EvaluationRun
from results.services.judge_trust import run_agreement_gaps
from review.services import assignment_claim, queue_create, queue_set_status, rating_submit
from tests.factories import UserFactory
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db

HARSH = "Offline harshly judged"


def _rate_all_with_a_harsh_judge_on(run, harsh_name: str) -> None:
    """Blind experts agree with the judge on every conversation, except that on ``harsh_name``
    they find the behaviour wherever the judge said it was absent: the judge missed it."""
    rater = UserFactory()
    official = run.is_official
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=False)
    panel = queue_create(
        name="Panel",
        kind="external_panel",
        created_by=None,
        size=Conversation.objects.filter(run=run).count(),
        seed=1,
        required_ratings=1,
        eligible_raters=[rater],
        external_panel=True,
    )
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=official)
    with TestCase.captureOnCommitCallbacks(execute=True):
        while (assignment := assignment_claim(queue=panel, rater=rater)) is not None:
            c = Conversation.objects.select_related("target").get(pk=assignment.item.object_id)
            verdict = c.verdict_present or c.target.name.startswith(harsh_name)
            rating_submit(
                assignment=assignment,
                rater=rater,
                answers={"examples_adequate": "yes", "verdict": "present" if verdict else "absent"},
            )
        # A blind queue's ratings count once it is released.
        queue_set_status(queue=panel, status="closed")


@pytest.fixture
def harsh_run():
    # Ten metrics x 6 scenarios: 60 blind verdicts per model, the judge wrong on every one of
    # the harsh model's where it found the behaviour absent, and on none of the others'.
    run = published_run(n_metrics=10, names=("Offline A", "Offline B", HARSH))
    _rate_all_with_a_harsh_judge_on(run, HARSH)
    return run


@pytest.mark.slow(reason="builds a release with 180 blind expert ratings and renders its pages")
def test_only_the_harshly_judged_model_gets_the_badge_on_service_pages_and_api(client, harsh_run):
    targets = {t.name.removesuffix(" 1.0.0"): t for t in harsh_run.targets.all()}
    gaps = run_agreement_gaps(harsh_run)
    assert set(gaps) == {t.pk for t in targets.values()}
    harsh = gaps[targets[HARSH].pk]
    assert harsh.agrees_less
    assert harsh.model.n == 60
    assert harsh.others.n == 120
    missed = Conversation.objects.filter(
        run=harsh_run, target=targets[HARSH], verdict_present=False
    ).count()
    assert missed >= 20
    assert harsh.model.value == pytest.approx(1 - missed / 60)
    assert harsh.others.value == pytest.approx(1.0)
    assert -1.0 <= harsh.difference.low < harsh.difference.high < 0.0
    assert not any(g.agrees_less for pk, g in gaps.items() if pk != targets[HARSH].pk)

    html = client.get(reverse("results:label", args=[targets[HARSH].pk])).content.decode()
    assert 'data-testid="judge-agrees-less"' in html
    assert "judge agrees less for this model" in html
    assert 'data-testid="judge-gap-difference"' in html
    fair = client.get(reverse("results:label", args=[targets["Offline A"].pk])).content.decode()
    assert 'data-testid="label-judge-gap"' in fair
    assert 'data-testid="judge-agrees-less"' not in fair

    page = client.get(reverse("results:methodology")).content.decode()
    assert 'data-testid="judge-gap-table"' in page
    assert page.count('data-testid="judge-agrees-less"') == 1
    assert "VERA-MH" in page
    assert "HealthBench" in page

    data = client.get(reverse("results-api:label", args=[targets[HARSH].pk])).json()
    gap = data["judge_agreement_gap"]
    assert gap["badge"] == "agrees_less"
    assert gap["label"] == "judge agrees less for this model"
    assert gap["difference"]["high"] < 0
    assert gap["agreement_on_model"]["n"] == 60
    other = client.get(reverse("results-api:label", args=[targets["Offline B"].pk])).json()
    assert other["judge_agreement_gap"]["badge"] == "no_gap_shown"
