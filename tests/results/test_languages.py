"""Results per language: cells carry their scenario's language, teen and adult pair within a
language, each language's pass rates are written beside the pooled ones, and the paired
language comparison against scipy and in a simulation of the platform's design."""

import re

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats as scipy_stats

from evaluations.services.rubric_scores import run_rubric_scores
from results.models import PassRateSummary, SummaryLevel
from results.selectors import summary_languages
from results.services import results_refresh, summaries_refresh
from results.services.cells import RunCells, run_cells
from results.services.languages import (
    cell_languages,
    cells_in_language,
    language_comparison,
    pooled_languages_note,
)
from results.services.teen_adult import teen_adult_test
from rubrics.models import RubricItem
from tests.llm.factories import OfflineConfigurationFactory
from tests.results.factories import completed_run, metric_version
from tests.results.language_runs import bilingual_run, language_scenario
from tests.results.public_data import add_rubric_responses, published_run


@pytest.mark.django_db
def test_cells_carry_the_language_and_teen_pairs_with_adult_within_it():
    """Base 0 has an English teen and a Spanish adult variant only: pooled over languages
    they would make a pair; within a language neither has a counterpart."""
    x = OfflineConfigurationFactory(name="X")
    version = metric_version()
    plan = [
        (0, "teen", "en", True),
        (0, "adult", "es", False),
        (1, "teen", "en", True),
        (1, "adult", "en", False),
        (1, "teen", "es", False),
        (1, "adult", "es", False),
        (2, "teen", "en", True),
        (2, "adult", "en", True),
    ]
    outcomes = [
        (language_scenario(version, base, age, lang), x, passed) for base, age, lang, passed in plan
    ]
    run = completed_run(targets=[x], versions=[version], outcomes=outcomes)
    cells = run_cells(run)
    assert cells.languages == ("en", "es")
    assert cell_languages(cells) == ["en", "es"]
    assert cells.size == len(plan)
    _, test = teen_adult_test(cells)
    # Pairs: base 1 in English (1 - 0), base 1 in Spanish (0 - 0), base 2 in English (1 - 1).
    assert int(test.n_bases[0]) == 3
    assert test.difference[0] == pytest.approx(1 / 3)
    assert int(test.n[0]) == 6
    spanish = cells_in_language(cells, "es")
    assert spanish.size == 3
    assert spanish.languages == ("es",)
    assert spanish.passed.sum() == 0


@pytest.mark.django_db
@pytest.mark.slow(reason="writes a bilingual run of 192 conversations and refreshes its summaries")
def test_each_language_gets_its_own_pass_rates_beside_the_pooled_ones():
    run = bilingual_run(metrics=2, models=2, spanish_drop=0.3)
    summaries_refresh(run=run, n_resamples=20)
    assert summary_languages(run=run) == ["en", "es"]
    overall = {
        (row.target_id, row.language): row
        for row in PassRateSummary.objects.filter(
            run=run, level=SummaryLevel.OVERALL, age_context="all"
        )
    }
    for target in run.targets.all():
        pooled, en, es = (overall[(target.pk, lang)] for lang in ("", "en", "es"))
        judged = run.conversations.filter(target=target)
        for row, lang in ((en, "en"), (es, "es")):
            mine = judged.filter(scenario__language=lang)
            assert row.n_conversations == mine.count() == 24
            assert row.n_passed == mine.filter(verdict_passed=True).count()
            assert row.ci_low < row.rate < row.ci_high
        assert pooled.n_conversations == en.n_conversations + es.n_conversations
        assert pooled.n_passed == en.n_passed + es.n_passed
    # Every metric and age has its rows in each language too.
    per_language = PassRateSummary.objects.filter(run=run, language="es")
    assert set(per_language.values_list("level", flat=True)) == {
        "overall",
        "area",
        "subarea",
        "metric",
    }
    assert set(per_language.values_list("age_context", flat=True)) == {"all", "teen", "adult"}


@pytest.mark.django_db
def test_a_single_language_run_writes_no_per_language_rows():
    x = OfflineConfigurationFactory(name="X")
    version = metric_version()
    outcomes = [
        (language_scenario(version, b, age, "es"), x, b % 2 == 0)
        for b in range(3)
        for age in ("teen", "adult")
    ]
    run = completed_run(targets=[x], versions=[version], outcomes=outcomes)
    summaries_refresh(run=run, n_resamples=20)
    assert summary_languages(run=run) == []
    assert not PassRateSummary.objects.filter(run=run).exclude(language="").exists()


