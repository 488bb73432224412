from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from core.links import site_reverse

from .models import CandidateStatus, MetricCandidate, Submission


def drafting_stale_before() -> datetime:
    """The one rule for a lost drafting task: its submission, still waiting for drafting or
    being drafted, has not changed since this moment (SUBMISSION_STUCK_AFTER_SECONDS ago)."""
    return timezone.now() - timedelta(seconds=settings.SUBMISSION_STUCK_AFTER_SECONDS)


def submission_list_for(*, user) -> QuerySet[Submission]:
    """Submissions a user may see: their own; researchers and maintainers see all."""
    return Submission.objects.visible_to(user).select_related("contributor")


def submission_list_own(*, user) -> QuerySet[Submission]:
    return Submission.objects.filter(contributor=user).prefetch_related("suggested_subareas")


def candidate_list_for_review(*, status: str = "pending") -> QuerySet:
    candidates = MetricCandidate.objects.select_related(
        "submission", "label_category", "metric"
    ).prefetch_related("subareas")
    if status:
        candidates = candidates.filter(status=status)
    return candidates.order_by("submission__submitted_at", "submission_id", "position")


def candidate_changes(candidate) -> QuerySet:
    return candidate.changes.select_related("actor").order_by("-created_at", "-id")


def submission_outcomes(submission: Submission) -> list[dict]:
    """What became of each drafted metric: accepted as which registry metric, or why not.

    Drafts superseded by a request for changes are left out; they were never decided.
    """
    outcomes = []
    decided = submission.candidates.filter(
        status__in=[CandidateStatus.ACCEPTED, CandidateStatus.REJECTED]
    ).select_related("metric")
    for candidate in decided.order_by("position"):
        metric = candidate.metric if candidate.status == CandidateStatus.ACCEPTED else None
        outcomes.append(
            {
                "name": candidate.short_name,
                "accepted": metric is not None,
                "metric_key": metric.key if metric else "",
                "metric_url": site_reverse("metrics_registry:metric_detail", key=metric.key)
                if metric
                else "",
                "reason": candidate.review_reason,
            }
        )
    return outcomes
