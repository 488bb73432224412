"""The public contact and propose-a-benchmark form: store, rate-limit, triage, answer by email.

Spam protection without a third-party service: a honeypot field the form drops silently, and a
per-sender limit counted from stored enquiries (so it holds across web processes with no cache).
"""

import hashlib
import hmac

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext
from django.utils.translation import gettext as _

from core.exceptions import ApplicationError

from .models import Enquiry, EnquiryStatus

ENQUIRIES_PER_HOUR = 3


def client_hash(address: str) -> str:
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, (address or "unknown").encode(), hashlib.sha256).hexdigest()


def enquiry_create(*, client_address: str, **fields) -> Enquiry:
    """Store an enquiry, unless this sender (address or email) sent too many in the last hour."""
    hashed = client_hash(client_address)
    since = timezone.now() - timezone.timedelta(hours=1)
    recent = Enquiry.objects.filter(created_at__gte=since)
    if (
        recent.filter(client_hash=hashed).count() >= ENQUIRIES_PER_HOUR
        or recent.filter(email__iexact=fields.get("email", "")).count() >= ENQUIRIES_PER_HOUR
    ):
        raise ApplicationError(
            _(
                "We have received several messages from you within the hour. Please wait a little "
                "before sending another; nothing you wrote is lost."
            )
        )
    if not ((fields.get("message") or "").strip() or (fields.get("benchmark_url") or "").strip()):
        raise ApplicationError(_("Write a message or give the address of the benchmark."))
    return Enquiry.objects.create(client_hash=hashed, **fields)


def enquiry_list(*, status: str = EnquiryStatus.NEW) -> QuerySet[Enquiry]:
    enquiries = Enquiry.objects.select_related("answered_by")
    return enquiries.filter(status=status) if status else enquiries


@transaction.atomic
def enquiry_answer(*, enquiry: Enquiry, actor, answer: str) -> Enquiry:
    """Email the answer to the sender and record it; the email goes out after commit."""
    answer = (answer or "").strip()
    if not answer:
        raise ApplicationError(_("Write the answer to send."))
    enquiry = Enquiry.objects.select_for_update().get(pk=enquiry.pk)
    if enquiry.status != EnquiryStatus.NEW:
        raise ApplicationError(
            _("This enquiry is already %(status)s.")
            % {"status": enquiry.get_status_display().lower()}
        )
    enquiry.answer = answer
    enquiry.status = EnquiryStatus.ANSWERED
    enquiry.answered_by = actor
    enquiry.answered_at = timezone.now()
    enquiry.save()
    transaction.on_commit(lambda: _send_answer(enquiry.pk))
    return enquiry


def _send_answer(enquiry_id: int) -> None:
    enquiry = Enquiry.objects.get(pk=enquiry_id)
    with translation.override(enquiry.language or settings.LANGUAGE_CODE):
        send_mail(
            subject=gettext("[ImpactBench] Re: your message"),
            message=render_to_string("submissions/email/enquiry_answer.txt", {"enquiry": enquiry}),
            from_email=None,
            recipient_list=[enquiry.email],
        )


@transaction.atomic
def enquiry_close(*, enquiry: Enquiry, actor) -> Enquiry:
    """Close without answering (spam, a duplicate); recorded with who closed it."""
    enquiry = Enquiry.objects.select_for_update().get(pk=enquiry.pk)
    if enquiry.status != EnquiryStatus.NEW:
        raise ApplicationError(
            _("This enquiry is already %(status)s.")
            % {"status": enquiry.get_status_display().lower()}
        )
    enquiry.status = EnquiryStatus.CLOSED
    enquiry.answered_by = actor
    enquiry.answered_at = timezone.now()
    enquiry.save()
    return enquiry
