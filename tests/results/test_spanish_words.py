"""Words stored or composed in English, read in Spanish: interval methods that `stats` composes
("cluster bootstrap over base scenarios") translated whole, and scenario labels through
`stored_words`."""

import pytest
from django.urls import reverse
from django.utils import translation

from results.method_words import method_words
from results.stored_words import stored_words
from stats.bounds import COEFFICIENT_HULL, RANK_HULL
from stats.figures import coefficient_method, proportion_method
from stats.judge_trust import KAPPA_METHOD_RESAMPLED
from stats.ranking import BRADLEY_TERRY_BOOTSTRAP
from stats.swap import REFLECTED
from tests.results.public_data import published_run

SPANISH_METHODS = {
    "cluster bootstrap over base scenarios": "bootstrap por conglomerados sobre escenarios base",
    BRADLEY_TERRY_BOOTSTRAP: "bootstrap por conglomerados sobre ítems valorados (percentiles)",
    KAPPA_METHOD_RESAMPLED.format(over="base scenarios"): (
        "bootstrap de percentiles sobre escenarios base, ampliado al intervalo de Wilson del "
        "acuerdo trasladado a kappa con el acuerdo por azar observado"
    ),
    f"{RANK_HULL} (cluster bootstrap over replies)": (
        "envolvente del bootstrap de percentiles y del intervalo de Wilson de la proporción de "
        "concordancia sobre los ítems ordenados (bootstrap por conglomerados sobre respuestas)"
    ),
    f"cluster bootstrap over pairs, {REFLECTED}": (
        "bootstrap por conglomerados sobre pares, envuelto con su reflejo respecto al valor "
        "(bootstrap básico)"
    ),
}


@pytest.mark.parametrize(("stored", "spanish"), SPANISH_METHODS.items())
def test_a_composed_method_reads_as_one_spanish_phrase(stored, spanish):
    with translation.override("es"):
        assert method_words(stored) == spanish
    with translation.override("en"):
        assert method_words(stored) == stored


def test_the_methods_stats_composes_are_all_translated():
    composed = [
        proportion_method(True, "base scenarios"),
        coefficient_method(True, "pairs"),
        coefficient_method(None, "items"),
    ]
    assert composed[1].startswith(COEFFICIENT_HULL)
    with translation.override("es"):
        for method in composed:
            words = method_words(method)
            assert words != method
            assert " over " not in words
            assert " sobre " in words


def test_scenario_labels_stored_in_english_read_in_spanish():
    with translation.override("es"):
        assert stored_words("Situation 3, teen (13–17)") == "Situación 3, adolescente (13–17)"
        assert (
            stored_words("Situation unknown (imported), adult (18+)")
            == "Situación desconocida (importada), adulto (18+)"
        )
        assert stored_words("Situation unknown (imported)") == "Situación desconocida (importada)"
        assert stored_words("Situation 3, elderly") == "Situation 3, elderly"  # as stored


@pytest.mark.django_db
def test_a_conversation_page_shows_its_scenario_label_in_spanish(client):
    run = published_run()
    conversation = run.conversations.select_related("scenario").order_by("pk").first()
    url = reverse("results:conversation", args=[conversation.pk])
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    label = conversation.scenario.label
    assert label.startswith("Situation ")
    assert f'data-testid="crumb-scenario">{label}</a>' in english
    spanish = client.get(url, HTTP_ACCEPT_LANGUAGE="es").content.decode()
    with translation.override("es"):
        expected = stored_words(label)
    assert expected.startswith("Situación ")
    assert f'data-testid="crumb-scenario">{expected}</a>' in spanish
