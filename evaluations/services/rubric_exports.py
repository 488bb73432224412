"""A run's rubric responses as records of the run's JSONL export (`run_exports`)."""

from collections.abc import Iterator

from django.db.models import Prefetch

from ..models import EvaluationRun, RubricGrade, RubricResponse

CHUNK = 200


def rubric_response_record(response: RubricResponse) -> dict:
    return {
        "type": "rubric_response",
        "id": response.pk,
        "item": response.item.key,
        "language": response.item.language,
        "model": response.target.name,
        "status": response.status,
        "reply": response.reply,
        "score": response.score,
        "grades": [
            {
                "criterion": grade.criterion.text,
                "points": grade.criterion.points,
                "dimension": grade.criterion.dimension,
                "met": grade.met,
                "justification": grade.justification,
                "consensus": grade.criterion.consensus_state,
            }
            for grade in response.grades.all()
        ],
        "offline_demo": response.is_offline,
    }


def run_rubric_languages(run: EvaluationRun) -> set[str]:
    """The languages of the items the run's rubric responses answer."""
    responses = RubricResponse.objects.filter(run=run).order_by()
    return set(responses.values_list("item__language", flat=True).distinct())


def run_rubric_records(run: EvaluationRun, *, language: str = "") -> Iterator[dict]:
    """A run's rubric responses as records of the run's JSONL export; with a ``language``,
    those to items in it alone."""
    responses = RubricResponse.objects.filter(run=run)
    if language:
        responses = responses.filter(item__language=language)
    responses = (
        responses.select_related("item", "target")
        .prefetch_related(
            Prefetch(
                "grades",
                queryset=RubricGrade.objects.select_related("criterion").order_by(
                    "criterion__position"
                ),
            )
        )
        .order_by("pk")
    )
    return (rubric_response_record(r) for r in responses.iterator(CHUNK))
