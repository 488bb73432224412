"""Creating and closing rating queues."""

import secrets
from collections.abc import Iterable, Sequence

from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.languages import DEFAULT_LANGUAGE
from evaluations.models import Conversation, EvaluationRun

from ..kinds import Candidate, adapter_for, kinds_with
from ..models import ItemKind, QueueItem, QueuePurpose, QueueStatus, RatingQueue, StratumField
from ..sampling import inclusion_probabilities, sample_size_for, stratified_sample
from .assignments import blind_holds_changed

BULK_BATCH = 5_000


@transaction.atomic
def queue_create(
    *,
    name: str,
    kind: str,
    created_by: AbstractBaseUser | None,
    size: int | None = None,
    fraction: float | None = None,
    strata: Sequence[str] = (),
    required_ratings: int = 3,
    eligible_group: Group | None = None,
    eligible_raters: Iterable[AbstractBaseUser] = (),
    external_panel: bool = False,
    claim_timeout_minutes: int = 30,
    seed: int | None = None,
    instructions: str = "",
    candidates: Sequence[Candidate] | None = None,
    purpose: str = QueuePurpose.GENERAL,
    run=None,
    ranked: bool = False,
) -> RatingQueue:
    """A queue over a stratified random sample of one kind of item.

    `candidates` defaults to everything the kind's adapter offers; callers may pass a narrower
    population. Without `seed` one is drawn and stored, so the sample can be redrawn exactly.
    Each item keeps its inclusion probability. `ranked` takes the first `size` candidates in
    the order given instead of drawing (a triage queue): those items have no probability.
    """
    name = (name or "").strip()
    if not name:
        raise ApplicationError(_("Give the queue a name raters will recognise."))
    if kind not in ItemKind.values:
        raise ApplicationError(_("Unknown kind of item: %(kind)s.") % {"kind": kind})
    adapter = adapter_for(kind)
    unknown = set(strata) - set(StratumField.values)
    if unknown:
        raise ApplicationError(
            _("Cannot stratify by %(items)s.") % {"items": ", ".join(sorted(unknown))}
        )
    if not 1 <= required_ratings <= 20:
        raise ApplicationError(_("Each item needs between 1 and 20 ratings."))
    if required_ratings < adapter.min_required_ratings:
        raise ApplicationError(str(adapter.min_required_reason))
    if claim_timeout_minutes < 1:
        raise ApplicationError(_("The claim timeout must be at least one minute."))
    raters = list(eligible_raters)
    if external_panel and not (raters or eligible_group):
        raise ApplicationError(_("Name the external panel's raters or choose their group."))
    population = list(adapter.candidates() if candidates is None else candidates)
    if candidates is not None:
        adapter.check_candidates(population)
    if not population:
        raise ApplicationError(str(adapter.nothing_to_sample))
    if purpose not in QueuePurpose.values:
        raise ApplicationError(_("Unknown queue purpose: %(purpose)s.") % {"purpose": purpose})
    if run is not None and kind in kinds_with("blind"):
        run_not_official_check(run)
    seed = secrets.randbelow(2**31) if seed is None else seed
    if ranked:
        chosen = population[: sample_size_for(len(population), size=size, fraction=fraction)]
        probability: dict[tuple[int, int], float] = {}
    else:
        chosen = stratified_sample(
            population, strata=list(strata), size=size, fraction=fraction, seed=seed
        )
        probability = inclusion_probabilities(population, chosen, strata=list(strata))
    queue = RatingQueue.objects.create(
        name=name,
        kind=kind,
        instructions=(instructions or "").strip(),
        required_ratings=required_ratings,
        eligible_group=eligible_group,
        external_panel=external_panel,
        claim_timeout_minutes=claim_timeout_minutes,
        sample_size=size,
        sample_fraction=fraction,
        strata=list(strata),
        seed=seed,
        population_size=len(population),
        created_by=created_by,
        purpose=purpose,
        run=run,
    )
    if raters:
        queue.eligible_raters.set(raters)
    languages = adapter.languages([candidate.object_id for candidate in chosen])
    QueueItem.objects.bulk_create(
        (
            QueueItem(
                queue=queue,
                kind=kind,
                object_id=candidate.object_id,
                object_id_b=candidate.object_id_b,
                position=position,
                strata=dict(candidate.strata),
                inclusion_probability=probability.get((candidate.object_id, candidate.object_id_b)),
                language=languages.get(candidate.object_id, DEFAULT_LANGUAGE),
                metric_id=candidate.metric_id,
                owner_id=candidate.owner_id,
                required=required_ratings,
            )
            for position, candidate in enumerate(chosen)
        ),
        batch_size=BULK_BATCH,
    )
    blind_holds_changed([queue.pk])
    return queue


def _holds_public_items(queue: RatingQueue) -> bool:
    if queue.kind not in kinds_with("blind"):
        return False
    items = queue.items.values("object_id")
    return Conversation.objects.filter(pk__in=items, run__is_official=True).exists()


def run_not_official_check(run: EvaluationRun) -> None:
    """Refuse a blind queue over an official run: its conversations may be public already (or
    become so once its release is published), so a rater could look each one up. The run is
    locked until the queue is made, so it cannot be made official meanwhile."""
    official = (
        EvaluationRun.objects.select_for_update()
        .filter(pk=run.pk)
        .values_list("is_official", flat=True)
        .first()
    )
    if official:
        raise ApplicationError(
            _(
                "Blind queues are drawn before the run is made official, and this run is "
                "official already: its conversations may have been read. Draw the queue from "
                "a run that is not official yet."
            )
        )


@transaction.atomic
def queue_set_status(*, queue: RatingQueue, status: str) -> RatingQueue:
    """Close a queue to new claims (ratings already claimed may still be submitted) or reopen."""
    if status not in QueueStatus.values:
        raise ApplicationError(_("Unknown queue status: %(status)s.") % {"status": status})
    queue = RatingQueue.objects.select_for_update().get(pk=queue.pk)
    if status == QueueStatus.OPEN and queue.status != status and _holds_public_items(queue):
        # Reopened, it would hold back again conversations visitors have read and counted.
        raise ApplicationError(
            _(
                "This blind queue rates conversations of a run that is public now; it cannot "
                "be reopened. Draw a new queue from a run before it is made official."
            )
        )
    queue.status = status
    queue.save(update_fields=["status", "updated_at"])
    blind_holds_changed([queue.pk])
    return queue
