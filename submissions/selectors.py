from django.db.models import QuerySet

from .models import Submission


def submission_list_for(*, user) -> QuerySet[Submission]:
    """Submissions a user may see: their own; researchers and maintainers see all."""
    return Submission.objects.visible_to(user).select_related("contributor")


def submission_list_own(*, user) -> QuerySet[Submission]:
    return Submission.objects.filter(contributor=user).prefetch_related("suggested_subareas")
