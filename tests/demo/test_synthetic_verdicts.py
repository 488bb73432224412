"""Synthetic blind expert verdicts: they carry the planted truth, judge trust recovers it,
and everything they produce is flagged synthetic."""

import pytest
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from demo.synthetic import SyntheticSpec, synthetic_dataset_generate
from evaluations.models import Conversation
from results.services import results_refresh
from results.services.expert_figures import release_expert_figures_frozen
from results.services.judge_trust import run_judge_trust
from review.models import Rating

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def test_synthetic_verdicts_give_the_planted_agreement_and_are_flagged(client):
    result = synthetic_dataset_generate(
        spec=SyntheticSpec(metrics=12, positive=6, models=3, seed=7, release_version="0.0.907")
    )
    run = result.run
    ratings = Rating.objects.filter(item__object_id__in=Conversation.objects.filter(run=run))
    assert ratings.count() == result.conversations
    assert all(r.answers["synthetic"] for r in ratings)
    assert ratings.first().queue.name.startswith("Synthetic")
    # The planted truth: the expert's verdict is the true one, the judge's the majority of
    # readings with planted errors; their agreement is counted here by hand.
    judge = dict(Conversation.objects.filter(run=run).values_list("pk", "verdict_present"))
    truth = {r.item.object_id: r.answers["verdict"] == "present" for r in ratings}
    pairs = [(judge[pk], truth[pk]) for pk in truth]
    trust = run_judge_trust(run)["all"]["all"]
    assert trust.agreement.n == len(pairs)
    assert trust.agreement.value == pytest.approx(sum(j == t for j, t in pairs) / len(pairs))
    assert trust.kappa.value == pytest.approx(
        cohen_kappa_score([j for j, _ in pairs], [t for _, t in pairs])
    )
    # A judge erring on a few percent of readings, outvoted by its other two: mostly right.
    assert trust.agreement.value > 0.9
    assert trust.synthetic
    # The release's frozen expert figures count the same verdicts.
    frozen = release_expert_figures_frozen(run.release_id)["panel"]
    assert frozen["majority_agreement"]["n"] == len(pairs)
    assert frozen["majority_agreement"]["value"] == pytest.approx(trust.agreement.value)
    results_refresh(run=run, n_resamples=50)
    key = Conversation.objects.filter(run=run).first().scenario.metric_version.metric.key
    data = client.get(reverse("results-api:metric-results", args=[key])).json()
    assert data["judge_trust"]["synthetic"] is True
    assert data["judge_trust"]["agreement"]["n"] == 18  # 6 scenarios x 3 models
    html = client.get(reverse("results:metric", args=[key])).content.decode()
    assert 'data-testid="synthetic-badge"' in html
