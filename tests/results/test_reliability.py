"""Reliability figures from stored rows, against statsmodels / scikit-learn on the same data."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from evaluations.models import AnchorCoverage, Judgment, Turn
from results.services.reliability import (
    anchor_consistency,
    expert_agreement,
    expert_verdict_rows,
    judge_repeatability,
)
from stats.estimates import Estimate
from tests.llm.factories import OfflineConfigurationFactory
from tests.results.factories import completed_run, metric_version, scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged_run():
    """Two metrics × 3 bases × 2 ages × 2 models = 24 conversations, varied judge readings."""
    rng = np.random.default_rng(3)
    models = [OfflineConfigurationFactory(name=f"M{i}") for i in range(2)]
    versions = [metric_version(), metric_version(polarity="negative")]
    outcomes, readings = [], {}
    for v in versions:
        for base in range(3):
            for age in ("teen", "adult"):
                scen = scenario(v, base, age)
                for model in models:
                    votes = [bool(x) for x in rng.random(3) < rng.choice([0.1, 0.5, 0.9])]
                    present = sum(votes) >= 2
                    passed = present if v.polarity == "positive" else not present
                    readings[len(outcomes)] = votes
                    outcomes.append((scen, model, passed))
    run = completed_run(targets=models, versions=versions, outcomes=outcomes, judgments=readings)
    return run, versions, readings


def test_judge_repeatability_matches_statsmodels(judged_run):
    run, versions, readings = judged_run
    counts = np.array([[sum(v), 3 - sum(v)] for v in readings.values()])
    result = judge_repeatability(run, n_resamples=500)
    assert result["available"]
    assert result["n_conversations"] == 24
    assert result["fleiss_kappa"]["value"] == pytest.approx(sm_fleiss(counts), abs=1e-9)
    unanimous = np.mean([(c[0] in (0, 3)) for c in counts])
    assert result["unanimity"]["value"] == pytest.approx(unanimous, abs=1e-12)
    low, high = result["unanimity"]["low"], result["unanimity"]["high"]
    assert low <= result["unanimity"]["value"] <= high
    assert result["fleiss_kappa"]["low"] <= result["fleiss_kappa"]["high"]
    assert result["n_clusters"] == 6
    assert result["unanimity"]["n"] == 24
    assert result["unanimity"]["n_clusters"] == 6
    per_metric = {m["metric_version"]: m for m in result["per_metric"]}
    first = counts[:12]  # the first metric's conversations come first in the fixture
    assert per_metric[versions[0].pk]["fleiss_kappa"]["value"] == pytest.approx(
        sm_fleiss(first), abs=1e-9
    )
    assert per_metric[versions[0].pk]["n_conversations"] == 12


def test_judge_repeatability_needs_repeated_judgments(judged_run):
    run, _, _ = judged_run
    run.judgments_per_conversation = 1
    assert judge_repeatability(run)["available"] is False


def test_expert_agreement_against_sklearn(judged_run):
    run, _, _ = judged_run
    conversations = list(run.conversations.order_by("pk"))
    rows = []
    for i, conversation in enumerate(conversations[:10]):
        judge = conversation.verdict_present
        # Raters 1 and 2 agree with the judge except on every fourth conversation; rater 3 unsure.
        expert = judge if i % 4 else not judge
        rows += [
            (conversation.pk, 1, expert),
            (conversation.pk, 2, expert),
            (conversation.pk, 3, None),
        ]
    result = expert_agreement(run, rows, n_resamples=300)
    expert_majority = [
        c.verdict_present if i % 4 else not c.verdict_present
        for i, c in enumerate(conversations[:10])
    ]
    judge = [c.verdict_present for c in conversations[:10]]
    assert result["percent_agreement"]["value"] == pytest.approx(0.7)
    kappa = result["cohen_kappa"]
    assert kappa["value"] == pytest.approx(cohen_kappa_score(expert_majority, judge), abs=1e-9)
    # Cohen's kappa now carries an interval and its n (conversations with an expert majority).
    assert kappa["low"] <= kappa["value"] <= kappa["high"]
    assert kappa["n"] == 10
    shares = result["shares"]
    assert shares["unsure"]["value"] == pytest.approx(1 / 3)
    assert shares["agreed"]["value"] == pytest.approx(14 / 30)
    assert shares["disagreed"]["low"] <= shares["disagreed"]["value"] <= shares["disagreed"]["high"]
    # Intervals resample base scenarios: the ten conversations' (metric, base) situations.
    situations = {(c.scenario.metric_version_id, c.scenario.base_index) for c in conversations[:10]}
    assert len(situations) < 10
    assert (shares["agreed"]["n"], shares["agreed"]["n_clusters"]) == (30, len(situations))
    assert kappa["n_clusters"] == result["percent_agreement"]["n_clusters"] == len(situations)
    assert "base scenarios" in kappa["method"]
    assert result["n_raters"] == 3


def test_no_expert_ratings_is_said_not_faked(judged_run):
    run, _, _ = judged_run
    assert expert_agreement(run, None)["available"] is False
    assert expert_agreement(run, [])["available"] is False
    rows = expert_verdict_rows(run)
    assert rows == {"blind": [], "judge_visible": []}


def test_anchor_consistency_counts_disagreeing_anchors_from_measured_coverage():
    model = OfflineConfigurationFactory()
    v = metric_version()
    scen = scenario(v, 0, "teen")  # three anchors
    other = scenario(v, 1, "teen")
    unchecked = scenario(v, 2, "teen")
    outcomes = [
        (s, model, True, replicate) for s in (scen, other, unchecked) for replicate in (0, 1)
    ]
    run = completed_run(targets=[model], versions=[v], outcomes=outcomes, replicates=2)
    conversations = {(c.scenario_id, c.replicate): c for c in run.conversations.all()}
    raised = {
        (scen.pk, 0): [True, True, True],
        (scen.pk, 1): [True, False, True],  # anchor 1 not raised: 1 of 3 disagrees
        (other.pk, 0): [True, True, True],
        (other.pk, 1): [True, True, True],
    }
    for key, readings in raised.items():
        for anchor, was_raised in enumerate(readings):
            AnchorCoverage.objects.create(
                conversation=conversations[key],
                anchor_index=anchor,
                anchor_text=f"anchor {anchor}",
                raised=was_raised,
                quote_found=was_raised,  # a raised anchor counts only with a verified quote
            )
    # The plan says every anchor was carried; the figure must not read it.
    Turn.objects.create(
        conversation=conversations[(scen.pk, 1)],
        index=1,
        user_text="u",
        user_text_clean="u",
        assistant_text="a",
        anchor_index=1,
    )
    result = anchor_consistency(run, n_resamples=300)
    assert result["available"]
    assert result["n_groups"] == 2
    estimate = Estimate.from_dict(result["disagreement"])
    assert estimate.n == 6
    assert estimate.n_clusters == 2
    assert estimate.value == pytest.approx(1 / 6)
    # The scenario whose conversations were never checked is counted as excluded.
    assert {(e.reason, e.count) for e in estimate.excluded} == {("coverage not checked", 2)}
    assert result["worst_scenarios"][0]["scenario"] == scen.pk
    assert result["worst_scenarios"][0]["disagreement_rate"] == pytest.approx(1 / 3)
    assert result["n_unverified"] == 0
    # Wilson on the effective sample size: two clusters are too few for a bootstrap to cover.
    assert 0.0 < estimate.low < estimate.value < estimate.high < 1.0


def test_anchor_consistency_needs_replicates(judged_run):
    run, _, _ = judged_run
    assert anchor_consistency(run)["available"] is False


def test_two_stage_bootstrap_matches_its_exact_variance():
    """Balanced clusters: the two-stage resampled mean has variance (B + mean within / m) / g,
    with B the between-cluster and within the within-cluster variances (both divided by n)."""
    from stats import two_stage_sum_distribution

    rng = np.random.default_rng(5)
    g, m = 3, 8
    values = rng.normal(loc=[[0.0], [1.0], [3.0]], scale=[[0.5], [1.0], [2.0]], size=(g, m))
    clusters = np.repeat(np.arange(g), m)
    sums = np.column_stack([values.ravel(), np.ones(g * m)])
    dist = two_stage_sum_distribution(
        sums, clusters, lambda s: s[:, 0] / s[:, 1], n_resamples=40_000, seed=1
    )
    between = values.mean(axis=1).var()
    within = values.var(axis=1).mean()
    assert dist.mean() == pytest.approx(values.mean(), abs=0.03)
    assert dist.var() == pytest.approx((between + within / m) / g, rel=0.04)
    # One cluster: only the second stage varies.
    one = two_stage_sum_distribution(
        sums[:m], clusters[:m], lambda s: s[:, 0] / s[:, 1], n_resamples=40_000, seed=2
    )
    assert one.var() == pytest.approx(values[0].var() / m, rel=0.04)


def test_per_metric_repeatability_on_pipeline_judgments_matches_statsmodels():
    """Two metrics simulated and judged three times by the offline models; each metric's
    Fleiss' kappa equals statsmodels' on the stored judgments, with a two-stage interval."""
    from collections import defaultdict

    from evaluations.services import runs
    from evaluations.services.scenarios import scenarios_generate
    from tests.evaluations.factories import current_version
    from tests.metrics_registry.factories import MetricFactory

    helper = OfflineConfigurationFactory()
    versions = [current_version(MetricFactory()) for _ in range(2)]
    for version in versions:
        scenarios_generate(metric_version=version, configuration=helper)
    run = runs.run_create(
        name="Repeatability",
        metric_versions=versions,
        targets=[
            OfflineConfigurationFactory(extra_params={"offline_profile": profile})
            for profile in ("careful", "agreeable")
        ],
        simulator=helper,
        judge=helper,
        turns=2,
        replicates=2,
        judgments_per_conversation=3,
        seed=7,
    )
    runs.run_process_inline(run_id=runs.run_launch(run=run, dispatch=False).pk)
    votes = defaultdict(list)
    for conversation_id, version_id, present in Judgment.objects.filter(
        conversation__run=run
    ).values_list("conversation_id", "conversation__scenario__metric_version_id", "present"):
        votes[(version_id, conversation_id)].append(bool(present))
    result = judge_repeatability(run, n_resamples=300, per_metric_resamples=1000)
    per_metric = {m["metric_version"]: m for m in result["per_metric"]}
    compared = 0
    for version in versions:
        counts = np.array(
            [[sum(v), 3 - sum(v)] for (vid, _), v in votes.items() if vid == version.pk]
        )
        figure = per_metric[version.pk]
        assert figure["n_conversations"] == len(counts) == 6 * 2 * 2
        assert figure["n_clusters"] == 3
        kappa = figure["fleiss_kappa"]
        assert "two-stage bootstrap" in kappa["method"]
        assert kappa["n"] == len(counts)
        expected = sm_fleiss(counts)
        if np.isfinite(expected):
            assert kappa["value"] == pytest.approx(expected, abs=1e-9)
            assert -1 <= kappa["low"] < kappa["value"] < kappa["high"] <= 1
            compared += 1
        unanimous = np.mean([(c[0] in (0, 3)) for c in counts])
        assert figure["unanimity"]["value"] == pytest.approx(unanimous, abs=1e-12)
    # The pipeline's judge is not perfectly repeatable everywhere, or this test says nothing.
    assert compared >= 1
    assert any(0 < sum(v) < 3 for v in votes.values())
