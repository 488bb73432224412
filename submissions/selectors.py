from django.db.models import QuerySet

from .models import Submission


def submission_list_for(*, user) -> QuerySet[Submission]:
    """Submissions a user may see: their own; researchers and maintainers see all."""
    return Submission.objects.visible_to(user).select_related("contributor")


def submission_list_own(*, user) -> QuerySet[Submission]:
    return Submission.objects.filter(contributor=user).prefetch_related("suggested_subareas")


def candidate_list_for_review(*, status: str = "pending") -> QuerySet:
    from .models import MetricCandidate

    candidates = MetricCandidate.objects.select_related(
        "submission", "label_category", "metric"
    ).prefetch_related("subareas")
    if status:
        candidates = candidates.filter(status=status)
    return candidates.order_by("submission__submitted_at", "submission_id", "position")


def candidate_changes(candidate) -> QuerySet:
    return candidate.changes.select_related("actor").order_by("-created_at", "-id")
