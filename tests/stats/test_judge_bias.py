"""The judge's agreement on one model against the others: Newcombe's interval against
statsmodels, the metric standardisation, bounds, and the badge's power and false flags."""

import numpy as np
import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from stats.bounds import mover_difference
from stats.judge_bias import agreement_gaps
from stats.judge_trust import MIN_EXPERT_VERDICTS
from tests.stats.judge_bias_simulation import Design, flag_rates


def _two_models(agree_a: int, n_a: int, agree_b: int, n_b: int):
    """One metric, every rating its own base scenario: no design effect, no weights."""
    model = ["a"] * n_a + ["b"] * n_b
    expert = np.ones(n_a + n_b)
    judge = np.concatenate(
        [
            np.r_[np.ones(agree_a), np.zeros(n_a - agree_a)],
            np.r_[np.ones(agree_b), np.zeros(n_b - agree_b)],
        ]
    )
    return model, ["m"] * (n_a + n_b), judge, expert, np.arange(n_a + n_b)


def test_the_difference_is_newcombes_as_statsmodels_gives_it():
    gaps = agreement_gaps(*_two_models(40, 50, 45, 50), icc=0.0, adjust=False)
    low, high = confint_proportions_2indep(40, 50, 45, 50, method="newcomb", compare="diff")
    d = gaps["a"].difference
    assert d.value == pytest.approx(0.8 - 0.9)
    assert (d.low, d.high) == pytest.approx((low, high))
    assert (gaps["a"].model.n, gaps["a"].others.n) == (50, 50)
    # Bonferroni over the two models: each interval at 97.5 %.
    adjusted = agreement_gaps(*_two_models(40, 50, 45, 50), icc=0.0)["a"].difference
    low, high = confint_proportions_2indep(
        40, 50, 45, 50, method="newcomb", compare="diff", alpha=0.025
    )
    assert (adjusted.low, adjusted.high) == pytest.approx((low, high))
    assert adjusted.confidence == pytest.approx(0.975)


@pytest.mark.parametrize(("agree_a", "agree_b"), [(0, 30), (30, 0), (30, 30), (0, 0)])
def test_the_difference_stays_inside_its_range_with_positive_width(agree_a, agree_b):
    d = agreement_gaps(*_two_models(agree_a, 30, agree_b, 30))["a"].difference
    assert -1.0 <= d.low <= d.value <= d.high <= 1.0
    assert d.high - d.low > 0.05


def test_newcombe_is_vectorised_and_bounded():
    low, high = mover_difference(
        [1.0, 0.0], [0.9, 0.0], [1.0, 0.1], [0.0, 1.0], [0.0, 0.9], [0.1, 1.0]
    )
    # Newcombe's method 10 at the extremes: 1 - 0 with both intervals 0.1 wide.
    assert low.tolist() == pytest.approx([1.0 - np.hypot(0.1, 0.1), -1.0])
    assert high.tolist() == pytest.approx([1.0, -1.0 + np.hypot(0.1, 0.1)])


def test_the_others_are_standardised_to_the_models_metrics():
    """The judge agrees 60 % on a hard metric and 100 % on an easy one for every model; model
    a was rated mostly on the hard one. Raw, it looks worse than the others; on the same
    metric mix, no different."""
    rows = []
    for model, hard, easy in (("a", 90, 10), ("b", 10, 90), ("c", 10, 90)):
        rows += [(model, "hard", i % 5 < 3, i) for i in range(hard)]
        rows += [(model, "easy", True, i + 1000) for i in range(easy)]
    model, metric, agreed, scenario = zip(*rows, strict=True)
    expert = np.ones(len(rows))
    gaps = agreement_gaps(model, metric, np.array(agreed, float), expert, scenario, icc=0.0)
    a = gaps["a"]
    assert a.model.value == pytest.approx(0.64)
    assert a.others.value == pytest.approx(0.64)
    assert a.difference.value == pytest.approx(0.0)
    assert not a.agrees_less


def test_too_few_verdicts_make_no_claim():
    gaps = agreement_gaps(*_two_models(0, MIN_EXPERT_VERDICTS - 1, 60, 60))
    assert gaps["a"].difference.high < 0
    assert not gaps["a"].agrees_less


def test_the_badge_catches_harsh_models_and_rarely_flags_the_others():
    """The synthetic release's design: 120 metrics x 6 models, every conversation rated, the
    judge failing 20 % of the true passes of three models."""
    rates = flag_rates(Design(), replications=12, seed=5)
    assert rates["harsh flagged"] >= 0.8
    assert rates["fair flagged"] <= 0.05
    fair = flag_rates(Design(harsh_models=0), replications=12, seed=6)
    assert fair["fair flagged"] <= 0.05
