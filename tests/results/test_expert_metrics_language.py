"""The public per-metric expert page per language: a ``?lang=`` switch, each language's table
with its intervals and n, and the pooled table saying which languages it pools."""

import pytest
from django.core.cache import caches
from django.urls import reverse

from evaluations.models import Scenario
from results.models import ReleaseExpertFigures
from review.models import RatingQueue
from tests.results.test_expert_figures import _draft_release_run, _public, _rate

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def _page(client, release, **params):
    caches["pages"].clear()
    url = reverse("results:release-expert-metrics", args=[release.version])
    return client.get(url, params).content.decode()


def _table(html):
    return html[html.index('data-testid="expert-figures-per-metric-table"') :]


@pytest.mark.slow(reason="rates a release's conversations in two languages and publishes it")
def test_the_per_metric_page_has_a_table_per_language(client, maintainer):
    run, release = _draft_release_run()
    # The second metric's situations are in Spanish: its conversations are Spanish ones.
    spanish = release.items.order_by("pk").values("metric_version_id")[1:]
    Scenario.objects.filter(metric_version_id__in=spanish).update(language="es")
    _rate(run, release)
    RatingQueue.objects.update(status="closed")
    _public(client, run, maintainer)
    figures = ReleaseExpertFigures.objects.get(release=release).figures
    cells = {cell["language"]: cell for cell in figures["per_language"]}
    assert sorted(cells) == ["en", "es"]
    pooled_keys = {row["key"] for row in figures["panel"]["per_metric"]}
    by_language = {lang: [r["key"] for r in cells[lang]["panel"]["per_metric"]] for lang in cells}
    assert len(pooled_keys) == 2
    # Each language's table holds only the metrics rated in it: one each here.
    assert sorted(by_language["en"] + by_language["es"]) == sorted(pooled_keys)
    assert by_language["en"] != by_language["es"]

    pooled = _page(client, release)
    assert 'data-testid="language-switch"' in pooled
    assert "pooled across English and Spanish items" in pooled
    assert all(f"<code>{key}</code>" in _table(pooled) for key in pooled_keys)

    for lang, (key,) in by_language.items():
        html = _page(client, release, lang=lang)
        assert 'data-testid="languages-pooled"' not in html
        assert 'data-testid="language-shown"' in html
        table = _table(html)
        assert f"<code>{key}</code>" in table
        assert not [other for other in pooled_keys - {key} if f"<code>{other}</code>" in table]
        n = cells[lang]["panel"]["per_metric"][0]["n_conversations"]
        assert n > 0
        assert f"<td><code>{key}</code></td><td>{n}</td>" in table

    # An unknown language shows the pooled table, as an unknown ?age= does.
    assert "pooled across English and Spanish items" in _page(client, release, lang="xx")


@pytest.mark.slow(reason="rates a release's conversations in two languages and publishes it")
def test_a_release_frozen_without_per_language_tables_says_so(client, maintainer):
    run, release = _draft_release_run()
    spanish = release.items.order_by("pk").values("metric_version_id")[1:]
    Scenario.objects.filter(metric_version_id__in=spanish).update(language="es")
    _rate(run, release)
    RatingQueue.objects.update(status="closed")
    _public(client, run, maintainer)
    frozen = ReleaseExpertFigures.objects.get(release=release)
    for cell in frozen.figures["per_language"]:
        del cell["panel"]["per_metric"]  # as frozen before the tables were kept per language
    frozen.save()
    html = _page(client, release, lang="es")
    assert 'data-testid="expert-metrics-not-per-language"' in html
    assert 'data-testid="expert-figures-per-metric-table"' not in html
