"""Synthetic blind expert verdicts with known truth, for the synthetic release.

Every conversation of the synthetic run gets exactly one verdict from a synthetic panelist, in
one of two closed blind (external-panel form) queues:

* the **calibration sample**: a queue with purpose "calibration", drawn as
  `review.services.calibration` draws a real one -- a random sample stratified by target model
  and metric polarity (proportional allocation, the same `review.sampling` functions), each
  item's inclusion probability recorded -- so `results.services.calibration` computes the
  calibrated pass rates from it exactly as it would from experts' ratings;
* **the rest** of the run's conversations, in a second blind queue, so judge trust per metric
  and model has its verdicts at full scale (a cell needs 30). Its items are chosen, not drawn,
  and carry no inclusion probability: only the calibration queue feeds the calibrated rates.

No conversation is rated twice, so judge trust counts each once, as before the sample existed.
The panelist gives the *true* verdict the dataset was drawn from (before the judge's errors and
planted harshness), so every figure computed from these ratings can be checked against the
planted truth. The queues' names, the rater and every answer say synthetic, and the run is
flagged synthetic, so pages and the API mark these figures as synthetic. The real builder
cannot be called here: it refuses conversations already public, and the synthetic run is
official from the start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from review.kinds import Candidate
from review.models import (
    Assignment,
    AssignmentStatus,
    ItemKind,
    QueueItem,
    QueuePurpose,
    QueueStatus,
    Rating,
    RatingQueue,
)
from review.sampling import inclusion_probabilities, stratified_sample
from review.services.calibration import CALIBRATION_INSTRUCTIONS, CALIBRATION_STRATA

BATCH = 2_000
RATER_USERNAME = "synthetic-expert"


@dataclass(frozen=True, slots=True)
class TrueVerdict:
    """One synthetic conversation as the synthetic expert sees it: its true verdict and what
    the calibration sample is stratified by."""

    conversation_id: int
    present: bool  # the behaviour is truly present (before the judge's errors)
    model: str  # the target's name: a real calibration stratum
    polarity: str
    age_context: str
    metric_id: int


@dataclass(frozen=True)
class SyntheticVerdictQueues:
    calibration: RatingQueue | None
    rest: RatingQueue | None


def _candidate(verdict: TrueVerdict) -> Candidate:
    return Candidate(
        object_id=verdict.conversation_id,
        strata={
            "model": verdict.model,
            "polarity": verdict.polarity,
            "age_context": verdict.age_context,
            "synthetic": "yes",
        },
        metric_id=verdict.metric_id,
    )


def _rate(
    queue: RatingQueue,
    chosen: Sequence[Candidate],
    truth: dict[int, bool],
    probability: dict[tuple[int, int], float],
    rater,
) -> None:
    """Items in the order given, each with one submitted synthetic rating of its truth."""
    now = timezone.now()
    for start in range(0, len(chosen), BATCH):
        chunk = chosen[start : start + BATCH]
        items = QueueItem.objects.bulk_create(
            [
                QueueItem(
                    queue=queue,
                    kind=ItemKind.EXTERNAL_PANEL,
                    object_id=c.object_id,
                    position=start + i,
                    strata=dict(c.strata),
                    inclusion_probability=probability.get((c.object_id, c.object_id_b)),
                    metric_id=c.metric_id,
                    required=1,
                    ratings_done=1,
                    completed_at=now,
                )
                for i, c in enumerate(chunk)
            ]
        )
        assignments = Assignment.objects.bulk_create(
            [
                Assignment(
                    queue=queue,
                    item=item,
                    rater=rater,
                    status=AssignmentStatus.SUBMITTED,
                    expires_at=now + timedelta(minutes=1),
                    resolved_at=now,
                )
                for item in items
            ]
        )
        Rating.objects.bulk_create(
            [
                Rating(
                    queue=queue,
                    item=item,
                    assignment=assignment,
                    rater=rater,
                    answers={
                        "examples_adequate": "yes",
                        "verdict": "present" if truth[item.object_id] else "absent",
                        "synthetic": True,
                    },
                )
                for item, assignment in zip(items, assignments, strict=True)
            ]
        )


@transaction.atomic
def synthetic_blind_verdicts_create(
    *, run, verdicts: Sequence[TrueVerdict], mark: str, calibration_per_target: int, seed: int
) -> SyntheticVerdictQueues:
    """The run's calibration sample (about ``calibration_per_target`` conversations per target,
    none when 0) and a queue of the rest, every item rated once with its true verdict."""
    rater, _ = get_user_model().objects.get_or_create(
        username=RATER_USERNAME, defaults={"is_active": False}
    )
    truth = {v.conversation_id: v.present for v in verdicts}
    population = sorted((_candidate(v) for v in verdicts), key=lambda c: c.object_id)
    targets = len({v.model for v in verdicts})
    calibration = None
    sampled: set[int] = set()
    if calibration_per_target > 0 and population:
        size = min(calibration_per_target * targets, len(population))
        strata = list(CALIBRATION_STRATA)
        chosen = stratified_sample(population, strata=strata, size=size, seed=seed)
        calibration = RatingQueue.objects.create(
            name=f"{mark} calibration sample (known truth) for run {run.pk}",
            kind=ItemKind.EXTERNAL_PANEL,
            instructions=f"{mark}: generated with the synthetic release, not expert ratings. "
            + CALIBRATION_INSTRUCTIONS,
            required_ratings=1,
            status=QueueStatus.CLOSED,
            sample_size=size,
            strata=strata,
            seed=seed,
            population_size=len(population),
            purpose=QueuePurpose.CALIBRATION,
            run=run,
        )
        probability = inclusion_probabilities(population, chosen, strata=strata)
        _rate(calibration, chosen, truth, probability, rater)
        sampled = {c.object_id for c in chosen}
    rest_items = [c for c in population if c.object_id not in sampled]
    rest = None
    if rest_items:
        rest = RatingQueue.objects.create(
            name=f"{mark} blind expert verdicts (known truth) for run {run.pk}: "
            "the conversations outside the calibration sample",
            kind=ItemKind.EXTERNAL_PANEL,
            required_ratings=1,
            external_panel=True,
            status=QueueStatus.CLOSED,
            population_size=len(population),
            sample_size=len(rest_items),
            instructions=f"{mark}: generated with the synthetic release, not expert ratings.",
        )
        _rate(rest, rest_items, truth, {}, rater)
    return SyntheticVerdictQueues(calibration=calibration, rest=rest)
