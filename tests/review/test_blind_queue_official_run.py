"""Blind queues are drawn before a run is made official: on an official run the service itself
refuses a calibration sample, a triage queue or any blind queue tied to the run (so every path
to it does), and the form says why and keeps what was typed."""

import pytest
from django.urls import reverse

from core.exceptions import ApplicationError
from evaluations.models import EvaluationRun
from review.kinds import kinds_with
from review.kinds.evaluations import run_conversation_candidates
from review.models import ItemKind, RatingQueue
from review.services import queue_create
from review.services.calibration import calibration_queue_create, triage_queue_create
from tests.evaluations.test_runs import offline_release  # noqa: F401 - fixture
from tests.results.test_calibration import panel_run  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db

REFUSAL = "Blind queues are drawn before the run is made official, and this run is official"


def _official(run: EvaluationRun) -> None:
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=True)
    run.refresh_from_db()


@pytest.mark.slow(reason="runs a small offline evaluation with a judge panel")
def test_the_services_refuse_blind_queues_on_an_official_run(panel_run, researcher):  # noqa: F811
    # A first sample drawn in time holds its scenarios back: once the run is official, they
    # are still not public, so only the run's status can stop a second blind draw.
    calibration_queue_create(
        run=panel_run, name="In time", created_by=researcher, fraction=0.5, seed=1
    )
    _official(panel_run)
    assert run_conversation_candidates(panel_run, judged=True)
    assert ItemKind.EXTERNAL_PANEL in kinds_with("blind")
    attempts = {
        "calibration": lambda: calibration_queue_create(
            run=panel_run, name="Calibration", created_by=researcher, fraction=1.0
        ),
        "triage": lambda: triage_queue_create(
            run=panel_run, name="Triage", created_by=researcher, size=5, include_unanimous=True
        ),
        "blind queue of the run": lambda: queue_create(
            name="Panel",
            kind=ItemKind.EXTERNAL_PANEL,
            created_by=researcher,
            size=3,
            candidates=run_conversation_candidates(panel_run, judged=False),
            run=panel_run,
        ),
    }
    for name, attempt in attempts.items():
        with pytest.raises(ApplicationError, match=REFUSAL):
            attempt()
        assert RatingQueue.objects.count() == 1, name
    # The same run before it is made official: drawn as before.
    EvaluationRun.objects.filter(pk=panel_run.pk).update(is_official=False)
    panel_run.refresh_from_db()
    for attempt in attempts.values():
        attempt()
    assert RatingQueue.objects.count() == 1 + len(attempts)


@pytest.mark.slow(reason="runs a small offline evaluation with a judge panel")
def test_the_form_refuses_a_blind_queue_on_an_official_run_and_keeps_the_input(
    panel_run,  # noqa: F811
    researcher,
    client,
):
    _official(panel_run)
    client.force_login(researcher)
    url = reverse("review:run-queue-create")
    for purpose, extra in (("calibration", {"sample_fraction": "0.5"}), ("triage", {})):
        response = client.post(
            url,
            {
                "purpose": purpose,
                "run": panel_run.pk,
                "name": f"Drawn too late ({purpose})",
                "sample_size": "" if extra else "5",
                "required_ratings": 1,
                **extra,
            },
        )
        assert response.status_code == 200
        page = response.content.decode()
        assert REFUSAL in page
        assert f'value="Drawn too late ({purpose})"' in page  # nothing typed is lost
        assert not RatingQueue.objects.exists()
