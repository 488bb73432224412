"""The users-and-clinicians page per language: a ``?lang=`` switch, every figure over that
language's items alone with its interval and n, the page without one saying what it pools."""

import pytest
from django.urls import reverse

from results.rubric_priorities import rubric_priorities
from rubrics.models import ReleaseRubricFreeze, RubricCriterion, RubricItem
from tests.results.public_data import add_rubric_responses, published_run

pytestmark = pytest.mark.django_db


def test_the_priorities_page_switches_language_and_says_the_pooled_one_pools(client):
    run = published_run(version="3.0.0")
    add_rubric_responses(run, n_items=6)
    spanish = RubricItem.objects.filter(responses__run=run).distinct().order_by("key")[:2]
    RubricItem.objects.filter(pk__in=[i.pk for i in spanish]).update(language="es")
    # The release's frozen rubric: the criteria counted in the run.
    freeze, _created = ReleaseRubricFreeze.objects.get_or_create(release=run.release)
    freeze.criteria.set(RubricCriterion.objects.filter(item__responses__run=run).counting())
    page = reverse("results:rubric-priorities")

    pooled = client.get(page, {"run": run.pk}).content.decode()
    assert 'data-testid="language-switch"' in pooled
    assert "pooled across English and Spanish items" in pooled
    assert "n = 6" in pooled

    es = rubric_priorities(run, "es")
    everything = rubric_priorities(run)
    weight = {r["dimension"]: r["clinician_weight"] for r in es["rows"]}
    # Two Spanish items, each weighting safety escalation |6| + |−8|: the frozen rubric's
    # Spanish criteria only, not all six items' 84.
    assert weight["safety_escalation"] == 28
    assert {r["dimension"]: r["clinician_weight"] for r in everything["rows"]}[
        "safety_escalation"
    ] == 84
    assert {row["benchmark"].n for row in es["reweighted"]} == {2}

    html = client.get(page, {"run": run.pk, "lang": "es"}).content.decode()
    assert 'data-testid="language-shown"' in html
    assert "pooled across" not in html
    assert "n = 2" in html
    assert "n = 6" not in html
    assert "n = 4" in client.get(page, {"run": run.pk, "lang": "en"}).content.decode()


def test_the_priorities_api_takes_a_language_and_refuses_an_unknown_one(client):
    run = published_run(version="3.0.0")
    add_rubric_responses(run, n_items=6)
    spanish = RubricItem.objects.filter(responses__run=run).distinct().order_by("key")[:2]
    RubricItem.objects.filter(pk__in=[i.pk for i in spanish]).update(language="es")
    url = reverse("results-api:rubric-priorities", args=[run.pk])

    pooled = client.get(url).json()
    assert pooled["language"] == {
        "language": "all",
        "languages": ["en", "es"],
        "pooled_languages": "pooled across English and Spanish items",
    }
    assert {row["benchmark"]["n"] for row in pooled["reweighted"]} == {6}
    es = client.get(url, {"lang": "es"}).json()
    assert es["language"]["language"] == "es"
    assert es["language"]["pooled_languages"] == ""
    assert {row["benchmark"]["n"] for row in es["reweighted"]} == {2}
    refused = client.get(url, {"lang": "fr"})
    assert refused.status_code == 400
    assert "lang: choose one of all, en, es" in refused.content.decode()


def test_the_priorities_page_reads_in_spanish(client):
    run = published_run(version="3.0.0")
    add_rubric_responses(run, n_items=4)
    page = reverse("results:rubric-priorities")
    html = client.get(page, {"run": run.pk}, HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Usuarios y profesionales clínicos: qué premia cada uno" in html
    assert "Resultados de rúbrica de la edición" in html
    assert "Reponderada según las prioridades de los usuarios" in html
    assert "0 usuarios dijeron qué les importa en una respuesta." in html
    for english in ("what each rewards", "Re-weighted by", "Model scores under", "Rank<"):
        assert english not in html
