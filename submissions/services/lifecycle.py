"""A submission's life: create, edit, submit, withdraw, and drafting retries."""

from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.exceptions import ApplicationError
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
from .status import submission_status_set

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
# The one-line fields refused when they hide how they read, as the refusal names them.
SPOOFING_FIELDS = {
    # Translators: a submission's field, in "The title: <why it was refused>".
    "title": gettext_lazy("title"),
    # Translators: a submission's field (the name the contributor is credited under).
    "credit_name": gettext_lazy("credit name"),
}


def _check_fields(fields: dict) -> None:
    unknown = set(fields) - set(CONTENT_FIELDS)
    if unknown:
        raise ApplicationError(
            _("Unknown submission fields: %(items)s") % {"items": ", ".join(sorted(unknown))}
        )
    # The title becomes an email subject and a CSV cell: one line only.
    if LINE_BREAKS.search(fields.get("title") or ""):
        raise ApplicationError(_("The title must be a single line: remove the line break."))
    for field in SPOOFING_FIELDS:
        if problem := display_spoofing_message(fields.get(field) or ""):
            raise ApplicationError(
                _("The %(field)s: %(problem)s")
                % {"field": SPOOFING_FIELDS[field], "problem": problem}
            )


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
    saved_as_draft: bool = True,
    **fields,
) -> Submission:
    """A new draft. `saved_as_draft` False: the contributor pressed Submit, not Save draft,
    so the history records the submission that follows, not a save nobody asked for."""
    _check_fields(fields)
    submission = Submission.objects.create(
        contributor=contributor, creation_token=creation_token, **fields
    )
    submission.suggested_subareas.set(suggested_subareas)
    _set_citations(submission, citations)
    if saved_as_draft:
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
            _(
                "This submission is %(status)s and can no longer be edited. "
                "Withdraw it and start a new one, or wait for the reviewers' "
                "decision."
            )
            % {"status": submission.get_status_display().lower()}
        )
    for name, value in fields.items():
        setattr(submission, name, value)
    submission.save()
    if suggested_subareas is not None:
        submission.suggested_subareas.set(suggested_subareas)
    if citations is not None:
        _set_citations(submission, citations)
    return submission


def _check_complete(submission: Submission) -> None:
    values = {field: getattr(submission, field) for field in CONTENT_FIELDS}
    missing = submission_missing_for_submit(values)
    if missing:
        raise ApplicationError(
            _("Before submitting: %(missing)s Your draft is saved.")
            % {"missing": " ".join(missing.values())}
        )


@transaction.atomic
def submission_submit(*, submission: Submission, actor) -> Submission:
    """Hand the submission to the platform; metric drafting starts in the background."""
    submission = Submission.objects.select_for_update().get(pk=submission.pk)
    if submission.status not in EDITABLE_STATUSES:
        raise ApplicationError(
            _("Only drafts can be submitted; this one is %(status)s.")
            % {"status": submission.get_status_display().lower()}
        )
    _check_complete(submission)
    submission.submitted_at = timezone.now()
    submission.drafting_error = ""
    submission.save(update_fields=["submitted_at", "drafting_error", "updated_at"])
    submission_status_set(submission=submission, to_status=SubmissionStatus.SUBMITTED, actor=actor)
    _enqueue_drafting(submission)
    return submission


def _enqueue_drafting(submission: Submission) -> None:
    transaction.on_commit(
        lambda: submission_drafting_enqueue(submission_id=submission.pk), robust=True
    )


@transaction.atomic
def submission_withdraw(*, submission: Submission, actor, reason: str = "") -> Submission:
    if problem := control_character_message(reason):
        raise ApplicationError(_("The reason: %(problem)s") % {"problem": problem})
    submission = Submission.objects.select_for_update().get(pk=submission.pk)
    if submission.status in FINAL_STATUSES:
        raise ApplicationError(
            _("This submission is already %(status)s.")
            % {"status": submission.get_status_display().lower()}
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
        raise ApplicationError(_("Drafting can be retried only after it failed or stalled."))
    submission_status_set(
        submission=submission,
        to_status=SubmissionStatus.SUBMITTED,
        actor=actor,
        note="Drafting restarted.",
        notify=False,
    )
    _enqueue_drafting(submission)
    return submission


def submission_drafting_enqueue(*, submission_id: int) -> None:
    """Hand a submission to a drafting worker (after the commit that made it submitted)."""
    # The task module calls the drafting services: the one task ⇄ service pair of this app.
    from ..tasks import llm_draft_metric_candidates

    llm_draft_metric_candidates.delay(submission_id)
