"""Figures refresh when ratings arrive (debounced), through the one event mechanism."""

import pytest

from core import events
from evaluations.events import RunCompleted
from evaluations.services.official import run_set_official
from results.models import RefreshRequest, RunAnalysis
from results.services import results_refresh
from results.services.freshness import (
    REFRESH_BOOKED,
    REFRESH_WHOLE,
    on_ratings_changed,
    on_run_completed,
)
from results.services.refresh_scope import refresh_booked
from review.events import RatingsChanged
from review.services import assignment_claim, queue_create, queue_set_status, rating_submit
from tests.factories import UserFactory
from tests.llm.factories import OfflineConfigurationFactory
from tests.results.factories import completed_run, metric_version, scenario

pytestmark = pytest.mark.django_db


def test_the_apps_meet_only_through_core_events():
    import inspect

    from evaluations.services import runs

    assert on_run_completed in events.handlers(RunCompleted)
    assert on_ratings_changed in events.handlers(RatingsChanged)
    # The producer does not know its consumer.
    assert "from results" not in inspect.getsource(runs)
    assert "import results" not in inspect.getsource(runs)


def test_blind_ratings_refresh_the_run_once_when_their_queue_is_released(
    sent_tasks, django_capture_on_commit_callbacks
):
    x = OfflineConfigurationFactory(name="X")
    version = metric_version()
    outcomes = [(scenario(version, b, age), x, b % 2 == 0) for b in range(3) for age in ("teen",)]
    # Blind ratings are of conversations not public yet: the queue is drawn before the run is
    # made official (its conversations stay held back until the queue closes).
    run = completed_run(targets=[x], versions=[version], outcomes=outcomes, official=False)
    results_refresh(run=run, n_resamples=100)
    assert RunAnalysis.objects.get(run=run).reliability["experts"]["available"] is False

    panelists = [UserFactory() for _ in range(2)]
    with django_capture_on_commit_callbacks(execute=True):
        panel = queue_create(
            name="Panel",
            kind="external_panel",
            created_by=None,
            size=3,
            seed=1,
            required_ratings=2,
            eligible_raters=panelists,
            external_panel=True,
        )
    # Drawing the queue holds its conversations back: the run's figures are drawn again.
    assert [a for name, a, _ in sent_tasks if name == REFRESH_WHOLE] == [(run.pk,)]
    run_set_official(run=run, official=True, changed_by=None)
    sent_tasks.clear()
    with django_capture_on_commit_callbacks(execute=True):
        for rater in panelists:
            while (assignment := assignment_claim(queue=panel, rater=rater)) is not None:
                rating_submit(
                    assignment=assignment,
                    rater=rater,
                    answers={"examples_adequate": "yes", "verdict": "present"},
                )
    # Six ratings in an open blind queue: no figure may move, so nothing is booked or sent.
    assert sent_tasks == []
    assert not RefreshRequest.objects.filter(run=run).exists()
    with django_capture_on_commit_callbacks(execute=True):
        queue_set_status(queue=panel, status="closed")
    # Released: one refresh of the whole run takes all six verdicts at once.
    assert [a for name, a, _ in sent_tasks if name == REFRESH_WHOLE] == [(run.pk,)]
    results_refresh(run=run, n_resamples=100)  # what the sent task runs
    experts = RunAnalysis.objects.get(run=run).reliability["experts"]
    assert experts["available"] is True
    assert experts["n_ratings"] == 6


def test_a_lost_booking_is_sent_again_after_twice_the_debounce(sent_tasks, settings):
    """A booking whose task never ran would block every later refresh of its run: beat sends
    it again once it is older than twice the debounce, and a fresh one is left alone."""
    from datetime import timedelta

    from django.utils import timezone

    from results.services.freshness import refresh_stale_bookings

    settings.RESULTS_REFRESH_DEBOUNCE_SECONDS = 60
    x = OfflineConfigurationFactory(name="X")
    versions = [metric_version(), metric_version()]
    runs = [
        completed_run(
            targets=[x],
            versions=[v],
            outcomes=[(scenario(v, 0, "teen"), x, True)],
            publish_as=f"1.0.{i}",
        )
        for i, v in enumerate(versions)
    ]
    for run in runs:
        RefreshRequest.objects.create(run=run)
    RefreshRequest.objects.filter(run=runs[0]).update(
        requested_at=timezone.now() - timedelta(seconds=121)
    )
    assert refresh_stale_bookings() == [runs[0].pk]
    assert sent_tasks.args(REFRESH_BOOKED) == [(runs[0].pk,)]
    # The task releases the booking, so the next rating books a refresh again.
    refresh_booked(runs[0].pk)
    assert not RefreshRequest.objects.filter(run=runs[0]).exists()
    assert RefreshRequest.objects.filter(run=runs[1]).exists()
