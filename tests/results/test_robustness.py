"""Robustness outputs on constructed cases with a known swap and a known age difference."""

import numpy as np
import pytest

import stats as statistics
from results.services.cells import RunCells
from results.services.robustness import robustness
from results.services.teen_adult import teen_adult_differences, teen_adult_test
from tests.results import coverage_design


def make_cells(rows, meta):
    """rows: (target, version, base, age, n, passed); meta: version -> (polarity, source, subs)."""
    arr = np.array(rows, dtype=np.int64)
    cells = RunCells(
        arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], arr[:, 4].astype(float), arr[:, 5].astype(float)
    )
    for v, (polarity, source, subareas) in meta.items():
        cells.polarity[v] = polarity
        cells.source[v] = source
        cells.subareas[v] = list(subareas)
    return cells


@pytest.fixture
def swap_case():
    """Model 1 beats model 2 only thanks to benchmark "big"; without it model 2 leads.

    Metric 10 (source big, 3 bases × 10 conversations): model 1 passes 9/10, model 2 3/10.
    Metric 20 (expert, 3 bases × 10): model 1 6/10, model 2 7/10.
    Metric 30 (source small): model 1 5/10, model 2 6/10.
    """
    rows = []
    rates = {10: (9, 3), 20: (6, 7), 30: (5, 6)}
    for v, (p1, p2) in rates.items():
        for base in range(3):
            rows.append((1, v, base, 1, 10, p1))
            rows.append((2, v, base, 1, 10, p2))
    meta = {
        10: ("positive", "big", [1]),
        20: ("positive", "expert submissions", [1]),
        30: ("positive", "small", [2]),
    }
    return make_cells(rows, meta)


def test_leave_one_benchmark_out_finds_the_swap(swap_case):
    result = robustness(swap_case, {1: "Model 1", 2: "Model 2"}, {}, n_resamples=500)
    schemes = {s["scheme"]: s for s in result["polarities"]["positive"]["schemes"]}
    assert result["polarities"]["negative"] is None
    default = schemes["default"]
    assert [s["model"] for s in default["scores"]] == ["Model 1", "Model 2"]
    assert default["scores"][0]["score"] == pytest.approx(20 / 30)
    left_out = schemes["leave out big"]
    assert left_out["swaps"] == [["Model 1", "Model 2"]]
    assert left_out["kendall_tau"] == pytest.approx(-1.0)
    scores = {s["model"]: s["score"] for s in left_out["scores"]}
    assert scores["Model 2"] > scores["Model 1"]
    # Listed neutrally, by name, never as a ranking.
    assert [s["model"] for s in left_out["scores"]] == ["Model 1", "Model 2"]
    assert schemes["leave out small"]["swaps"] == []
    # Equal weight per subarea: subarea 1 (metrics 10, 20) and subarea 2 (metric 30) count alike.
    per_subarea = {s["model"]: s["score"] for s in schemes["equal per subarea"]["scores"]}
    assert per_subarea["Model 1"] == pytest.approx((15 / 20 + 5 / 10) / 2)
    per_source = {s["model"]: s["score"] for s in schemes["equal per source benchmark"]["scores"]}
    assert per_source["Model 2"] == pytest.approx((0.3 + 0.7 + 0.6) / 3)
    for s in schemes.values():
        for entry in s["scores"]:
            assert entry["ci"][0] <= entry["score"] <= entry["ci"][1]


