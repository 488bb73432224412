"""Keep the published figures fresh: refresh a run's results when the data they read changes.

A run completing refreshes its summaries and analysis at once. Ratings arriving (a rater submits
or undoes a verdict on a run's conversations, a queue completes) refresh the one analysis
figure their queue's kind feeds (`refresh_scope.RATING_FIGURES`) in the runs they concern,
debounced: the first change books a refresh ``RESULTS_REFRESH_DEBOUNCE_SECONDS`` later (a
`RefreshRequest` row, which every web and worker process sees); changes while it is booked only
widen the figures it names, so a rater working through a queue triggers one refresh per window,
not one per rating. A booking whose task was lost (a broker
restart, a worker killed before it acknowledged) would block every later refresh of its run:
beat re-sends bookings older than twice the debounce (``refresh_stale_bookings``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.queueing import task_send
from evaluations.events import RunCompleted
from evaluations.models import Conversation, EvaluationRun, RunStatus, SwapStudy
from results.models import RefreshRequest
from review.blindness import unreleased_blind_queues
from review.events import BlindHoldChanged, RatingsChanged
from review.models import QueueItem

from .refresh import results_refresh
from .refresh_scope import RATING_FIGURES, figures_refresh
from .stored_figures import run_figures_discard

REFRESH_BOOKED = "results.tasks.analysis_refresh_booked"
REFRESH_WHOLE = "results.tasks.results_refresh"


def debounce_seconds() -> int:
    return int(getattr(settings, "RESULTS_REFRESH_DEBOUNCE_SECONDS", 60))


def on_run_completed(event: RunCompleted) -> None:
    if not event.no_worker:
        task_send(REFRESH_WHOLE, event.run_id)
        return
    # Processed on the command line: nothing may take up a queued refresh, and the run's page
    # would link to results that do not exist yet.
    run = EvaluationRun.objects.filter(pk=event.run_id).first()
    if run is not None:
        results_refresh(run=run)


def on_swap_run_completed(event: RunCompleted) -> None:
    """A swap study's re-run finished: its figures join the base run's analysis."""
    base = SwapStudy.objects.filter(swap_run_id=event.run_id).values_list("base_run_id", flat=True)
    for base_run_id in base:
        # Only the swap figures read the re-run: the rest of the base run's analysis stays.
        task_send(REFRESH_BOOKED, base_run_id, ["swap"])


def swap_study_figures_refreshed(*, run_id: int) -> list[dict]:
    """The base run's swap-study figures, refreshed now (for the command that ran a study)."""
    run = EvaluationRun.objects.filter(pk=run_id).first()
    if run is None:
        return []
    return list(figures_refresh(run=run, names=["swap"]).robustness.get("swap", []))


def on_ratings_changed(event: RatingsChanged) -> None:
    # Kinds whose ratings feed no stored figure (scenario quality, rubric consensus) stop here.
    figure = RATING_FIGURES.get(event.kind)
    if figure is None:
        return
    # A blind queue's ratings count once it is released (`on_blind_hold_changed`): until then
    # no figure may move, so none is drawn again.
    if unreleased_blind_queues().filter(pk=event.queue_id).exists():
        return
    run_ids = (
        Conversation.objects.filter(pk__in=event.object_ids, run__status=RunStatus.COMPLETED)
        .order_by()
        .values_list("run_id", flat=True)
        .distinct()
    )
    run_ids = list(run_ids)
    # As the rating commits (events run on commit): pages compute these figures live from
    # here on, until the refresh booked below stores them again.
    run_figures_discard(run_ids)
    for run_id in run_ids:
        refresh_soon(run_id, [figure])


def on_blind_hold_changed(event: BlindHoldChanged) -> None:
    """A blind queue opened, closed or lost a claim: the runs of its items are refreshed whole
    (pass rates leave held conversations out, and the queue's ratings may now count)."""
    # No ORDER BY in either part: SQLite refuses one inside a compound statement.
    items = QueueItem.objects.filter(queue_id=event.queue_id).order_by()
    rated = items.values("object_id").union(items.exclude(object_id_b=0).values("object_id_b"))
    run_ids = list(
        Conversation.objects.filter(pk__in=rated, run__status=RunStatus.COMPLETED)
        .order_by()
        .values_list("run_id", flat=True)
        .distinct()
    )
    run_figures_discard(run_ids)
    for run_id in run_ids:
        task_send(REFRESH_WHOLE, run_id)


def refresh_soon(run_id: int, figures: Iterable[str] | None = None) -> bool:
    """Book a debounced refresh of the run's analysis, of the named figures (None: all of it);
    False when one is already booked (it is widened to these figures)."""
    wanted = None if figures is None else sorted(set(figures))
    try:
        with transaction.atomic():
            RefreshRequest.objects.create(run_id=run_id, figures=wanted)
    except IntegrityError:
        return _booking_widen(run_id, wanted)
    transaction.on_commit(lambda: task_send(REFRESH_BOOKED, run_id, countdown=debounce_seconds()))
    return True


def _booking_widen(run_id: int, wanted: list[str] | None) -> bool:
    """Add ``wanted`` to the run's booking; books anew if its refresh took it meanwhile."""
    with transaction.atomic():
        booking = RefreshRequest.objects.select_for_update().filter(run_id=run_id).first()
        if booking is None:
            return refresh_soon(run_id, wanted)
        booked = booking.figures
        merged = None if booked is None or wanted is None else sorted(set(booked) | set(wanted))
        if merged != booked:
            booking.figures = merged
            booking.save(update_fields=["figures"])
    return False


def refresh_stale_bookings() -> list[int]:
    """Send again the refresh of every booking older than twice the debounce (its task lost);
    returns their runs. A booking whose first task is merely late refreshes twice at worst
    (the refresh is idempotent)."""
    stale_before = timezone.now() - timedelta(seconds=2 * debounce_seconds())
    run_ids = list(
        RefreshRequest.objects.filter(requested_at__lt=stale_before).values_list(
            "run_id", flat=True
        )
    )
    for run_id in run_ids:
        task_send(REFRESH_BOOKED, run_id)
    return run_ids
