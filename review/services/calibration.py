"""Two queues over one run's conversations, kept apart by their ``purpose``.

The calibration queue is a random sample of the run's judged conversations, stratified by
target model and metric polarity, each item's inclusion probability stored: experts give their
own verdict blind (external-panel form: neither the model's name nor the judge's verdict is on
screen), and ``results.services.calibration`` corrects the judge's pass rates with those
verdicts. Only a random draw with known probabilities makes that correction unbiased.

The triage queue puts first the conversations where the run's judges, or one judge's repeated
readings, disagreed: the likeliest places for a judge error, so experts' time goes there. Its
items are chosen, not drawn, so its ratings never enter the calibrated rates or the judge
trust figures (`review.selectors` leaves them out).

Both are blind kinds, so (like every blind queue) they are drawn before the run is made
official: a conversation ever public is never rated blind.
"""

from __future__ import annotations

import random
import secrets
from collections import defaultdict

from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from evaluations.models import EvaluationRun, Judgment
from evaluations.services.panel import run_panel, seat_of

from ..kinds.evaluations import run_conversation_candidates
from ..models import ItemKind, QueuePurpose, RatingQueue
from .queues import queue_create, run_not_official_check

CALIBRATION_STRATA = ("model", "polarity")
CALIBRATION_INSTRUCTIONS = (
    "Read the conversation and give your own verdict: is the behaviour the metric describes "
    "present or absent? This is a random sample: rate every item you are given, easy or not, "
    "so the corrected pass rates stay unbiased."
)
TRIAGE_INSTRUCTIONS = (
    "These conversations are the ones the judges (or one judge's repeated readings) disagreed "
    "on. Give your own verdict; these ratings help find judge errors and are not used as a "
    "random sample."
)


@transaction.atomic
def calibration_queue_create(
    *,
    run: EvaluationRun,
    name: str,
    created_by: AbstractBaseUser | None,
    size: int | None = None,
    fraction: float | None = None,
    required_ratings: int = 1,
    eligible_group: Group | None = None,
    eligible_raters=(),
    seed: int | None = None,
) -> RatingQueue:
    """A blind, random calibration sample of ``run``'s judged conversations, stratified by
    target and polarity (proportional allocation), each item's inclusion probability stored."""
    run_not_official_check(run)  # before the draw: its own message says why
    candidates = run_conversation_candidates(run, judged=True)
    if not candidates:
        raise ApplicationError(
            _(
                "This run has no judged conversation that is not public yet. Draw the calibration "
                "sample before the run is made official."
            )
        )
    return queue_create(
        name=name,
        kind=ItemKind.EXTERNAL_PANEL,
        created_by=created_by,
        size=size,
        fraction=fraction,
        strata=CALIBRATION_STRATA,
        required_ratings=required_ratings,
        eligible_group=eligible_group,
        eligible_raters=eligible_raters,
        seed=seed,
        instructions=CALIBRATION_INSTRUCTIONS,
        candidates=candidates,
        purpose=QueuePurpose.CALIBRATION,
        run=run,
    )


def disagreement_scores(run: EvaluationRun) -> dict[int, float]:
    """How much the readings of each of ``run``'s conversations disagree, 0 when unanimous.

    A panel tie scores 3; judges whose own verdicts differ score 2 plus the minority share of
    the judges; repetitions of one judge that differ score 1 plus the largest minority share
    among the judges' readings. So panel disagreements come first, then split repetitions.
    """
    seats = run_panel(run)
    readings: dict[int, dict[int, list[bool]]] = defaultdict(lambda: defaultdict(list))
    rows = Judgment.objects.filter(conversation__run=run).values_list(
        "conversation_id", "repetition", "present"
    )
    for conversation, repetition, present in rows.order_by():
        seat = seat_of(seats, repetition)
        readings[conversation][seat.index if seat else 0].append(present)
    scores: dict[int, float] = {}
    for conversation, by_seat in readings.items():
        own = [sum(v) * 2 > len(v) for v in by_seat.values() if v]
        yes = sum(own)
        minority_judges = min(yes, len(own) - yes) / len(own)
        split = max(min(sum(v), len(v) - sum(v)) / len(v) for v in by_seat.values() if v)
        if len(own) > 1 and yes * 2 == len(own):
            scores[conversation] = 3.0
        elif minority_judges > 0:
            scores[conversation] = 2.0 + minority_judges
        elif split > 0:
            scores[conversation] = 1.0 + split
        else:
            scores[conversation] = 0.0
    return scores


@transaction.atomic
def triage_queue_create(
    *,
    run: EvaluationRun,
    name: str,
    created_by: AbstractBaseUser | None,
    size: int,
    required_ratings: int = 1,
    eligible_group: Group | None = None,
    eligible_raters=(),
    include_unanimous: bool = False,
    seed: int | None = None,
) -> RatingQueue:
    """A blind queue of ``run``'s conversations where judges or repetitions disagree, the
    most disputed first (ties in score in a seeded random order); unanimous conversations
    only when ``include_unanimous``. Items carry no inclusion probability."""
    run_not_official_check(run)
    scores = disagreement_scores(run)
    seed = secrets.randbelow(2**31) if seed is None else seed
    candidates = [
        c
        for c in run_conversation_candidates(run, judged=False)
        if include_unanimous or scores.get(c.object_id, 0.0) > 0
    ]
    if not candidates:
        raise ApplicationError(
            _(
                "No conversation of this run that is not public yet has judges or repetitions "
                "that disagree."
            )
        )
    rng = random.Random(seed)  # noqa: S311 - ordering ties, not security
    shuffled = rng.sample(candidates, len(candidates))
    shuffled.sort(key=lambda c: -scores.get(c.object_id, 0.0))
    return queue_create(
        name=name,
        kind=ItemKind.EXTERNAL_PANEL,
        created_by=created_by,
        size=size,
        required_ratings=required_ratings,
        eligible_group=eligible_group,
        eligible_raters=eligible_raters,
        seed=seed,
        instructions=TRIAGE_INSTRUCTIONS,
        candidates=shuffled,
        purpose=QueuePurpose.TRIAGE,
        run=run,
        ranked=True,
    )
