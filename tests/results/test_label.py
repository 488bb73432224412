"""The Nutrition Label: grade bands, the estimate behind each grade, strengths from data."""

import numpy as np
import pytest
from django.urls import reverse

import stats as statistics
from evaluations.models import Conversation
from results.grades import grade_for, grade_table
from results.label import label_profile
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("rate", "grade"),
    [
        (1.0, "A+"),
        (0.95, "A+"),
        (0.9499, "A"),
        (0.90, "A"),
        (0.85, "A−"),
        (0.80, "B+"),
        (0.75, "B"),
        (0.70, "B−"),
        (0.65, "C+"),
        (0.60, "C"),
        (0.55, "C−"),
        (0.50, "D+"),
        (0.45, "D"),
        (0.40, "D−"),
        (0.3999, "F"),
        (0.0, "F"),
        (None, "—"),
    ],
)
def test_grade_bands(rate, grade):
    assert grade_for(rate) == grade


def test_grade_table_states_every_band():
    table = dict(grade_table())
    assert table["A+"] == "95–100 %"
    assert table["A"] == "90–<95 %"
    assert table["F"] == "below 40 %"
    assert len(table) == 13


def test_each_grade_rests_on_the_run_conversations_with_the_summaries_interval():
    from collections import Counter

    from tests.results.test_refresh_equivalence import reference_pooled_interval

    run = published_run(n_metrics=4)
    target = run.targets.order_by("name").first()
    profile = label_profile(run=run, target=target)
    assert profile.lines
    # The correlation within base scenarios, from all of the model's metrics.
    every = Conversation.objects.filter(run=run, target=target, verdict_passed__isnull=False)
    per_base: Counter = Counter()
    sizes: Counter = Counter()
    for p, v, b in every.values_list(
        "verdict_passed", "scenario__metric_version_id", "scenario__base_index"
    ):
        per_base[(v, b)] += int(p)
        sizes[(v, b)] += 1
    keys = sorted(sizes)
    rho = statistics.intra_cluster_correlation(
        [v for v, _ in keys], [per_base[k] for k in keys], [sizes[k] for k in keys]
    )
    for line in profile.lines:
        conversations = Conversation.objects.filter(
            run=run,
            target=target,
            scenario__metric_version__label_category=line.category,
            verdict_passed__isnull=False,
        ).values_list("verdict_passed", "scenario__metric_version_id", "scenario__base_index")
        passed = np.array([float(p) for p, _, _ in conversations])
        clusters: dict = {}
        for p, v, b in conversations:
            cluster = clusters.setdefault((v, b), [0, 0])
            cluster[0] += int(p)
            cluster[1] += 1
        e = line.estimate
        assert e.n == len(passed)
        assert e.value == pytest.approx(passed.mean())
        assert e.method == statistics.STRATIFIED_WILSON
        assert e.n_clusters == len(clusters)
        low, high = reference_pooled_interval(clusters, rho)
        assert (e.low, e.high) == pytest.approx((low, high))
        assert e.low < e.high
        assert line.grade == grade_for(e.value)
        # Six conversations per metric are few: flagged as thin evidence.
        assert line.thin
    assert profile.teen + profile.adult == profile.n_conversations
    assert profile.teen == profile.adult


def test_strengths_and_weaknesses_come_from_solid_figures(monkeypatch):
    from results import label
    from results.services import results_refresh
    from tests.llm.factories import OfflineConfigurationFactory
    from tests.results.factories import completed_run, metric_version, scenario

    target = OfflineConfigurationFactory(name="Offline split")
    good, bad = metric_version(polarity="positive"), metric_version(polarity="negative")
    outcomes = [
        (scenario(v, base, age), target, v is good)
        for v in (good, bad)
        for base in range(3)
        for age in ("teen", "adult")
    ]
    run = completed_run(targets=[target], versions=[good, bad], outcomes=outcomes)
    results_refresh(run=run, n_resamples=50)
    run.refresh_from_db()
    # Six conversations count as enough here, however wide their intervals.
    monkeypatch.setattr(label, "THIN_N", 1)
    monkeypatch.setattr(label, "THIN_WIDTH", 1.0)
    profile = label._label_profile(run, target)
    assert len(profile.strengths) == 1
    assert profile.strengths[0].startswith(f"{good.label_category.name}: promoted")
    assert "100 % of 6 conversations (grade A+)" in profile.strengths[0]
    assert len(profile.weaknesses) == 1
    assert profile.weaknesses[0].startswith(f"{bad.label_category.name}: avoided")
    assert "(grade F)" in profile.weaknesses[0]
    # With the usual bar, six conversations are thin and no sentence is claimed.
    monkeypatch.setattr(label, "THIN_N", 30)
    thin = label._label_profile(run, target)
    assert thin.strengths == []
    assert thin.weaknesses == []


def test_label_page_states_bands_populations_and_shares(client):
    run = published_run()
    target = run.targets.order_by("name").first()
    html = client.get(reverse("results:label", args=[target.pk])).content.decode()
    assert 'data-testid="grade-bands"' in html
    assert "A+</strong> 95–100 %" in html
    assert "with teen personas (13–17)" in html
    assert 'data-testid="thin-evidence"' in html
    assert 'data-testid="download-svg"' in html
    assert reverse("results:label-badge", args=[target.pk]) in html
    assert "best model" not in html.replace("no “best model”", "")  # the footer's disclaimer


def test_label_svg_is_a_downloadable_image_with_every_grade(client):
    run = published_run()
    target = run.targets.order_by("name").first()
    response = client.get(reverse("results:label-svg", args=[target.pk]), {"download": "1"})
    assert response["Content-Type"].startswith("image/svg+xml")
    assert "attachment" in response["Content-Disposition"]
    svg = response.content.decode()
    profile = label_profile(run=run, target=target)
    for line in profile.lines:
        assert f">{line.grade}</text>" in svg
        assert f"n = {line.estimate.n}" in svg
    assert "offline demo model" in svg


def test_the_badge_reads_in_the_readers_language(client):
    from django.utils import translation

    run = published_run()
    target = run.targets.order_by("name").first()
    grades = len(label_profile(run=run, target=target).lines)
    english = client.get(reverse("results:label-badge", args=[target.pk])).content.decode()
    assert f"Nutrition Label · {grades} grades" in english
    assert 'width="250"' in english  # the English badge keeps its size
    with translation.override("es"):
        url = reverse("results:label-badge", args=[target.pk])
    spanish = client.get(url).content.decode()
    assert f"Etiqueta nutricional · {grades} calificaciones" in spanish
    assert "Etiqueta nutricional de ImpactBench de" in spanish  # its accessible name
    assert "Nutrition Label" not in spanish
    width = int(spanish.split('width="', 1)[1].split('"', 1)[0])
    assert width > 250  # longer words, a wider badge
