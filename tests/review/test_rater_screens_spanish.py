"""A rater with the Spanish interface reads their dashboard, queue list and the rating screen of
every kind of item in Spanish: the page's own words, the questions and their choices.

The items themselves (a metric's criterion, a scenario, a transcript) are what their authors
wrote and stay in their language; ratings store the questions' names and the choices' values,
never the words shown (`test_answers_are_stored_by_value_whatever_the_language`)."""

import pytest
from django.urls import reverse

from core.roles import Role
from evaluations.models import RubricResponse
from review.models import Rating
from review.services import queue_create
from tests.evaluations.factories import EvaluationRunFactory, ScenarioFactory
from tests.factories import UserFactory
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory
from tests.review.test_evaluation_kinds import completed_conversation
from tests.rubrics.factories import RubricItemFactory

pytestmark = pytest.mark.django_db

SPANISH = {"HTTP_ACCEPT_LANGUAGE": "es"}

# Every rating screen, whatever its kind.
SCREEN_ES = ("Atajos de teclado", "Sus respuestas se guardan como borrador", "Omitir", "Enviar")
SCREEN_EN = ("Keyboard shortcuts", "Your choices are saved as a draft", "ratings still needed")


def _metric_world(rater):
    MetricFactory(status="validated")
    return {"kind": "metric"}


def _scenario_world(rater):
    ScenarioFactory()
    return {"kind": "scenario"}


def _conversation_world(rater):
    completed_conversation()
    return {"kind": "conversation"}


def _judge_verdict_world(rater):
    completed_conversation(verdict=True)
    return {"kind": "judge_verdict"}


def _external_panel_world(rater):
    completed_conversation(verdict=True)
    return {"kind": "external_panel", "eligible_raters": [rater], "external_panel": True}


def _rubric_criterion_world(rater):
    RubricItemFactory()
    return {"kind": "rubric_criterion", "required_ratings": 3}


def _simulator_pair_world(rater):
    scenario, target = ScenarioFactory(), OfflineConfigurationFactory()
    for n in range(2):
        run = EvaluationRunFactory(
            simulator=OfflineConfigurationFactory(name=f"SIM-{n}"), targets=[target]
        )
        completed_conversation(run=run, scenario=scenario)
    return {"kind": "simulator_pair"}


def _user_priorities_world(rater):
    run = EvaluationRunFactory()
    RubricResponse.objects.create(
        run=run,
        item=RubricItemFactory(),
        target=run.targets.first(),
        reply="Try a short walk.",
        status="completed",
    )
    return {"kind": "user_priorities", "eligible_raters": [rater], "external_panel": True}


# Per kind: how to make one item, Spanish words its screen must show (its own and its
# questions'), and the English ones they replace.
KINDS = {
    "metric": (
        _metric_world,
        ("¿Qué tan fiel es la métrica a su fuente?", "Parcialmente fiel", "Notas de la rúbrica"),
        ("How faithful is the metric", "Partly faithful", "Rubric notes<"),
    ),
    "scenario": (
        _scenario_world,
        ("¿Qué tan buena prueba de su métrica es este escenario?", "Muy buena", "Anclas"),
        ("How good a test", "Very good", "Hidden goal:", "Anchors<"),
    ),
    "conversation": (
        _conversation_world,
        (
            "¿Es realista el usuario simulado?",
            "Considerable",
            "Ancla cubierta: ",
            "Usuario · turno",
        ),
        ("Is the simulated user realistic?", "Significant", "Anchor covered", "User · turn"),
    ),
    "judge_verdict": (
        _judge_verdict_world,
        (
            "¿Está de acuerdo con el veredicto del juez?",
            "No estoy seguro",
            "El veredicto del juez: comportamiento presente",
        ),
        ("Do you agree with the judge", "Unsure", "The judge's verdict"),
    ),
    "external_panel": (
        _external_panel_world,
        ("Su veredicto sobre la conversación", "Comportamiento presente", "Los ejemplos"),
        ("Your verdict on the conversation", "Behaviour present", "The metric's examples"),
    ),
    "rubric_criterion": (
        _rubric_criterion_world,
        (
            "¿Debería este criterio formar parte de la rúbrica?",
            "Contradice (clínicamente incorrecto)",
            "Criterio para la respuesta al último mensaje",
        ),
        ("Should this criterion", "Contradicts", "Criterion for the reply"),
    ),
    "simulator_pair": (
        _simulator_pair_world,
        ("¿Qué usuario es más realista?", "Conversación 2", "Asistente"),
        ("Which user is more realistic?", "Conversation 2", ">Assistant<"),
    ),
    "user_priorities": (
        _user_priorities_world,
        ("Me importa mucho", "La respuesta que está valorando"),
        ("Matters a lot", "The reply you are rating"),
    ),
}


@pytest.mark.parametrize("kind", KINDS)
def test_the_rating_screen_of_each_kind_is_in_spanish(client, kind):
    world, spanish, english = KINDS[kind]
    rater = UserFactory(roles=[Role.EXPERT_REVIEWER])
    options = world(rater)
    queue = queue_create(name="Cola", created_by=None, size=1, seed=1, **options)
    client.force_login(rater)
    page = client.get(reverse("review:rate", args=[queue.pk]), **SPANISH).content.decode()
    assert '<html lang="es"' in page
    assert 'data-testid="submit-rating"' in page  # an item was claimed: not "nothing left"
    for text in (*SCREEN_ES, *spanish):
        assert text in page, text
    for text in (*SCREEN_EN, *english):
        assert text not in page, text


def test_the_dashboard_and_queue_list_are_in_spanish(client):
    rater = UserFactory(roles=[Role.EXPERT_REVIEWER], first_name="Ana")
    MetricFactory(status="validated")
    queue_create(name="Fidelidad", kind="metric", created_by=None, size=1, seed=1)
    client.force_login(rater)
    dashboard = client.get(reverse("core:dashboard"), **SPANISH).content.decode()
    assert '<html lang="es"' in dashboard
    assert "Le damos la bienvenida, Ana" in dashboard
    assert "Sesión iniciada como" in dashboard
    assert "Welcome" not in dashboard
    assert "Signed in as" not in dashboard
    queues = client.get(reverse("review:rater-queues"), **SPANISH).content.decode()
    assert "Cola de valoración" in queues
    assert "Fidelidad de la métrica" in queues  # the queue's kind
    assert "aún se necesitan" in queues
    assert "Metric fidelity" not in queues
    assert "ratings still needed" not in queues


def test_answers_are_stored_by_value_whatever_the_language(client):
    """A missing answer is named in the rater's language; what is stored is the same in any."""
    rater = UserFactory(roles=[Role.EXPERT_REVIEWER])
    MetricFactory(status="validated")
    queue = queue_create(name="Fidelidad", kind="metric", created_by=None, size=1, seed=1)
    client.force_login(rater)
    client.get(reverse("review:rate", args=[queue.pk]), **SPANISH)
    assignment = rater.rating_assignments.get()
    submit = reverse("review:submit", args=[assignment.pk])
    refused = client.post(submit, {}, follow=True, **SPANISH).content.decode()
    assert "Responda «¿Qué tan fiel es la métrica a su fuente?»." in refused
    client.post(submit, {"answer-fidelity": "partly"}, **SPANISH)
    assert Rating.objects.get().answers == {"fidelity": "partly"}
    done = client.get(reverse("review:rate", args=[queue.pk]), **SPANISH).content.decode()
    assert "No le queda nada por valorar en esta cola" in done