def test_model_differences_are_paired_t_intervals_over_shared_base_scenarios(swap_case):
    """One stratum, equal cluster sizes: a pair's interval is the one-sample t interval of the
    per-scenario differences (scipy), and with two models the simultaneous interval is it."""
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(8)
    n = np.full((12, 2), 10.0)
    passed = rng.binomial(10, [0.6, 0.5], size=(12, 2)).astype(float)
    result = statistics.paired_rate_differences(passed, n, np.zeros(12))
    reference = scipy_stats.ttest_1samp(passed[:, 0] / 10 - passed[:, 1] / 10, 0.0)
    ci = reference.confidence_interval(0.95)
    for simultaneous in (False, True):
        low, high = result.t_bounds(simultaneous=simultaneous)
        assert (low[0], high[0]) == pytest.approx((ci.low, ci.high))
        # The published score bounds match it to first order away from 0 % and 100 %.
        low, high = result.bounds(simultaneous=simultaneous)
        assert (low[0], high[0]) == pytest.approx((ci.low, ci.high), abs=0.03)
    # Strata: each metric's scenarios are compared within the metric (a metric where both
    # models pass everything adds no variance), on sum(G_h - 1) degrees of freedom.
    stratum = np.repeat([0, 1, 2, 3], 3)
    d = passed[:, 0] / 10 - passed[:, 1] / 10
    squares = sum(((d[stratum == h] - d[stratum == h].mean()) ** 2).sum() * 3 / 2 for h in range(4))
    result = statistics.paired_rate_differences(passed, n, stratum)
    assert result.df == 8
    assert result.se[0] == pytest.approx(np.sqrt(squares) / 12)
    # The published figures: every pair, simultaneous (wider than one pair on its own, narrower
    # than Bonferroni), in the robustness output per polarity.
    five = rng.binomial(10, [0.7, 0.6, 0.5, 0.5, 0.4], size=(30, 5)).astype(float)
    result = statistics.paired_rate_differences(five, np.full((30, 5), 10.0), np.arange(30) // 3)
    bonferroni = scipy_stats.t.ppf(1 - 0.025 / 10, result.df)
    assert result.pointwise < result.simultaneous < bonferroni
    output = robustness(swap_case, {1: "Model 1", 2: "Model 2"}, {}, n_resamples=200)
    [pair] = output["polarities"]["positive"]["differences"]
    assert (pair["a"], pair["b"]) == ("Model 1", "Model 2")
    assert pair["estimate"]["value"] == pytest.approx(20 / 30 - 16 / 30)
    assert pair["estimate"]["n_clusters"] == 9
    assert pair["estimate"]["method"] == statistics.PAIRED_DIFFERENCE


def test_teen_adult_differences_largest_first():
    rows = []
    for base in range(3):
        rows += [(1, 1, base, 0, 10, 2), (1, 1, base, 1, 10, 8)]  # teen 20 %, adult 80 %
        rows += [(1, 2, base, 0, 10, 5), (1, 2, base, 1, 10, 6)]  # teen 50 %, adult 60 %
    cells = make_cells(rows, {1: ("positive", "x", [1]), 2: ("negative", "x", [1])})
    result = teen_adult_differences(cells, {1: "IB-1", 2: "IB-2"})
    assert [d["metric"] for d in result] == ["IB-1", "IB-2"]
    first = result[0]["difference"]
    assert first["value"] == pytest.approx(-0.6)
    # Every base scenario has the same difference, yet the interval is not a point: a base's
    # difference varies at least by binomial sampling, at the model's rate over both variants.
    assert -1.0 <= first["low"] < -0.6 < first["high"] < 0.0
    assert first["method"] == statistics.AGE_GAP_METHOD
    assert first["n_clusters"] == 3
    assert first["n"] == 60
    assert 0 < result[0]["p_value"] < 1e-3
    second = result[1]["difference"]
    assert second["low"] < 0.0 < second["high"]
    assert result[1]["difference"]["value"] == pytest.approx(-0.1)


def test_teen_adult_count_carries_its_power_and_minimum_detectable_gap():
    """Ten models, three bases, one conversation per cell: the count of metrics with a
    difference goes out with the chance of finding a 15-point gap and the smallest gap found
    four times in five, both from the run's fitted variances."""
    rng = np.random.default_rng(3)
    rows = []
    for v in range(40):
        rate = rng.uniform(0.2, 0.8)
        for base in range(3):
            for target in range(10):
                for age in (0, 1):
                    rows.append((target, v, base, age, 1, int(rng.random() < rate)))
    cells = make_cells(rows, {v: ("positive", "x", [1]) for v in range(40)})
    result = robustness(cells, {t: f"M{t}" for t in range(10)}, {}, n_resamples=200)
    teen_adult = result["teen_adult"]
    power = teen_adult["power"]
    assert power["gap"] == 0.15
    assert power["target"] == 0.8
    assert power["n_metrics"] == 40
    assert power["n_bases"] == 3
    assert 0.05 < power["power"] < 0.8
    assert 0.15 < power["minimum_gap"] <= 1.0
    _, test = teen_adult_test(cells)
    assert test.mean_power(power["minimum_gap"]) == pytest.approx(0.8, abs=1e-4)


def test_teen_adult_direction_is_checked_under_each_weighting():
    """Model 1 is better with teens only through benchmark "big"; leaving it out reverses that.

    Metric 10 (big): teen 9/10, adult 1/10. Metric 20 (expert): teen 4/10, adult 6/10, for
    both models. Model 2 is teen-worse everywhere (teen 2/10, adult 8/10 on metric 10).
    """
    rows = []
    for base in range(3):
        rows += [(1, 10, base, 0, 10, 9), (1, 10, base, 1, 10, 1)]
        rows += [(2, 10, base, 0, 10, 2), (2, 10, base, 1, 10, 8)]
        for target in (1, 2):
            rows += [(target, 20, base, 0, 10, 4), (target, 20, base, 1, 10, 6)]
    meta = {10: ("positive", "big", [1]), 20: ("positive", "expert submissions", [1])}
    result = robustness(make_cells(rows, meta), {1: "M1", 2: "M2"}, {}, n_resamples=200)
    schemes = {s["scheme"]: s for s in result["polarities"]["positive"]["schemes"]}
    default = schemes["default"]
    assert default["age_gaps"]["M1"] == pytest.approx((13 - 7) / 20)
    assert default["age_gaps"]["M2"] == pytest.approx((6 - 14) / 20)
    left_out = schemes["leave out big"]
    assert left_out["age_gaps"]["M1"] == pytest.approx(-0.2)
    assert left_out["age_pattern_flipped"] == ["M1"]
    assert left_out["age_pattern_held"] == 1
    assert schemes["equal per metric"]["age_pattern_flipped"] == []


def test_a_source_with_its_own_weights_is_weighted_by_them():
    """Source "spiral" weights metric 10 three times metric 11 (its scoring weights).

    Model 1: metric 10 9/10, metric 11 1/10, expert metric 20 6/10 (per base, 2 bases).
    Own weights: spiral = (3 × 0.9 + 1 × 0.1) / 4 = 0.7; with the expert source: (0.7 + 0.6) / 2.
    Equal per source pools spiral's conversations instead: (0.5 + 0.6) / 2.
    """
    rows = []
    for v, (p1, p2) in {10: (9, 2), 11: (1, 8), 20: (6, 6)}.items():
        for base in range(2):
            rows.append((1, v, base, 1, 10, p1))
            rows.append((2, v, base, 1, 10, p2))
    meta = {
        10: ("positive", "spiral", [1]),
        11: ("positive", "spiral", [1]),
        20: ("positive", "expert submissions", [2]),
    }
    cells = make_cells(rows, meta)
    unweighted = robustness(cells, {1: "Model 1", 2: "Model 2"}, {}, n_resamples=200)
    names = {s["scheme"] for s in unweighted["polarities"]["positive"]["schemes"]}
    assert "source benchmarks' own weights" not in names

    cells.source_weight.update({10: 3.0, 11: 1.0})
    result = robustness(cells, {1: "Model 1", 2: "Model 2"}, {}, n_resamples=200)
    schemes = {s["scheme"]: s for s in result["polarities"]["positive"]["schemes"]}
    own = {s["model"]: s["score"] for s in schemes["source benchmarks' own weights"]["scores"]}
    assert own["Model 1"] == pytest.approx((0.7 + 0.6) / 2)
    assert own["Model 2"] == pytest.approx(((3 * 0.2 + 1 * 0.8) / 4 + 0.6) / 2)
    pooled = {s["model"]: s["score"] for s in schemes["equal per source benchmark"]["scores"]}
    assert pooled["Model 1"] == pytest.approx((0.5 + 0.6) / 2)


def test_teen_adult_test_rejects_a_true_null_at_its_level():
    """Simulated releases with no teen-adult difference on average but gaps that vary between
    base scenarios (logit SD up to 2), through the service: per metric the test rejects 5 % of
    the time. Tolerance: three Monte Carlo standard errors of the metrics counted (a release's
    metrics share one estimated distribution, so this is a smoke check; the benchmark runs
    many releases). Benjamini-Hochberg makes a discovery in at most 3 of 20 demo releases
    (1.6 % chance of more if the FDR were exactly 5 %)."""
    demo = coverage_design.demo_design()
    null = coverage_design.teen_adult_null(
        demo, replications=20, gap_sd_max=2.0, judge_noise=0.05, seed=7
    )
    tolerance = 3 * np.sqrt(0.05 * 0.95 / null["n metrics"])
    assert abs(null["null rejection"] - 0.05) <= tolerance
    assert null["any discovery"] * 20 <= 3
    full = coverage_design.full_design(np.random.default_rng(809))
    null = coverage_design.teen_adult_null(
        full, replications=2, gap_sd_max=2.0, judge_noise=0.05, seed=7
    )
    assert abs(null["null rejection"] - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / null["n metrics"])


def _subarea_cells(gaps: dict[int, float], metrics_per_subarea: int, seed: int) -> RunCells:
    """Subareas with their own metrics (3 base scenarios, 2 models, 10 conversations a cell);
    a teen variant passes ``0.5 + gap / 2`` of the time, an adult one ``0.5 - gap / 2``."""
    rng = np.random.default_rng(seed)
    rows, meta = [], {}
    version = 0
    for subarea, gap in gaps.items():
        for _ in range(metrics_per_subarea):
            version += 1
            meta[version] = ("positive", "expert submissions", [subarea])
            for base in range(3):
                for age, rate in ((0, 0.5 + gap / 2), (1, 0.5 - gap / 2)):
                    for target in (1, 2):
                        rows.append((target, version, base, age, 10, rng.binomial(10, rate)))
    cells = make_cells(rows, meta)
    cells.subarea_names.update({s: f"Subarea {s}" for s in gaps})
    return cells


@pytest.mark.slow(reason="every robustness figure of 60 metrics, with its bootstraps")
def test_a_gap_shared_by_a_subareas_metrics_is_found_there_not_per_metric():
    cells = _subarea_cells({1: 0.15, 2: 0.0, 3: 0.0}, metrics_per_subarea=20, seed=3)
    result = robustness(cells, {1: "Model 1", 2: "Model 2"}, {}, n_resamples=200)["teen_adult"]
    by_subarea = {row["subarea"]: row for row in result["subareas"]["rows"]}
    assert by_subarea[1]["fdr_discovery"]
    assert by_subarea[1]["name"] == "Subarea 1"
    assert not by_subarea[2]["fdr_discovery"]
    assert not by_subarea[3]["fdr_discovery"]
    assert result["subareas"]["n_fdr_discoveries"] == 1
    gap = by_subarea[1]["difference"]
    assert gap["low"] < 0.15 < gap["high"]
    assert gap["low"] > 0
    assert gap["n_clusters"] == 20 * 3
    assert by_subarea[1]["n_metrics"] == 20
    # Per metric, three base scenarios cannot find most of these gaps.
    assert result["n_fdr_discoveries"] < 20
    assert result["subareas"]["power"]["power"] > result["power"]["power"]


def test_the_subarea_test_pools_a_metric_in_two_subareas_into_both():
    cells = _subarea_cells({1: 0.0, 2: 0.0}, metrics_per_subarea=3, seed=4)
    cells.subareas[1] = [1, 2]
    rows = {
        row["subarea"]: row
        for row in robustness(cells, {1: "A", 2: "B"}, {}, n_resamples=200)["teen_adult"][
            "subareas"
        ]["rows"]
    }
    assert rows[1]["n_metrics"] == 3
    assert rows[2]["n_metrics"] == 4
    assert rows[2]["difference"]["n_clusters"] == 4 * 3
    for row in rows.values():
        e = row["difference"]
        assert -1 <= e["low"] <= e["value"] <= e["high"] <= 1
        assert e["high"] > e["low"]


@pytest.mark.slow(reason="simulates three full releases of 809 metrics")
def test_the_subarea_test_keeps_its_level_when_no_subarea_differs():
    """Simulated full releases with no teen-adult difference (gaps varying between base
    scenarios): the subareas are rejected at about 5 %; three Monte Carlo errors."""
    full = coverage_design.full_design(np.random.default_rng(809))
    null = coverage_design.teen_adult_subarea_power(
        full, replications=3, gap=0.0, share=0.0, gap_sd_max=2.0, judge_noise=0.05, seed=11
    )
    assert abs(null["rejection"] - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / null["n"])
