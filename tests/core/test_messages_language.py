"""A message a service raises reaches its reader in the page's language, and the API's JSON
in English whatever the caller's Accept-Language or language cookie (the API is
language-free: `core.locale_urls.LANGUAGE_FREE_PREFIXES`)."""

import pytest
from django.urls import reverse
from django.utils import translation

from core.exceptions import ApplicationError
from core.jsonsafe import json_loads_checked
from core.roles import Role
from evaluations.models import RunStatus
from evaluations.services.runs import run_cancel, run_pause
from review.services import queue_create
from tests.evaluations.factories import EvaluationRunFactory, ScenarioFactory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PAUSE_REFUSED_EN = "Only a running run can be paused."
PAUSE_REFUSED_ES = "Solo se puede pausar una ejecución en curso."
BAD_JSON_EN = "This is not valid JSON (line 1, column 2:"
BAD_JSON_ES = "Esto no es JSON válido (línea 1, columna 2:"
SPANISH_READER = {"HTTP_ACCEPT_LANGUAGE": "es"}


def _spanish(url_name: str, *args) -> str:
    with translation.override("es"):
        return reverse(url_name, args=args)


def test_the_services_speak_the_active_language():
    """What the API tests below rely on: the messages are translated, so English there is
    the API's doing, not a missing translation."""
    run = EvaluationRunFactory()
    with translation.override("es"), pytest.raises(ApplicationError) as refused:
        run_pause(run=run)
    assert refused.value.message == PAUSE_REFUSED_ES
    with translation.override("es"), pytest.raises(ApplicationError) as refused:
        json_loads_checked("{oops")
    assert refused.value.message.startswith(BAD_JSON_ES)


def test_a_status_named_in_a_refusal_is_in_the_same_language():
    run = EvaluationRunFactory(status=RunStatus.CANCELLED)
    with translation.override("es"), pytest.raises(ApplicationError) as refused:
        run_cancel(run=run)
    assert refused.value.message == "Esta ejecución ya está cancelada."
    with pytest.raises(ApplicationError) as refused:
        run_cancel(run=run)
    assert refused.value.message == "This run is already cancelled."


@pytest.mark.urls("tests.core.api_language_urls")
def test_a_service_refusal_in_the_api_is_english_for_a_spanish_caller(client):
    run = EvaluationRunFactory()
    client.cookies["django_language"] = "es"
    response = client.post(reverse("test-run-pause", args=[run.pk]), **SPANISH_READER)
    assert response.status_code == 400
    assert response.json()["detail"] == PAUSE_REFUSED_EN
    run.refresh_from_db()
    assert run.status != RunStatus.PAUSED


@pytest.mark.urls("tests.core.api_language_urls")
def test_the_api_json_checker_answers_in_english_for_a_spanish_caller(client):
    client.cookies["django_language"] = "es"
    response = client.post(
        reverse("test-json-echo"), "{oops", content_type="application/json", **SPANISH_READER
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith(BAD_JSON_EN)
    # The same endpoint works: the refusal was the body's, not the route's.
    good = client.post(reverse("test-json-echo"), '{"a": 1}', content_type="application/json")
    assert good.json() == {"received": {"a": 1}}


def test_a_run_action_refusal_is_flashed_in_spanish_on_the_spanish_page(client_for, maintainer):
    run = EvaluationRunFactory()  # not running: pausing it is refused
    client = client_for(maintainer)
    page = client.post(_spanish("evaluations:run-action", run.pk, "pause"), follow=True)
    html = page.content.decode()
    assert page.redirect_chain[-1][0].startswith("/es/")
    assert PAUSE_REFUSED_ES in html
    assert PAUSE_REFUSED_EN not in html
    with translation.override("en"):  # the request above left Spanish active in this thread
        plain = reverse("evaluations:run-action", args=[run.pk, "pause"])
    english = client.post(plain, follow=True, HTTP_ACCEPT_LANGUAGE="en")
    assert PAUSE_REFUSED_EN in english.content.decode()


def test_a_workspace_form_shows_the_json_checker_error_in_spanish(client_for, researcher):
    scenario = ScenarioFactory()
    form = {
        "situation": "x",
        "persona": "{oops",
        "user_goal": "x",
        "anchors": "[]",
        "latent_adversarial_goal": "x",
        "failure_condition": "x",
    }
    response = client_for(researcher).post(_spanish("evaluations:scenario-edit", scenario.pk), form)
    assert response.status_code == 200  # the form again, with its error
    html = response.content.decode()
    assert BAD_JSON_ES in html
    assert BAD_JSON_EN not in html


def test_the_rater_screen_notice_is_in_spanish(client, researcher):
    ScenarioFactory()
    queue = queue_create(name="Scenarios", kind="scenario", created_by=researcher, size=1, seed=1)
    rater = UserFactory(roles=[Role.EXPERT_REVIEWER])
    client.force_login(rater)
    page = client.post(_spanish("review:undo", queue.pk), follow=True)
    html = page.content.decode()
    assert page.redirect_chain[-1][0] == _spanish("review:rate", queue.pk)
    assert "No tiene ninguna valoración en esta cola que deshacer." in html
    assert "You have no rating in this queue to undo." not in html


def test_an_id_that_is_not_a_number_is_explained_in_the_address_language(client):
    client.cookies["django_language"] = "es"
    api = client.get(reverse("results-api:explore") + "?run=x1", **SPANISH_READER)
    assert api.status_code == 400
    assert api.json()["detail"] == "run: an id is a whole number written with the digits 0-9."
    page = client.get(_spanish("results:explore") + "?run=x1")
    assert page.status_code == 400
    assert "run: un identificador es un número entero escrito con las cifras 0-9." in (
        page.content.decode()
    )
