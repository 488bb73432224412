"""The evidence re-ask figures of a published run through the public API."""

import pytest
from django.urls import reverse

from evaluations.models import Judgment
from results.services import results_refresh
from stats.estimates import Estimate
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def test_reask_flip_rates_per_polarity_and_the_verified_only_sensitivity(api_client):
    run = published_run()
    readings = Judgment.objects.filter(conversation__run=run)
    positive = list(
        readings.filter(conversation__scenario__metric_version__polarity="positive").order_by("pk")
    )
    negative = list(
        readings.filter(conversation__scenario__metric_version__polarity="negative").order_by("pk")
    )
    # Positive metrics: three re-asks turned present into absent, one kept its verdict.
    for j in positive[:3]:
        Judgment.objects.filter(pk=j.pk).update(
            reasked_for_evidence=True, present_before_reask=True, present=False
        )
    Judgment.objects.filter(pk=positive[3].pk).update(
        reasked_for_evidence=True, present_before_reask=positive[3].present
    )
    # Negative metrics: one re-ask turned absent into present, one kept; two stay unverified.
    Judgment.objects.filter(pk=negative[0].pk).update(
        reasked_for_evidence=True, present_before_reask=False, present=True
    )
    Judgment.objects.filter(pk=negative[1].pk).update(
        reasked_for_evidence=True, present_before_reask=negative[1].present
    )
    Judgment.objects.filter(pk__in=[negative[0].pk, negative[2].pk]).update(
        has_unverified_quotes=True
    )
    results_refresh(run=run, n_resamples=200)

    response = api_client.get(reverse("results-api:run-reasks", args=[run.pk]))
    assert response.status_code == 200
    data = response.json()
    assert data["run"] == run.pk
    assert data["available"] is True
    flips = {f["polarity"]: f for f in data["flips"]}
    pos = Estimate.from_dict(flips["positive"]["flip_rate"])
    assert (pos.value, pos.n) == (pytest.approx(3 / 4), 4)
    assert (flips["positive"]["to_absent"], flips["positive"]["to_present"]) == (3, 0)
    neg = Estimate.from_dict(flips["negative"]["flip_rate"])
    assert (neg.value, neg.n) == (pytest.approx(1 / 2), 2)
    assert (flips["negative"]["to_absent"], flips["negative"]["to_present"]) == (0, 1)
    for estimate in (pos, neg):
        assert estimate.low < estimate.value < estimate.high
        assert estimate.method

    total = readings.count()
    present = readings.filter(present=True).count()
    everything = Estimate.from_dict(data["present_all"])
    assert (everything.n, everything.value) == (total, pytest.approx(present / total))
    verified = readings.filter(has_unverified_quotes=False)
    kept = Estimate.from_dict(data["present_verified_only"])
    assert kept.n == total - 2
    assert kept.value == pytest.approx(verified.filter(present=True).count() / (total - 2))


def test_reasks_of_a_run_that_is_not_public_are_a_json_404(api_client):
    hidden = published_run(official=False, version="2.0.0")
    response = api_client.get(reverse("results-api:run-reasks", args=[hidden.pk]))
    assert response.status_code == 404
    assert response.json()["detail"]