def test_the_pooled_note_names_the_languages():
    assert pooled_languages_note(["es", "en"]) == "pooled across English and Spanish conversations"
    assert pooled_languages_note(["en"]) == ""


def _cells(y: np.ndarray, polarity: str = "positive") -> RunCells:
    """``y[metric, base, age, language, model]`` outcomes (one conversation each) as cells;
    NaN: not judged."""
    m, b, a, lang, t = np.meshgrid(*(np.arange(k) for k in y.shape), indexing="ij")
    keep = np.isfinite(y).ravel()
    return RunCells(
        target=t.ravel()[keep],
        version=m.ravel()[keep],
        base=b.ravel()[keep],
        age=a.ravel()[keep],
        n=np.ones(int(keep.sum())),
        passed=np.nan_to_num(y).ravel()[keep],
        polarity=dict.fromkeys(range(y.shape[0]), polarity),
        languages=("en", "es"),
        language=lang.ravel()[keep],
    )


def test_the_comparison_is_the_paired_difference_and_says_what_it_left_out():
    """One model, one metric: the estimate is the mean of the situations' Spanish-minus-
    English differences (the mean scipy's paired t on the same pairs tests), and a situation
    with no Spanish counterpart is left out and counted."""
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, (1, 3, 2, 2, 1)).astype(float)
    y[0, 2, 1, 1, 0] = np.nan  # base 2, adult: judged in English only
    found = language_comparison(_cells(y), {0: "X"}, {0: "m"}, language="es", reference="en")
    metric = found["metrics"][0]["difference"]
    pairs = [(b, a) for b in range(3) for a in range(2) if (b, a) != (2, 1)]
    spanish = np.array([y[0, b, a, 1, 0] for b, a in pairs])
    english = np.array([y[0, b, a, 0, 0] for b, a in pairs])
    assert metric["value"] == pytest.approx(float((spanish - english).mean()))
    # The same pairs in the same layout, tested plainly, are scipy's paired t.
    reference = scipy_stats.ttest_rel(spanish, english)
    d = spanish - english
    assert metric["value"] == pytest.approx(
        float(reference.statistic * d.std(ddof=1) / np.sqrt(d.size))
    )
    assert metric["n_clusters"] == 5
    assert metric["n"] == 10
    assert {"reason": "situations judged only in en", "count": 1} in metric["excluded"]
    model = found["metrics"][0]["models"][0]["difference"]
    assert model["value"] == pytest.approx(metric["value"])


def test_a_known_spanish_drop_is_found_and_the_interval_agrees_with_a_bootstrap():
    """Sixty metrics, three models, a true Spanish-minus-English difference of -0.2 on
    every situation: the overall interval holds it and excludes zero, and is about as wide
    as scipy's bootstrap of the situations' paired differences."""
    rng = np.random.default_rng(11)
    metrics, models = 60, 3
    rate = rng.uniform(0.45, 0.85, (metrics, 3, 2, 1, 1))
    p = np.concatenate([rate, rate - 0.2], axis=3) * np.ones((1, 1, 1, 1, models))
    y = (rng.random(p.shape) < p).astype(float)
    found = language_comparison(
        _cells(y), dict(enumerate("ABC")), {}, language="es", reference="en"
    )
    overall = found["overall"]["positive"]
    assert overall["low"] < -0.2 < overall["high"]
    assert overall["high"] < 0
    d = (y[:, :, :, 1, :] - y[:, :, :, 0, :]).mean(axis=3).ravel()
    boot = scipy_stats.bootstrap((d,), np.mean, n_resamples=2000, random_state=1)
    assert overall["value"] == pytest.approx(float(d.mean()))
    width = overall["high"] - overall["low"]
    reference_width = boot.confidence_interval.high - boot.confidence_interval.low
    assert 0.7 < width / reference_width < 1.5
    models_found = [m for m in found["models"] if m["polarity"] == "positive"]
    assert len(models_found) == 3
    assert all(m["difference"]["high"] < 0.05 for m in models_found)


