"""The rubric results' teen-adult section per language: teen items are compared with adult
items of the same language only, on the page, in the API and with ``?lang=``."""

import numpy as np
import pytest
from django.urls import reverse
from django.utils import translation

from evaluations.models import RubricResponse
from results.rubric_teen_adult import rubric_teen_adult
from rubrics.models import RubricItem
from tests.results.public_data import add_rubric_responses, published_run

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="grades a rubric run of sixteen items and renders its results"),
]


@pytest.fixture
def run():
    """Sixteen items: adult ones 0, 4, 8, 12, teen ones 1, 5, 9, 13; items 8-15 in Spanish."""
    run = published_run(version="3.1.0")
    add_rubric_responses(run, n_items=16)
    RubricItem.objects.filter(key__in=[f"pub-{run.pk}-{i}" for i in range(8, 16)]).update(
        language="es"
    )
    return run


def _scores(run, target, language: str, population: str) -> list[float]:
    return [
        r.score
        for r in RubricResponse.objects.filter(
            run=run, target=target, item__language=language, item__population=population
        )
    ]


def test_teen_items_are_compared_with_adult_items_of_their_language(run):
    found = rubric_teen_adult(run)
    target = run.targets.order_by("pk").first()
    mine = {m.language: m for m in found if m.target_id == target.pk}
    assert sorted(mine) == ["en", "es"]
    assert len(found) == 2 * run.targets.count()
    for language, model in mine.items():
        overall = model.rows[0]
        assert (overall.key, overall.n_teen, overall.n_adult) == ("", 2, 2)
        teen, adult = (
            _scores(run, target, language, "teen"),
            _scores(run, target, language, "adult"),
        )
        assert overall.estimate.value == pytest.approx(np.mean(teen) - np.mean(adult))
    (spanish,) = [m for m in rubric_teen_adult(run, "es") if m.target_id == target.pk]
    assert spanish.language == "es"
    assert spanish.rows == mine["es"].rows


def test_the_page_and_the_api_give_one_teen_adult_table_per_model_and_language(
    run, client, api_client
):
    page = reverse("results:rubrics")
    pooled = client.get(page, {"run": run.pk}).content.decode()
    assert 'data-testid="rubric-teen-adult-languages"' in pooled
    assert pooled.count('data-testid="rubric-teen-adult-table"') == 2 * run.targets.count()
    assert ": teen minus adult, items in Spanish" in pooled
    spanish = client.get(page, {"run": run.pk, "lang": "es"}).content.decode()
    assert 'data-testid="rubric-teen-adult"' in spanish
    assert spanish.count('data-language="es"') == run.targets.count()
    assert 'data-language="en"' not in spanish

    url = reverse("results-api:rubric-run", args=[run.pk])
    entries = api_client.get(url).json()["teen_adult"]
    assert sorted({e["language"] for e in entries}) == ["en", "es"]
    assert all(e["rows"][0]["n_teen"] == 2 for e in entries)
    only = api_client.get(url, {"lang": "es"}).json()
    assert {e["language"] for e in only["teen_adult"]} == {"es"}
    assert only["models"][0]["items"] == 8
    bad = api_client.get(url, {"lang": "xx"})
    assert bad.status_code == 400
    assert bad.json()["detail"] == "lang: choose one of all, en, es."

    with translation.override("es"):
        spanish_page = reverse("results:rubrics")
    spanish_reader = client.get(spanish_page, {"run": run.pk}).content.decode()
    assert "Ítems adolescentes frente a ítems adultos" in spanish_reader
    assert ": adolescentes menos adultos, ítems en español" in spanish_reader
