"""Reading queues and their progress. Agreement figures live in `review.agreement`."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, F, Q, QuerySet, Sum
from django.db.models.fields.json import KT
from django.utils import timezone
from django.utils.translation import ngettext

from core.demo import SEEDED_PANEL_DOMAIN
from core.selectors import LanguagesRead, languages_read
from evaluations.models import Conversation
from metrics_registry.models import Metric, ValidationStatus

from .kinds.holds import ratings_published
from .kinds.questions import SCENARIO_QUALITY
from .models import (
    Assignment,
    AssignmentStatus,
    CriterionConsensus,
    ItemKind,
    QueueItem,
    QueuePurpose,
    Rating,
    RatingQueue,
)
from .services.assignments import undo_window


@dataclass(frozen=True)
class QueueProgress:
    items: int
    items_complete: int
    ratings_required: int
    ratings_done: int
    claims_open: int

    @property
    def ratings_remaining(self) -> int:
        return self.ratings_required - self.ratings_done

    @property
    def percent(self) -> int:
        if not self.ratings_required:
            return 0
        return round(100 * self.ratings_done / self.ratings_required)


def queue_list() -> QuerySet[RatingQueue]:
    return (
        RatingQueue.objects.select_related("created_by", "eligible_group")
        .annotate(item_count=Count("items"))
        .order_by("-created_at", "-pk")
    )


def queue_list_rateable(*, user: AbstractBaseUser) -> QuerySet[RatingQueue]:
    return RatingQueue.objects.rateable_by(user).order_by("-created_at")


def queue_progress(queue: RatingQueue) -> QueueProgress:
    totals = queue.items.aggregate(
        items=Count("pk"),
        complete=Count("pk", filter=Q(ratings_done__gte=F("required"))),
        required=Sum("required"),
        done=Sum("ratings_done"),
        claims=Sum("claims_open"),
    )
    return QueueProgress(
        items=totals["items"],
        items_complete=totals["complete"],
        ratings_required=totals["required"] or 0,
        ratings_done=totals["done"] or 0,
        claims_open=totals["claims"] or 0,
    )


def rater_done_count(*, queue: RatingQueue, rater: AbstractBaseUser) -> int:
    return Rating.objects.current().filter(queue=queue, rater=rater).count()


def rater_can_undo(*, queue: RatingQueue, rater: AbstractBaseUser) -> bool:
    return (
        Rating.objects.current()
        .filter(queue=queue, rater=rater, submitted_at__gte=timezone.now() - undo_window())
        .exists()
    )


@dataclass(frozen=True)
class RaterLanguages:
    """The languages a rater reads, and how many items they could take wait in others."""

    read: LanguagesRead
    waiting_elsewhere: int

    @property
    def nothing_readable(self) -> str:
        """Why a rater with items still waiting gets none of them."""
        return ngettext(
            "No items left in the languages you read: %(languages)s; %(count)d item waits "
            "in other languages.",
            "No items left in the languages you read: %(languages)s; %(count)d items wait "
            "in other languages.",
            self.waiting_elsewhere,
        ) % {"languages": self.read.listed, "count": self.waiting_elsewhere}


def rater_languages(*, queue: RatingQueue, rater: AbstractBaseUser) -> RaterLanguages:
    """What the rater reads and the open items of `queue` they were not given for the language
    (the same rule `assignment_claim` routes by)."""
    waiting = QueueItem.objects.filter(queue=queue).open_to(rater).unreadable_by(rater).count()
    return RaterLanguages(read=languages_read(user=rater), waiting_elsewhere=waiting)


def assignment_for_rater(*, rater: AbstractBaseUser) -> QuerySet[Assignment]:
    return Assignment.objects.filter(rater=rater).select_related("queue", "item")


def assignments_open(*, queue: RatingQueue) -> QuerySet[Assignment]:
    return queue.assignments.filter(status=AssignmentStatus.CLAIMED)


def ratings_for_export(queue: RatingQueue) -> QuerySet[Rating]:
    return (
        Rating.objects.filter(queue=queue)
        .select_related("item", "item__metric", "rater")
        .order_by("item__position", "submitted_at", "id")
    )


def metrics_contested() -> QuerySet[Metric]:
    return (
        Metric.objects.filter(validation_status=ValidationStatus.CONTESTED)
        .select_related("current_version", "contested_keep", "contested_keep__kept_by")
        .prefetch_related("status_changes")
        .order_by("key")
    )


VerdictRow = tuple[int, int, bool | None]


def _verdict_ratings(*, run, kind: str) -> list[VerdictRow]:
    conversations = Conversation.objects.filter(run=run).values("pk")
    rows = (
        ratings_published(Rating.objects.all())
        .filter(item__kind=kind, item__object_id__in=conversations)
        # Triage items were chosen for their disagreements: never counted as a fair sample.
        .exclude(queue__purpose=QueuePurpose.TRIAGE)
        # The answer as text: a JSON key read as JSON is decoded row by row in Python, the
        # better part of this query's time on a release-wide panel.
        .values_list("item__object_id", "rater_id", KT("answers__verdict"))
        .order_by("item__object_id", "rater_id")
    )
    verdicts = {"present": True, "absent": False}
    return [(conversation, rater, verdicts.get(verdict)) for conversation, rater, verdict in rows]


def blind_verdict_ratings(*, run) -> list[VerdictRow]:
    """Expert verdicts given *without* seeing the judge's (external-panel queues) on a run's
    conversations: (conversation id, rater id, present or None when left open).

    Only these measure independent agreement with the judge: the published validity figure.
    Undone ratings count nowhere, and a blind queue's count once it stops taking ratings
    (`kinds.holds.ratings_published`).
    """
    return _verdict_ratings(run=run, kind=ItemKind.EXTERNAL_PANEL)


def judge_visible_verdict_ratings(*, run) -> list[VerdictRow]:
    """Expert verdicts given while the judge's verdict was on screen (judge-verdict queues).

    Same rows as :func:`blind_verdict_ratings`; they measure endorsement of the judge, not
    independent agreement, and are reported apart under that name.
    """
    return _verdict_ratings(run=run, kind=ItemKind.JUDGE_VERDICT)


def rubric_criterion_ids_dropped() -> set[int]:
    """Rubric criteria that failed expert consensus; scoring leaves them out."""
    return set(
        CriterionConsensus.objects.filter(survives=False).values_list("criterion_id", flat=True)
    )


def scenarios_rated_poor(queue: RatingQueue) -> list[dict]:
    """Completed scenario items whose median quality rating is "poor" or worse."""
    poor = SCENARIO_QUALITY.rank("poor")
    by_item: dict[int, list[int]] = {}
    for object_id, answer in (
        Rating.objects.current()
        .filter(queue=queue, item__completed_at__isnull=False)
        .values_list("item__object_id", "answers__quality")
    ):
        if answer in SCENARIO_QUALITY.values:
            by_item.setdefault(object_id, []).append(SCENARIO_QUALITY.rank(answer))
    flagged = []
    for object_id, ranks in sorted(by_item.items()):
        ranks.sort()
        median_rank = ranks[(len(ranks) - 1) // 2]  # lower median: a tie leans to "poor"
        if median_rank <= poor:
            flagged.append(
                {
                    "scenario_id": object_id,
                    "median": SCENARIO_QUALITY.choices[median_rank].label,
                    "ratings": len(ranks),
                }
            )
    return flagged


def criterion_consensus_for(queue: RatingQueue):
    return (
        CriterionConsensus.objects.filter(queue=queue)
        .select_related("criterion", "criterion__item")
        .order_by("survives", "criterion__item__key", "criterion__position")
    )


def current_ratings_of(*, kinds, object_ids) -> list[tuple[str, int, int, dict]]:
    """(kind, rated object id, rater id, answers) of every current rating of ``kinds`` whose
    item rates one of ``object_ids`` (a list or a ``values("pk")`` subquery), in one query.

    Release-wide expert figures read all their kinds at once; undone ratings count nowhere, nor
    those of a blind queue still taking ratings (`kinds.holds.ratings_published`).
    """
    return list(
        ratings_published(Rating.objects.all())
        .filter(item__kind__in=list(kinds), item__object_id__in=object_ids)
        .values_list("item__kind", "item__object_id", "rater_id", "answers")
        .order_by("item__kind", "item__object_id", "rater_id", "pk")
    )


def seeded_panel_rater_ids(rater_ids: Iterable[int]) -> set[int]:
    """Which of these raters are the demo seed's simulated panel members, not people: figures
    built on their ratings must say so."""
    return set(
        get_user_model()
        .objects.filter(pk__in=list(rater_ids), email__iendswith=f"@{SEEDED_PANEL_DOMAIN}")
        .values_list("pk", flat=True)
    )


@dataclass(frozen=True)
class CalibrationItem:
    """One conversation of a calibration sample: its inclusion probability and the current
    expert verdicts on it (present or absent; empty until rated)."""

    conversation_id: int
    inclusion_probability: float
    verdicts: tuple[bool, ...]


def calibration_queue_for(run) -> RatingQueue | None:
    """The run's latest calibration queue (one sample feeds the estimator: probabilities of
    two separate draws do not combine into one known probability)."""
    return (
        RatingQueue.objects.filter(run=run, purpose=QueuePurpose.CALIBRATION)
        .order_by("-created_at", "-pk")
        .first()
    )


def calibration_items(queue: RatingQueue) -> list[CalibrationItem]:
    """Every item of a calibration queue with its current verdicts, in two queries. Only a
    calibration queue's items are read: triage and other queues' ratings never enter here; a
    calibration queue is blind, so its verdicts count once it stops taking ratings."""
    if queue.purpose != QueuePurpose.CALIBRATION:
        raise ValueError("only a calibration queue's ratings feed the calibrated rates")
    verdicts: dict[int, list[bool]] = defaultdict(list)
    rows = (
        ratings_published(Rating.objects.filter(queue=queue))
        .filter(answers__verdict__in=["present", "absent"])
        .values_list("item_id", "answers__verdict")
    )
    for item_id, verdict in rows:
        verdicts[item_id].append(verdict == "present")
    items = queue.items.filter(inclusion_probability__isnull=False).values_list(
        "pk", "object_id", "inclusion_probability"
    )
    return [
        CalibrationItem(object_id, probability, tuple(verdicts.get(pk, ())))
        for pk, object_id, probability in items
    ]


def calibration_ratings_stamp_sql() -> str:
    """The page cache's stamp part over calibration queues' ratings: how many, the last one and
    how many were undone, so a page showing calibrated rates never outlives a rating."""
    ratings = Rating._meta.db_table
    queues = RatingQueue._meta.db_table
    return (
        f"(SELECT COUNT(*) || '.' || COALESCE(MAX(r.id), 0) || '.' || COUNT(r.undone_at) "  # noqa: S608
        f"FROM {ratings} r JOIN {queues} q ON q.id = r.queue_id "
        f"WHERE q.purpose = '{QueuePurpose.CALIBRATION.value}')"
    )
