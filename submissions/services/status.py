"""A submission's status changes: each one recorded as an event, and the contributor emailed
about the changes they can act on or learn an outcome from."""

from django.db import transaction
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy

from core.links import site_reverse
from core.mail import mail_send_safely
from core.services import recipient_language

from .. import selectors
from ..models import Submission, SubmissionEvent, SubmissionStatus

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
    SubmissionStatus.SUBMITTED: gettext_lazy("We received your submission"),
    SubmissionStatus.DRAFTING_FAILED: gettext_lazy(
        "Drafting metrics from your submission did not succeed"
    ),
    SubmissionStatus.CHANGES_REQUESTED: gettext_lazy("Please revise your submission"),
    SubmissionStatus.ACCEPTED: gettext_lazy("Your submission was accepted"),
    SubmissionStatus.DECLINED: gettext_lazy("A decision on your submission"),
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
    # Written in the language the contributor reads the site in.
    with translation.override(recipient_language(submission.contributor)):
        headline = EMAIL_SUBJECTS.get(event.to_status) or gettext("News of your submission")
        mail_send_safely(
            subject=f"[ImpactBench] {headline}: {submission.title[:60]}",
            message=render_to_string("submissions/email/status_changed.txt", context),
            recipient_list=[submission.contributor.email],
        )
