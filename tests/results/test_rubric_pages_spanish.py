"""The public rubric pages read in Spanish: a Spanish reader (an /es/ address) of the results,
the items behind a figure and one graded reply gets Spanish headings, reasons and table words,
numbers with decimal commas, and none of the English sentences."""

import re

import pytest
from django.urls import reverse
from django.utils import translation

from evaluations.models import RubricResponse
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
