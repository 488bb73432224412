"""The share of judge readings whose evidence stayed unverified, for the methodology page."""

import pytest
from scipy.stats import chi2
from statsmodels.stats.proportion import proportion_confint

from evaluations.models import Judgment
from results.services.evidence import evidence_verification
from stats.estimates import Estimate
from tests.llm.factories import OfflineConfigurationFactory
from tests.results.factories import completed_run, metric_version, scenario

pytestmark = pytest.mark.django_db


def test_unverified_readings_are_counted_with_a_cluster_interval():
    model = OfflineConfigurationFactory()
    v = metric_version()
    scenarios = [scenario(v, base, "adult") for base in range(3)]
    run = completed_run(
        targets=[model], versions=[v], outcomes=[(s, model, True) for s in scenarios]
    )
    judgments = list(Judgment.objects.filter(conversation__run=run).order_by("pk"))
    assert len(judgments) == 9
    flagged = judgments[:2]  # two readings of the first base scenario
    Judgment.objects.filter(pk__in=[j.pk for j in flagged]).update(
        has_unverified_quotes=True, reasked_for_evidence=True
    )
    Judgment.objects.filter(pk=judgments[5].pk).update(reasked_for_evidence=True)
    flagged[0].conversation.__class__.objects.filter(pk=flagged[0].conversation_id).update(
        unverified_evidence=True
    )
    figure = evidence_verification(run, n_resamples=2000)
    estimate = Estimate.from_dict(figure["unverified"])
    assert estimate.value == pytest.approx(2 / 9)
    assert (estimate.n, estimate.n_clusters) == (9, 3)
    # Three clusters of three readings with 2, 0, 0 unverified: the one-way ANOVA intra-cluster
    # correlation is (4/9 - 1/9) / (4/9 + 2/9) = 1/2, shrunk towards 1 with weight 2 / (2 + 4):
    # 5/6, so the design effect is 1 + 2 * 5/6 = 8/3 and the effective size 27/8.
    # 0.75 effective unverified readings: Brown, Cai & DasGupta's Poisson lower bound.
    low, high = proportion_confint(2 / 9 * 27 / 8, 27 / 8, method="wilson")
    low = min(low, chi2.ppf(0.025, 2 * 0.75) / (2 * 27 / 8))
    assert (estimate.low, estimate.high) == pytest.approx((low, high), abs=1e-12)
    assert figure["reasked"] == 3
    assert figure["conversations_flagged"] == 1


def test_reask_flips_are_counted_by_polarity_with_a_verified_only_sensitivity():

    model = OfflineConfigurationFactory()
    v = metric_version()
    scenarios = [scenario(v, base, "adult") for base in range(3)]
    run = completed_run(
        targets=[model], versions=[v], outcomes=[(s, model, True) for s in scenarios]
    )
    judgments = list(Judgment.objects.filter(conversation__run=run).order_by("pk"))
    # Three re-asks: two that said present first and absent after, one that kept its verdict.
    kept = judgments[2].present
    for j, before in zip(judgments[:3], (True, True, kept), strict=True):
        Judgment.objects.filter(pk=j.pk).update(
            reasked_for_evidence=True, present_before_reask=before
        )
    Judgment.objects.filter(pk__in=[judgments[0].pk, judgments[1].pk]).update(present=False)
    Judgment.objects.filter(pk=judgments[0].pk).update(has_unverified_quotes=True)
    effects = evidence_verification(run, n_resamples=200)["reasks"]
    polarity = v.polarity
    mine = next(f for f in effects["flips"] if f["polarity"] == polarity)
    flips = Estimate.from_dict(mine["flip_rate"])
    assert flips.value == pytest.approx(2 / 3)
    assert flips.n == 3
    assert flips.low < flips.value < flips.high
    assert (mine["to_absent"], mine["to_present"]) == (2, 0)
    present = sum(Judgment.objects.filter(pk=j.pk, present=True).exists() for j in judgments)
    assert Estimate.from_dict(effects["present_all"]).value == pytest.approx(present / 9)
    verified_only = Estimate.from_dict(effects["present_verified_only"])
    assert verified_only.n == 8
