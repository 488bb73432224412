from rest_framework import generics

from ..selectors import submission_list_for
from .permissions import SignedInReadOnly
from .serializers import SubmissionOutput


class SubmissionApiMixin:
    permission_classes = [SignedInReadOnly]
    serializer_class = SubmissionOutput

    def get_queryset(self):
        return (
            submission_list_for(user=self.request.user)
            .prefetch_related(
                "citations",
                "suggested_subareas",
                "candidates__subareas",
                "candidates__label_category",
                "candidates__metric",
            )
            .order_by("-updated_at", "-id")
        )


class SubmissionListApi(SubmissionApiMixin, generics.ListAPIView):
    """Your submissions (researchers and maintainers: all submissions)."""


class SubmissionDetailApi(SubmissionApiMixin, generics.RetrieveAPIView):
    """One submission with its citations and drafted candidates."""
