"""Writing submissions: create, edit, submit, withdraw, and every status change with its email."""

from collections.abc import Iterable

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from core.exceptions import ApplicationError
from metrics_registry.models import Subarea

from .citations import ParsedCitation
from .models import (
    EDITABLE_STATUSES,
    FINAL_STATUSES,
    Citation,
    Submission,
    SubmissionEvent,
    SubmissionStatus,
)

CONTENT_FIELDS = (
    "title",
    "behavior",
    "context",
    "supportive_examples",
    "harmful_examples",
    "justification",
    "age_context",
    "expertise",
    "credit_name",
)


def _set_citations(submission: Submission, citations: Iterable[ParsedCitation]) -> None:
    submission.citations.all().delete()
    Citation.objects.bulk_create(
        Citation(submission=submission, kind=c.kind, value=c.value, position=i)
        for i, c in enumerate(citations)
    )


@transaction.atomic
def submission_create(
    *,
    contributor,
    citations: Iterable[ParsedCitation] = (),
    suggested_subareas: Iterable[Subarea] = (),
    **fields,
) -> Submission:
    unknown = set(fields) - set(CONTENT_FIELDS)
    if unknown:
        raise ApplicationError(f"Unknown submission fields: {', '.join(sorted(unknown))}")
    submission = Submission.objects.create(contributor=contributor, **fields)
    submission.suggested_subareas.set(suggested_subareas)
    _set_citations(submission, citations)
    SubmissionEvent.objects.create(
        submission=submission,
        to_status=SubmissionStatus.DRAFT,
        actor=contributor,
        note="Saved as a draft.",
    )
    return submission


@transaction.atomic
def submission_update(
    *,
    submission: Submission,
    actor,
    citations: Iterable[ParsedCitation] | None = None,
    suggested_subareas: Iterable[Subarea] | None = None,
    **fields,
) -> Submission:
    submission = Submission.objects.select_for_update().get(pk=submission.pk)
    if submission.status not in EDITABLE_STATUSES:
        raise ApplicationError(
            f"This submission is {submission.get_status_display().lower()} and can no longer be "
            "edited. Withdraw it and start a new one, or wait for the reviewers' decision."
        )
    for name, value in fields.items():
        if name not in CONTENT_FIELDS:
            raise ApplicationError(f"Unknown submission field: {name}")
        setattr(submission, name, value)
    submission.save()
    if suggested_subareas is not None:
        submission.suggested_subareas.set(suggested_subareas)
    if citations is not None:
        _set_citations(submission, citations)
    return submission


def submission_status_set(
    *, submission: Submission, to_status: str, actor=None, note: str = "", notify: bool = True
) -> Submission:
    """Move a submission to a new status, record the event, and email the contributor."""
    from_status = submission.status
    submission.status = to_status
    submission.save(update_fields=["status", "updated_at"])
    SubmissionEvent.objects.create(
        submission=submission, from_status=from_status, to_status=to_status, actor=actor, note=note
    )
    if notify and to_status != from_status:
        transaction.on_commit(lambda: submission_notify_status(submission_id=submission.pk))
    return submission


def submission_notify_status(*, submission_id: int) -> None:
    submission = Submission.objects.select_related("contributor").get(pk=submission_id)
    if not submission.contributor.email:
        return
    event = submission.events.order_by("-created_at", "-id").first()
    context = {
        "submission": submission,
        "event": event,
        "status_url": settings.SITE_URL.rstrip("/")
        + reverse("submissions:detail", kwargs={"pk": submission.pk}),
    }
    send_mail(
        subject=f"[ImpactBench] Your submission is now {submission.get_status_display().lower()}: "
        f"{submission.title[:60]}",
        message=render_to_string("submissions/email/status_changed.txt", context),
        from_email=None,
        recipient_list=[submission.contributor.email],
    )


def _check_complete(submission: Submission) -> None:
    missing = [
        label
        for field, label in (
            ("title", "a short title"),
            ("behavior", "the behaviour of interest"),
            ("context", "the context in which it arises"),
            ("justification", "a justification"),
        )
        if not getattr(submission, field).strip()
    ]
    if not (submission.supportive_examples.strip() or submission.harmful_examples.strip()):
        missing.append("at least one example of a supportive or a harmful response")
    if missing:
        raise ApplicationError(
            "Before submitting, please add " + ", ".join(missing) + ". Your draft is saved."
        )


@transaction.atomic
def submission_submit(*, submission: Submission, actor) -> Submission:
    """Hand the submission to the platform; metric drafting starts in the background."""
    submission = Submission.objects.select_for_update().get(pk=submission.pk)
    if submission.status not in EDITABLE_STATUSES:
        raise ApplicationError(
            f"Only drafts can be submitted; this one is {submission.get_status_display().lower()}."
        )
    _check_complete(submission)
    submission.submitted_at = timezone.now()
    submission.drafting_error = ""
    submission.save(update_fields=["submitted_at", "drafting_error", "updated_at"])
    submission_status_set(submission=submission, to_status=SubmissionStatus.SUBMITTED, actor=actor)
    _enqueue_drafting(submission)
    return submission


def _enqueue_drafting(submission: Submission) -> None:
    from .tasks import llm_draft_metric_candidates

    transaction.on_commit(lambda: llm_draft_metric_candidates.delay(submission.pk))


@transaction.atomic
def submission_withdraw(*, submission: Submission, actor, reason: str = "") -> Submission:
    submission = Submission.objects.select_for_update().get(pk=submission.pk)
    if submission.status in FINAL_STATUSES:
        raise ApplicationError(
            f"This submission is already {submission.get_status_display().lower()}."
        )
    return submission_status_set(
        submission=submission,
        to_status=SubmissionStatus.WITHDRAWN,
        actor=actor,
        note=reason or "Withdrawn by the contributor.",
    )
