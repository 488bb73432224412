"""Rating exports of a queue: one row per rating, pseudonymous raters."""

from collections.abc import Iterator

from django.utils.crypto import salted_hmac

from ..kinds import FORMS
from ..models import QueueItem, Rating, RatingQueue

EXPORT_COLUMNS_BASE = [
    "queue_id",
    "kind",
    "item_id",
    "object_id",
    "object_id_b",
    "metric_key",
    "subarea",
    "age_context",
    "model",
    "rater",
    "submitted_at",
    "seconds_spent",
    "undone",
]


def rater_pseudonym(queue: RatingQueue, rater_id: int) -> str:
    """A stable name for a rater within one queue that reveals neither the account nor links
    the same rater across queues: an HMAC keyed by the site secret, salted per queue."""
    digest = salted_hmac("review.rater-pseudonym", f"{queue.pk}:{rater_id}").hexdigest()
    return f"rater-{digest[:12]}"


def export_question_names(queue: RatingQueue) -> list[str]:
    names = [q.name for q in FORMS.get(queue.kind, ())]
    extra = set()
    for answers in Rating.objects.filter(queue=queue).values_list("answers", flat=True):
        extra.update(set(answers) - set(names))
    return names + sorted(extra)


def export_header(queue: RatingQueue) -> list[str]:
    return [*EXPORT_COLUMNS_BASE, *export_question_names(queue), "comment"]


def export_rows(queue: RatingQueue) -> Iterator[list]:
    names = export_question_names(queue)
    ratings = (
        Rating.objects.filter(queue=queue)
        .select_related("item", "item__metric")
        .order_by("item__position", "submitted_at", "id")
    )
    for rating in ratings.iterator(chunk_size=2000):
        item: QueueItem = rating.item
        yield [
            queue.pk,
            item.kind,
            item.pk,
            item.object_id,
            item.object_id_b or "",
            item.metric.key if item.metric_id else "",
            item.strata.get("subarea", ""),
            item.strata.get("age_context", ""),
            item.strata.get("model", ""),
            # Pseudonymous: the export circulates among researchers, rater identities do not.
            rater_pseudonym(queue, rating.rater_id),
            rating.submitted_at.isoformat(),
            rating.seconds_spent,
            "yes" if rating.undone else "no",
            *[rating.answers.get(name, "") for name in names],
            rating.comment,
        ]
