"""A submission's life: create, edit, submit, withdraw, and every status change with its email."""

from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone

from core.exceptions import ApplicationError
from core.links import site_reverse
from core.mail import mail_send_safely
from core.validators import LINE_BREAKS, control_character_message, display_spoofing_message
from metrics_registry.models import Subarea

from .. import selectors
from ..citations import ParsedCitation
from ..completeness import submission_missing_for_submit
from ..models import (
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


def _check_fields(fields: dict) -> None:
    unknown = set(fields) - set(CONTENT_FIELDS)
    if unknown:
        raise ApplicationError(f"Unknown submission fields: {', '.join(sorted(unknown))}")
    # The title becomes an email subject and a CSV cell: one line only.
    if LINE_BREAKS.search(fields.get("title") or ""):
        raise ApplicationError("The title must be a single line: remove the line break.")
    for field in ("title", "credit_name"):
        if problem := display_spoofing_message(fields.get(field) or ""):
            raise ApplicationError(f"The {field.replace('_', ' ')}: {problem}")


def _set_citations(submission: Submission, citations: Iterable[ParsedCitation]) -> None:
    submission.citations.all().delete()
    Citation.objects.bulk_create(
        Citation(submission=submission, kind=c.kind, value=c.value, position=i)
        for i, c in enumerate(citations)
    )


def submission_create_once(
    *, contributor, creation_token: str, **kwargs
) -> tuple[Submission, bool]:
    """`submission_create` keyed by the form's token: (submission, created). A repeated or
    concurrent POST of the same form returns the submission the first one made."""
    existing = Submission.objects.filter(contributor=contributor, creation_token=creation_token)
    if creation_token and (found := existing.first()):
        return found, False
    try:
        return (
            submission_create(contributor=contributor, creation_token=creation_token, **kwargs),
            True,
        )
    except IntegrityError:
        # The other request won the race between our check and our insert.
        return existing.get(), False


@transaction.atomic
def submission_create(
    *,
    contributor,
    citations: Iterable[ParsedCitation] = (),
    suggested_subareas: Iterable[Subarea] = (),
    creation_token: str = "",
    **fields,
) -> Submission:
    _check_fields(fields)
    submission = Submission.objects.create(
        contributor=contributor, creation_token=creation_token, **fields
    )
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
    _check_fields(fields)
    submission = Submission.objects.select_for_update().get(pk=submission.pk)
    if submission.status not in EDITABLE_STATUSES:
        raise ApplicationError(
            f"This submission is {submission.get_status_display().lower()} and can no longer be "
            "edited. Withdraw it and start a new one, or wait for the reviewers' decision."
        )
    for name, value in fields.items():
        setattr(submission, name, value)
    submission.save()
    if suggested_subareas is not None:
        submission.suggested_subareas.set(suggested_subareas)
    if citations is not None:
        _set_citations(submission, citations)
    return submission


# The changes a contributor hears about: the receipt, and each point where they can act or learn
# the outcome. Drafting and "in review" follow a submission within seconds and need nothing from
# them; the status page shows them live.
NOTIFIED_STATUSES = frozenset(
    {
        SubmissionStatus.SUBMITTED,
        SubmissionStatus.DRAFTING_FAILED,
        SubmissionStatus.CHANGES_REQUESTED,
        SubmissionStatus.ACCEPTED,
        SubmissionStatus.DECLINED,
    }
)


def submission_status_set(
    *, submission: Submission, to_status: str, actor=None, note: str = "", notify: bool = True
) -> Submission:
    """Move a submission to a new status, record the event, and email the contributor."""
    from_status = submission.status
    submission.status = to_status
    submission.save(update_fields=["status", "updated_at"])
    event = SubmissionEvent.objects.create(
        submission=submission, from_status=from_status, to_status=to_status, actor=actor, note=note
    )
    if notify and to_status != from_status and to_status in NOTIFIED_STATUSES:
        # robust: a failing email is logged and never stops the hooks after it (drafting).
        transaction.on_commit(lambda: submission_notify_status(event_id=event.pk), robust=True)
    return submission


# What each notified change means to the contributor, in the words of a person writing to them.
EMAIL_SUBJECTS = {
    SubmissionStatus.SUBMITTED: "We received your submission",
    SubmissionStatus.DRAFTING_FAILED: "Drafting metrics from your submission did not succeed",
    SubmissionStatus.CHANGES_REQUESTED: "Please revise your submission",
    SubmissionStatus.ACCEPTED: "Your submission was accepted",
    SubmissionStatus.DECLINED: "A decision on your submission",
}


def submission_notify_status(*, event_id: int) -> None:
    """Email the contributor about one status change (the event, not the current status)."""
    event = SubmissionEvent.objects.select_related("submission__contributor").get(pk=event_id)
    submission = event.submission
    if not submission.contributor.email:
        return
    context = {
        "submission": submission,
        "event": event,
        "status_url": site_reverse("submissions:detail", pk=submission.pk),
        "edit_url": site_reverse("submissions:edit", pk=submission.pk),
        "outcomes": selectors.submission_outcomes(submission)
        if event.to_status in (SubmissionStatus.ACCEPTED, SubmissionStatus.DECLINED)
        else [],
    }
    headline = EMAIL_SUBJECTS.get(event.to_status, "News of your submission")
    mail_send_safely(
        subject=f"[ImpactBench] {headline}: {submission.title[:60]}",
        message=render_to_string("submissions/email/status_changed.txt", context),
        recipient_list=[submission.contributor.email],
    )


def _check_complete(submission: Submission) -> None:
    values = {field: getattr(submission, field) for field in CONTENT_FIELDS}
    missing = submission_missing_for_submit(values)
    if missing:
        raise ApplicationError(
            "Before submitting: " + " ".join(missing.values()) + " Your draft is saved."
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
    # The task module imports the services (tasks → drafting → services): a real cycle.
    from ..tasks import llm_draft_metric_candidates

    transaction.on_commit(lambda: llm_draft_metric_candidates.delay(submission.pk), robust=True)


@transaction.atomic
def submission_withdraw(*, submission: Submission, actor, reason: str = "") -> Submission:
    if problem := control_character_message(reason):
        raise ApplicationError(f"The reason: {problem}")
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


# --- drafting retries -------------------------------------------------------------------------


@transaction.atomic
def submission_retry_drafting(*, submission: Submission, actor) -> Submission:
    """Start drafting again after a failure, or after a drafting task went silent."""
    submission = Submission.objects.select_for_update().get(pk=submission.pk)
    stale = (
        submission.status in (SubmissionStatus.SUBMITTED, SubmissionStatus.DRAFTING)
        and submission.updated_at < selectors.drafting_stale_before()
    )
    if submission.status != SubmissionStatus.DRAFTING_FAILED and not stale:
        raise ApplicationError("Drafting can be retried only after it failed or stalled.")
    submission_status_set(
        submission=submission,
        to_status=SubmissionStatus.SUBMITTED,
        actor=actor,
        note="Drafting restarted.",
        notify=False,
    )
    _enqueue_drafting(submission)
    return submission
