"""Language comparisons in the release's one family of tests under false-discovery-rate
control, with the teen-adult differences: the q-values are Benjamini-Hochberg's over the whole
family, the methodology page says how many comparisons were counted, and a language difference
that does not survive the control is not read as a direction."""

import re

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats as scipy_stats

from results.language_pages import language_gap_panels
from results.models import RunAnalysis
from results.services import results_refresh
from results.services.languages import language_tests, languages_summary
from results.services.teen_adult import FDR, teen_adult_summary
from stats.estimates import Estimate
from tests.results.language_runs import bilingual_run
from tests.results.test_languages import _cells

NOT_CLAIMED = (
    "No difference claimed: the interval excludes zero, but the difference does not survive "
    "the false-discovery-rate control over the release's comparisons."
)


def _family(y: np.ndarray) -> tuple[dict, dict, list[dict]]:
    cells = _cells(y)
    names = {i: f"Model {i}" for i in range(y.shape[-1])}
    keys = {i: f"m{i}" for i in range(y.shape[0])}
    languages = languages_summary(cells, names, keys)
    tests = language_tests(languages)
    teen = teen_adult_summary(cells, keys, n_resamples=200, seed=0, language_tests=tests)
    return languages, teen, tests


def _joint_q(teen: dict, tests: list[dict]) -> tuple[list, np.ndarray]:
    """The teen-adult per-metric tests (all of them, as `largest` holds every metric here)
    and the language tests, with scipy's Benjamini-Hochberg q-values over them together."""
    family = [*teen["largest"], *tests]
    p = np.array([t["p_value"] for t in family if t["p_value"] is not None])
    assert p.max() < 1 + 1e-9
    # A two-sided p-value of a zero difference can come out a rounding error above 1.
    q = scipy_stats.false_discovery_control(np.clip(p, 0.0, 1.0))
    return [t for t in family if t["p_value"] is not None], q


def test_without_a_language_gap_chance_intervals_are_counted_and_not_read_as_directions():
    """Twenty metrics, three models, Spanish and English alike: of the many language
    comparisons some intervals exclude zero by chance; counted in one family with the
    teen-adult tests none survives, and the panels say so instead of a direction."""
    rng = np.random.default_rng(7)
    rate = rng.uniform(0.3, 0.9, (20, 3, 2, 1, 1)) * np.ones((1, 1, 1, 2, 3))
    y = (rng.random(rate.shape) < rate).astype(float)
    languages, teen, tests = _family(y)
    family = teen["fdr_family"]
    # Per compared language: 2 polarities' worth present (1 here), 3 models, 20 metrics and
    # 60 model-metric pairs; and 20 teen-adult metrics.
    assert family["n_language"] == len(tests) == 1 + 3 + 20 + 60
    assert family["n_teen_adult"] == 20
    assert family["n_tests"] == 104
    counted, q = _joint_q(teen, tests)
    assert [t["q_value"] for t in counted] == pytest.approx(q.tolist())
    assert all(t["fdr_discovery"] == (t["q_value"] <= FDR) for t in counted)
    chance = [t for t in tests if Estimate.from_dict(_difference(t, languages)).excludes_zero]
    assert chance, "the seed gives at least one chance interval excluding zero"
    assert not any(t["fdr_discovery"] for t in chance)
    readings = [row.reading for panel in _panels(languages) for row in panel.rows]
    assert NOT_CLAIMED in readings
    assert not any(r.startswith(("Lower in", "Higher in")) for r in readings)


def test_a_true_language_gap_survives_the_control_and_is_read_as_a_direction():
    rng = np.random.default_rng(11)
    rate = rng.uniform(0.45, 0.85, (20, 3, 2, 1, 1))
    p = np.concatenate([rate, rate - 0.25], axis=3) * np.ones((1, 1, 1, 1, 3))
    y = (rng.random(p.shape) < p).astype(float)
    languages, teen, tests = _family(y)
    (overall_test,) = languages["comparisons"][0]["overall_tests"].values()
    assert overall_test["fdr_discovery"] is True
    counted, q = _joint_q(teen, tests)
    assert [t["q_value"] for t in counted] == pytest.approx(q.tolist())
    assert teen["fdr_family"]["n_language_discoveries"] == sum(t["fdr_discovery"] for t in tests)
    (panel,) = language_gap_panels(None, stored=languages)
    assert panel.rows[0].reading == "Lower in Spanish than in English."


def _panels(languages: dict) -> list:
    # With the stored analysis given, the panels read nothing else of the run.
    return language_gap_panels(None, stored=languages) + [
        panel
        for metric in range(len(languages["comparisons"][0]["metrics"]))
        for panel in language_gap_panels(None, metric_version=metric, stored=languages)
    ]


def _difference(test: dict, languages: dict) -> dict:
    if "difference" in test:
        return test["difference"]
    comparison = languages["comparisons"][0]
    (polarity,) = [p for p, t in comparison["overall_tests"].items() if t is test]
    return comparison["overall"][polarity]


@pytest.mark.django_db
@pytest.mark.slow(reason="refreshes a bilingual run and renders the methodology page")
def test_pipeline_analysis_counts_the_language_comparisons_in_the_family(client):
    run = bilingual_run(metrics=3, models=2, spanish_drop=0.35, seed=3)
    results_refresh(run=run, n_resamples=50)
    robustness = RunAnalysis.objects.get(run=run).robustness
    teen, languages = robustness["teen_adult"], robustness["languages"]
    tests = language_tests(languages)
    family = teen["fdr_family"]
    # One comparison (Spanish against English): one polarity, 2 models, 3 metrics, 6 pairs.
    assert family["n_language"] == len(tests) == 1 + 2 + 3 + 6
    assert family["n_tests"] == family["n_teen_adult"] + family["n_language"]
    assert family["n_teen_adult"] == 3
    counted, q = _joint_q(teen, tests)
    assert len(counted) == family["n_tests"]
    assert [t["q_value"] for t in counted] == pytest.approx(q.tolist())

    html = client.get(f"{reverse('results:methodology')}?run={run.pk}").content.decode()
    (sentence,) = re.findall(r'data-testid="fdr-family">([^<]+)<', html)
    assert f"{family['n_tests']} comparisons in all" in sentence
    assert f"{family['n_language']} differences between languages" in sentence
    # A direction is read exactly where the difference survived.
    survived = {t["fdr_discovery"] for t in languages["comparisons"][0]["overall_tests"].values()}
    readings = re.findall(r'data-testid="language-gap-reading">([^<]+)<', html)
    directions = [r for r in readings if r.startswith(("Lower in", "Higher in"))]
    if survived == {True}:
        assert directions
    assert len(directions) == sum(
        t["fdr_discovery"] for t in [*languages["comparisons"][0]["overall_tests"].values()]
    ) + sum(m["fdr_discovery"] for m in languages["comparisons"][0]["models"])
