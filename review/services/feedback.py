"""What expert review changes in the registry: contested metrics and maintainers' keep decisions.

A metric becomes "contested" when experts disagree with it often enough: for metric-fidelity
queues, the share of its ratings that call it faithful; for judge-verdict and external-panel
queues, the share of ratings agreeing with the judge (or whose own verdict matches it). Below
REVIEW_CONTESTED_AGREEMENT_THRESHOLD the metric is contested, and `release_assemble_from_current`
leaves it out of new release drafts until a maintainer keeps it with a written reason.
"""

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError
from core.roles import Role, user_has_role
from metrics_registry.models import Metric, ValidationStatus
from metrics_registry.services import metric_status_change
from rubrics.services.criteria import rubric_criterion_set_consensus

from ..kinds import adapter_for, rubric_consensus_survives
from ..models import (
    ContestedMetricKeep,
    CriterionConsensus,
    QueueItem,
    Rating,
    RatingQueue,
)

# Statuses a review may move to "contested"; drafts are not reviewed yet, retired metrics are out.
CONTESTABLE = (ValidationStatus.VALIDATED, ValidationStatus.UNDER_REVIEW)


def contested_threshold() -> float:
    return float(getattr(settings, "REVIEW_CONTESTED_AGREEMENT_THRESHOLD", 0.6))


def metric_support_share(*, queue: RatingQueue, metric_id: int) -> tuple[float, int] | None:
    """(share of supporting ratings, number of ratings) over the metric's completed items."""
    ratings = list(
        Rating.objects.current()
        .filter(queue=queue, item__metric_id=metric_id, item__completed_at__isnull=False)
        .select_related("item")
    )
    adapter = adapter_for(queue.kind)
    if not ratings or not adapter.contests_metric:
        return None
    support = [adapter.metric_support(r) for r in ratings]
    return sum(support) / len(support), len(support)


@transaction.atomic
def metric_review_feedback(*, queue: RatingQueue, metric_id: int) -> Metric | None:
    """Contest the metric once all its items in the queue are complete, if the experts'
    support falls below the threshold; returns the metric if it was contested."""
    if QueueItem.objects.filter(queue=queue, metric_id=metric_id, completed_at=None).exists():
        return None
    result = metric_support_share(queue=queue, metric_id=metric_id)
    if result is None:
        return None
    share, count = result
    threshold = contested_threshold()
    metric = Metric.objects.select_for_update().get(pk=metric_id)
    if share >= threshold or metric.validation_status not in CONTESTABLE:
        return None
    what = adapter_for(queue.kind).support_phrase
    metric = metric_status_change(
        metric=metric,
        to_status=ValidationStatus.CONTESTED,
        changed_by=None,
        reason=(
            f"Expert review “{queue.name}”: {share:.0%} of {count} ratings {what}, below the "
            f"threshold of {threshold:.0%}."
        ),
    )
    # A keep decision answered an earlier dispute, not this one.
    ContestedMetricKeep.objects.filter(metric=metric).delete()
    return metric


@transaction.atomic
def contested_metric_keep(
    *, metric: Metric, reason: str, kept_by: AbstractBaseUser
) -> ContestedMetricKeep:
    """A maintainer keeps a contested metric in new release drafts, saying why."""
    if not user_has_role(kept_by, Role.MAINTAINER):
        raise ApplicationError(_("Only a maintainer can keep a contested metric in releases."))
    metric = Metric.objects.select_for_update().get(pk=metric.pk)
    if metric.validation_status != ValidationStatus.CONTESTED:
        raise ApplicationError(
            _("%(metric_key)s is not contested; there is nothing to keep.")
            % {"metric_key": metric.key}
        )
    reason = (reason or "").strip()
    if len(reason) < 10:
        raise ApplicationError(_("Write why the metric stays in releases despite the review."))
    keep, _created = ContestedMetricKeep.objects.update_or_create(
        metric=metric, defaults={"reason": reason, "kept_by": kept_by}
    )
    return keep


@transaction.atomic
def contested_metric_keep_revoke(*, metric: Metric, revoked_by: AbstractBaseUser) -> None:
    if not user_has_role(revoked_by, Role.MAINTAINER):
        raise ApplicationError(_("Only a maintainer can change this decision."))
    ContestedMetricKeep.objects.filter(metric=metric).delete()


def contested_metric_ids_kept() -> set[int]:
    """For the registry's release assembly (the site's URL configuration passes it to the
    release pages)."""
    return set(ContestedMetricKeep.objects.values_list("metric_id", flat=True))


@transaction.atomic
def rubric_criterion_consensus_record(*, item: QueueItem) -> CriterionConsensus:
    """Apply the consensus rule to a completed rubric-criterion item and record the outcome.

    Rubric queues need at least three ratings per item, so a complete item always has the
    three reviews the rule asks for.
    """
    answers = list(
        Rating.objects.current()
        .filter(item=item)
        .order_by("submitted_at")
        .values_list("answers__consensus", flat=True)
    )
    consensus, _created = CriterionConsensus.objects.update_or_create(
        criterion_id=item.object_id,
        defaults={
            "queue_id": item.queue_id,
            "reviews": len(answers),
            "agrees": answers.count("agree"),
            "contradicts": answers.count("contradicts"),
            "survives": rubric_consensus_survives(answers),
            "decided_at": timezone.now(),
        },
    )
    # Scoring lives in the rubrics app; the consensus outcome is handed over, not duplicated.
    rubric_criterion_set_consensus(criterion_id=item.object_id, survives=consensus.survives)
    return consensus


def review_item_completed(*, queue: RatingQueue, item: QueueItem) -> None:
    """What a completed item changes outside the queue."""
    adapter = adapter_for(item.kind)
    if adapter.decides_criterion_consensus:
        rubric_criterion_consensus_record(item=item)
    elif item.metric_id and adapter.contests_metric:
        metric_review_feedback(queue=queue, metric_id=item.metric_id)
