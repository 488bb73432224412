"""The public rubric pages read in Spanish: a Spanish reader (an /es/ address) of the results,
the items behind a figure and one graded reply gets Spanish headings, reasons and table words,
numbers with decimal commas, and none of the English sentences."""

import re

import pytest
from django.urls import reverse
from django.utils import translation

from evaluations.models import RubricResponse
from rubrics.dimensions import dimension_choices
from tests.results.public_data import add_rubric_responses, published_run

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="builds a published run with graded rubric replies"),
]


@pytest.fixture
def rubric_run():
    run = published_run(version="3.0.0")
    add_rubric_responses(run, n_items=3)
    return run


def _spanish(client, name: str, *args, query: str = "") -> str:
    with translation.override("es"):
        url = reverse(name, args=args)
    assert url.startswith("/es/")
    response = client.get(url + query)
    assert response.status_code == 200
    html = response.content.decode()
    assert '<html lang="es"' in html
    return html


def test_the_rubric_results_page_reads_in_spanish(client, rubric_run):
    html = _spanish(client, "results:rubrics", query=f"?run={rubric_run.pk}")
    for spanish in (
        "Resultados de rúbrica: la conducta bajo el agregado",
        "Qué son estas puntuaciones y qué no son",
        "Cada puntuación es la de HealthBench",
        "No son una clasificación",
        "Puntuación global por modelo",
        "Por dimensión de conducta",
        "Por agudeza",
        "Por población",
        "3 ítems",
        "Descargar:",
        "Puntuación global de rúbrica por modelo (modelos en orden alfabético",  # the chart
    ):
        assert spanish in html, spanish
    for english in (
        "behaviour beneath the aggregate",
        "What these scores are, and are not",
        "Each score is HealthBench&#x27;s",
        "They are not a ranking",
        "Overall score per model",
        "By behaviour dimension",
        "By acuity",
        "3 items",
        "Every point and table cell links",
        "rubric score per model",
        "graded replies, JSONL",
    ):
        assert english not in html, english


def test_the_items_behind_a_figure_read_in_spanish_with_decimal_commas(client, rubric_run):
    target = rubric_run.targets.order_by("pk")[1]
    query = f"?run={rubric_run.pk}&model={target.pk}&dimension=acknowledging_distress"
    html = _spanish(client, "results:rubric-items", query=query)
    for spanish in (
        "Respuestas de rúbrica detrás de una cifra",
        "3 de 3 respuestas entraron en la cifra (puntuadas solo con los criterios",
        "Dimensión de conducta:",
        "Puntuación de la dimensión",
        "respuesta calificada",
    ):
        assert spanish in html, spanish
    assert re.search(r'<td class="text-end">[01],000</td>', html)
    for english in ("replies entered the figure", "Dimension score", "graded reply", "1.000"):
        assert english not in html, english


def test_a_graded_reply_reads_in_spanish_with_its_reasons(client, rubric_run):
    response = RubricResponse.objects.filter(run=rubric_run).order_by("pk").first()
    html = _spanish(client, "results:rubric-response", response.pk)
    for spanish in (
        "Respuesta calificada:",
        "La conversación",
        "La respuesta del modelo",
        "Todos los criterios",
        "Usuario",
        "(mensaje final, al que se responde):",
        "excluido: descartado por el consenso de expertos",
        "contado: validado por el benchmark publicado",
        "cumplido",
        "Un criterio con puntos negativos describe una conducta",
    ):
        assert spanish in html, spanish
    score = re.search(r'data-testid="response-score">.*?<strong>([^<]*)</strong>', html)
    assert score is not None
    assert re.fullmatch(r"-?\d,\d{3}", score.group(1)), score.group(1)
    for english in (
        "Graded reply:",
        "The conversation",
        "The model&#x27;s reply",
        "Every criterion",
        "final message, the one replied to",
        "excluded: dropped by expert consensus",
        "counted: validated",
        "describes behaviour to avoid",
    ):
        assert english not in html, english


def _rubric_content(run) -> list[str]:
    """The rubric replies' own text (items, criteria, replies, graders' words, dimension names):
    data shown as written, not interface text."""
    texts: set[str] = set()
    for response in RubricResponse.objects.filter(run=run).select_related("item"):
        item = response.item
        texts |= {item.title, item.key, response.reply}
        texts |= {m["content"] for m in item.messages}
        for criterion in item.criteria.all():
            texts |= {criterion.text, criterion.dimension_name}
        texts |= {g.justification for g in response.grades.all()}
    texts |= {name for _slug, name in dimension_choices()}
    return sorted((t for t in texts if t), key=len, reverse=True)


def test_no_sentence_of_the_rubric_pages_stays_in_english(client, rubric_run):
    # The sweep of the other public pages, over the three rubric pages.
    from tests.results.test_spanish_pages import _report, _untranslated, _user_content

    first = rubric_run.targets.order_by("pk").first()
    response = RubricResponse.objects.filter(run=rubric_run).order_by("pk").first()
    pages = {
        "rubrics": reverse("results:rubrics") + f"?run={rubric_run.pk}",
        "rubric-items": reverse("results:rubric-items")
        + f"?run={rubric_run.pk}&model={first.pk}&dimension=acknowledging_distress",
        "rubric-response": reverse("results:rubric-response", args=[response.pk]),
    }
    content = _user_content(rubric_run) + _rubric_content(rubric_run)
    untranslated = _untranslated(
        client, rubric_run, pages, user_content=sorted(content, key=len, reverse=True)
    )
    assert not untranslated, _report(untranslated)
