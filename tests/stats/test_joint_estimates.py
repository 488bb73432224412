"""Several figures of the same items from one drawing of the clusters: each is exactly the
figure its own bootstrap gives (same draws, same products), value, bounds and sd."""

import numpy as np
import pytest

import stats as statistics
from tests.stats.references import effective_wilson_reference


@pytest.fixture
def rated():
    rng = np.random.default_rng(5)
    clusters = rng.integers(0, 140, 900)
    answers = rng.choice(["agreed", "disagreed", "unsure"], 900, p=[0.7, 0.2, 0.1])
    a = rng.integers(0, 2, 900)
    b = np.where(rng.random(900) < 0.8, a, 1 - a)
    return clusters, answers, a, b


def test_shares_from_one_drawing_are_each_shares_own(rated):
    clusters, answers, _, _ = rated
    choices = ("agreed", "disagreed", "unsure")
    joint = statistics.share_estimates(answers, choices, clusters, n_resamples=2_000)
    for choice in choices:
        hits = (answers == choice).astype(float)
        own = statistics.proportion_estimate(hits, clusters, n_resamples=2_000)
        assert joint[choice] == own
        low, high = effective_wilson_reference(hits, clusters)
        assert (joint[choice].low, joint[choice].high) == pytest.approx((low, high), abs=1e-12)
    # Different shares, different intervals: the drawing is shared, not the figure.
    assert len({(e.low, e.high) for e in joint.values()}) == 3


def test_agreement_and_kappa_from_one_drawing_are_each_their_own(rated):
    clusters, _, a, b = rated
    agreement, kappa = statistics.agreement_estimates(
        a, b, clusters, over="base scenarios", n_resamples=2_000
    )
    assert agreement == statistics.proportion_estimate(
        (a == b).astype(float), clusters, over="base scenarios", n_resamples=2_000
    )
    assert kappa == statistics.cohen_estimate(
        a, b, clusters, over="base scenarios", n_resamples=2_000
    )
    assert kappa.low is not None
    assert agreement.sd is not None


def test_agreement_without_variation_says_why_as_on_its_own(rated):
    clusters, _, a, _ = rated
    same = np.zeros_like(a)
    agreement, kappa = statistics.agreement_estimates(same, same, clusters, n_resamples=500)
    assert kappa == statistics.cohen_estimate(same, same, clusters, n_resamples=500)
    assert kappa.value is None
    assert agreement.value == 1.0