@pytest.mark.slow(reason="120 simulated releases of 40 metrics through the published test")
def test_metric_intervals_cover_the_true_language_gap_at_the_platforms_design():
    """The platform's design: 3 base scenarios x teen and adult per metric, each situation in
    English and Spanish, 3 models, one conversation per cell. A metric's true gap (0 or
    +-0.1, averaged over the population of situations) varies between situations; the 95 %
    intervals must hold it about 95 % of the time."""
    rng = np.random.default_rng(2026)
    hits, nulls = [], []
    for _ in range(120):
        metrics, models = 40, 3
        gap = rng.choice([0.0, 0.1, -0.1], metrics)
        base = rng.uniform(0.3, 0.7, (metrics, 1, 1, 1, 1))
        situation = rng.uniform(-0.1, 0.1, (metrics, 3, 2, 1, 1))
        spread = rng.uniform(-0.05, 0.05, (metrics, 3, 2, 1, 1))
        model = rng.uniform(-0.05, 0.05, (1, 1, 1, 1, models))
        english = base + situation + model
        spanish = english + gap[:, None, None, None, None] + spread
        p = np.concatenate([english, spanish], axis=3)
        y = (rng.random(p.shape) < p).astype(float)
        found = language_comparison(_cells(y), {}, {}, language="es", reference="en")
        for row, truth in zip(found["metrics"], gap.tolist(), strict=True):
            d = row["difference"]
            hits.append(d["low"] <= truth <= d["high"])
            if truth == 0:
                nulls.append(row["p_value"] < 0.05)
    coverage = float(np.mean(hits))
    assert 0.92 <= coverage <= 0.985, coverage
    assert float(np.mean(nulls)) <= 0.075


@pytest.fixture
def refreshed_bilingual_run():
    run = bilingual_run(metrics=2, models=2, spanish_drop=0.35, seed=3)
    results_refresh(run=run, n_resamples=50)
    return run


def _explore(client, run, query: str = "") -> str:
    return client.get(f"{reverse('results:explore')}?run={run.pk}{query}").content.decode()


@pytest.mark.django_db
@pytest.mark.slow(reason="refreshes a bilingual run and renders Explore in three languages")
def test_explore_switches_language_and_says_all_pools_them(
    client, refreshed_bilingual_run, django_assert_max_num_queries
):
    run = refreshed_bilingual_run
    with django_assert_max_num_queries(24):
        pooled = _explore(client, run)
    assert 'data-testid="language-switch"' in pooled
    assert "pooled across English and Spanish conversations" in pooled
    spanish = _explore(client, run, "&lang=es")
    assert "pooled across" not in spanish
    assert 'data-testid="language-shown"' in spanish
    # The links keep the language and the other choices.
    assert "lang=es" in spanish
    assert "polarity=positive" in spanish
    target = run.targets.order_by("pk").first()
    figures = {
        lang: PassRateSummary.objects.get(
            run=run,
            level="overall",
            age_context="all",
            target=target,
            polarity="positive",
            language=lang,
        )
        for lang in ("", "es")
    }
    assert figures[""].rate != figures["es"].rate
    # An unknown language falls back to every language, with no error.
    unknown = client.get(f"{reverse('results:explore')}?run={run.pk}&lang=xx")
    assert unknown.status_code == 200
    assert "pooled across English and Spanish conversations" in unknown.content.decode()
    # The paired comparison, with its interval, the situations paired and what it says.
    assert 'data-testid="language-gap"' in pooled
    assert "Spanish versus English on the same situations" in pooled
    readings = re.findall(r'data-testid="language-gap-reading">([^<]+)<', pooled)
    assert readings
    assert set(readings) <= {
        "Lower in Spanish than in English.",
        "Higher in Spanish than in English.",
        "No difference shown: the interval includes zero.",
        "Not enough paired situations to compare.",
    }


