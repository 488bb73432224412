"""Sending platform email: a subject that is always one header-safe line, and a send that can
never fail the action that caused it (the failure is logged; the user's change stands)."""

import logging

from django.core.mail import send_mail

from .validators import single_line_text

logger = logging.getLogger(__name__)

MAX_SUBJECT_LENGTH = 200


def email_subject(*parts: str) -> str:
    """One line from `parts`: line breaks and control characters become spaces, then trimmed."""
    subject = single_line_text(" ".join(part for part in parts if part))
    if len(subject) > MAX_SUBJECT_LENGTH:
        subject = subject[: MAX_SUBJECT_LENGTH - 1].rstrip() + "…"
    return subject


def mail_send_safely(*, subject: str, message: str, recipient_list: list[str]) -> bool:
    """Send one message; True when sent. Any failure (bad header, SMTP down) is logged."""
    try:
        send_mail(
            subject=email_subject(subject),
            message=message,
            from_email=None,
            recipient_list=recipient_list,
        )
    except Exception:
        logger.exception("Email %r to %s could not be sent", subject[:80], recipient_list)
        return False
    return True
