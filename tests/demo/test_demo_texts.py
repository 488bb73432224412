"""The demo catalogue reads in Spanish: every demo metric but one has a Spanish text, most
machine-translated and reviewed by the demo reviewer, one written natively; the one without
shows its English original with the fallback note on the Spanish pages."""

import pytest
from django.urls import reverse
from django.utils import translation

from core.demo import demo_accounts_seed
from core.languages import TranslationProvenance
from metrics_registry import demo as registry_demo
from metrics_registry.demo_catalog import DEMO_METRICS
from metrics_registry.demo_texts import DEMO_TEXTS, demo_texts_seed
from metrics_registry.models import Metric, MetricVersionText

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="seeds the demo catalogue's 64 metrics"),
]


def test_every_demo_metric_but_the_last_has_a_spanish_text():
    items = [row["item"] for row in DEMO_TEXTS]
    assert items == list(range(1, len(DEMO_METRICS)))
    assert [row["item"] for row in DEMO_TEXTS if row.get("provenance") == "native"] == [8]


def test_the_demo_seeds_reviewed_and_native_spanish_texts_and_keeps_them(client):
    demo_accounts_seed()
    registry_demo.demo_registry_seed()
    report = demo_texts_seed(benchmark_slug=registry_demo.DEMO_BENCHMARK_SLUG)
    assert report == (
        f"Demo Spanish metric texts: {len(DEMO_TEXTS)} written, "
        f"{len(DEMO_TEXTS) - 1} machine translations reviewed."
    )
    texts = MetricVersionText.objects.select_related("written_by", "reviewed_by")
    reviewed = texts.filter(provenance=TranslationProvenance.MACHINE_REVIEWED)
    assert reviewed.count() == len(DEMO_TEXTS) - 1
    assert {t.reviewed_by.email for t in reviewed} == {"reviewer@demo.impactbench.org"}
    assert {t.written_by.email for t in reviewed} == {"researcher@demo.impactbench.org"}
    native = texts.get(provenance=TranslationProvenance.NATIVE)
    assert native.written_by.email == "reviewer@demo.impactbench.org"
    assert "written, 0 machine" in demo_texts_seed(benchmark_slug=registry_demo.DEMO_BENCHMARK_SLUG)
    assert MetricVersionText.objects.count() == len(DEMO_TEXTS)

    untranslated = Metric.objects.get(source_reference=f"demo item {len(DEMO_METRICS)}")
    with translation.override("es"):
        spanish = client.get(reverse("metrics_registry:metric_list") + "?page=3")
    html = spanish.content.decode()
    assert untranslated.current_version.name in html
    assert "Se muestra en inglés: aún no hay versión en español." in html
    with translation.override("es"):
        first = client.get(reverse("metrics_registry:metric_list")).content.decode()
    assert DEMO_TEXTS[0]["name"] in first