@pytest.mark.django_db
@pytest.mark.slow(reason="refreshes a bilingual run and reads the API and the metric page")
def test_metric_page_and_api_give_each_language_and_the_comparison(
    client, api_client, refreshed_bilingual_run
):
    run = refreshed_bilingual_run
    version = run.release.items.order_by("pk").first().metric_version
    key = version.metric.key
    page = client.get(f"{reverse('results:metric', args=[key])}?run={run.pk}&lang=es")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-testid="language-switch"' in html
    assert 'data-testid="language-gap"' in html

    url = reverse("results-api:metric-results", args=[key])
    pooled = api_client.get(url, {"run": run.pk}).json()
    spanish = api_client.get(url, {"run": run.pk, "lang": "es"}).json()
    assert pooled["language"] == {
        "language": "all",
        "languages": ["en", "es"],
        "pooled_languages": "pooled across English and Spanish conversations",
    }
    assert spanish["language"]["language"] == "es"
    assert spanish["language"]["pooled_languages"] == ""
    es_n = spanish["results"][0]["all"]["n"]
    assert 0 < es_n < pooled["results"][0]["all"]["n"]
    assert spanish["results"][0]["all"]["low"] is not None
    (comparison,) = pooled["language_comparisons"]
    assert (comparison["language"], comparison["reference"]) == ("es", "en")
    difference = comparison["difference"]
    # Built from the pipeline's own rows: a real interval around a value, 12 pairs per model.
    assert difference["low"] < difference["value"] < difference["high"]
    assert difference["n_clusters"] == 6
    assert len(comparison["models"]) == 2

    bad = api_client.get(url, {"run": run.pk, "lang": "xx"})
    assert bad.status_code == 400
    assert "lang" in bad.json()["detail"]

    explore = api_client.get(reverse("results-api:explore"), {"run": run.pk, "lang": "en"})
    body = explore.json()
    assert body["language"]["language"] == "en"
    overall = body["language_comparisons"][0]["overall"]["positive"]
    assert overall["low"] < overall["value"] < overall["high"]
    rows = api_client.get(
        reverse("results-api:run-results", args=[run.pk]), {"lang": "es", "level": "overall"}
    ).json()
    assert rows["results"]
    assert {r["language"] for r in rows["results"]} == {"es"}


@pytest.mark.django_db
@pytest.mark.slow(reason="refreshes a bilingual run and renders the label pages and the home page")
def test_label_and_home_give_each_language_and_say_the_pooled_ones_pool(
    client, refreshed_bilingual_run
):
    run = refreshed_bilingual_run
    target = run.targets.order_by("pk").first()
    label = reverse("results:label", args=[target.pk])
    pooled = client.get(f"{label}?run={run.pk}").content.decode()
    spanish = client.get(f"{label}?run={run.pk}&lang=es").content.decode()
    assert "pooled across English and Spanish conversations" in pooled
    assert 'data-testid="language-switch"' in spanish
    assert "lang=es" in spanish
    # One label category: the Spanish label counts the Spanish conversations alone, 24 of
    # the model's 48.
    assert set(re.findall(r"n = (\d+)", spanish)) == {"24"}
    assert set(re.findall(r"n = (\d+)", pooled)) == {"48"}
    # Its SVG is drawn for Spanish and says so; the stored files stay over every language.
    svg = client.get(f"{reverse('results:label-svg', args=[target.pk])}?run={run.pk}&lang=es")
    assert "conversations in Spanish only" in svg.content.decode()
    overview = client.get(f"{reverse('results:label-overview')}?run={run.pk}&lang=xx")
    assert overview.status_code == 200
    assert "pooled across English and Spanish conversations" in overview.content.decode()

    home = client.get("/").content.decode()
    assert 'data-testid="home-languages-pooled"' in home
    assert "In English:" in home
    assert "In Spanish:" in home


@pytest.mark.django_db
@pytest.mark.slow(reason="grades a rubric run and renders its results in two languages")
def test_rubric_results_switch_language_and_say_the_pooled_ones_pool(client):
    run = published_run(version="3.0.0")
    add_rubric_responses(run, n_items=6)
    spanish_items = list(
        RubricItem.objects.filter(responses__run=run).distinct().order_by("key")[:3]
    )
    RubricItem.objects.filter(pk__in=[i.pk for i in spanish_items]).update(language="es")
    page = reverse("results:rubrics")
    pooled = client.get(f"{page}?run={run.pk}").content.decode()
    assert "pooled across English and Spanish items" in pooled
    assert "n = 6" in pooled
    spanish = client.get(f"{page}?run={run.pk}&lang=es").content.decode()
    assert "n = 3" in spanish
    assert "n = 6" not in spanish
    target = run.targets.order_by("pk").first()
    (scores,) = [s for s in run_rubric_scores(run=run, language="es") if s.target_id == target.pk]
    assert scores.items == 3


@pytest.mark.django_db
@pytest.mark.slow(reason="refreshes a bilingual run and renders the methodology page")
def test_methodology_page_shows_the_language_comparison(client, refreshed_bilingual_run):
    run = refreshed_bilingual_run
    html = client.get(f"{reverse('results:methodology')}?run={run.pk}").content.decode()
    assert "Spanish versus English on the same situations" in html
    assert 'data-testid="language-gap-reading"' in html
