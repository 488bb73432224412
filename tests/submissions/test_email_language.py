"""Emails go out in the language their reader uses the site in: a contributor's choice in the
footer's switch (kept only from their own signed-in page), an enquirer's page language."""

import re

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from core.models import InterfaceLanguage
from core.services import interface_language_remember, recipient_language
from submissions import services
from submissions.models import Enquiry, SubmissionStatus
from tests.submissions.factories import SubmissionFactory

pytestmark = pytest.mark.django_db

FORM = {
    "kind": "benchmark",
    "name": "Dra. Ana Ruiz",
    "email": "ana@example.org",
    "affiliation": "Clínica universitaria",
    "benchmark_url": "https://example.org/companion-harms",
    "message": "Nuestra taxonomía de daños podría encajar en su área social.",
    "website": "",
}


def _status_email(contributor, django_capture_on_commit_callbacks):
    submission = SubmissionFactory(contributor=contributor, title="Secretos con adolescentes")
    with django_capture_on_commit_callbacks(execute=True):
        services.submission_status_set(
            submission=submission,
            to_status=SubmissionStatus.CHANGES_REQUESTED,
            note="Añada un ejemplo concreto.",
        )
    return mail.outbox[-1]


def test_a_contributor_who_reads_the_site_in_spanish_gets_spanish_email(
    contributor, django_capture_on_commit_callbacks
):
    interface_language_remember(user=contributor, language="es")
    message = _status_email(contributor, django_capture_on_commit_callbacks)
    assert (
        message.subject == "[ImpactBench] Revise su propuesta, por favor: Secretos con adolescentes"
    )
    assert "le pide que revise su propuesta «Secretos con adolescentes»" in message.body
    assert "Añada un ejemplo concreto." in message.body  # the researcher's note, as written
    assert "Puede seguirla aquí:" in message.body
    assert "Please revise" not in message.body


def test_without_a_choice_the_email_is_in_the_sites_default_language(
    contributor, django_capture_on_commit_callbacks, settings
):
    assert recipient_language(contributor) == settings.LANGUAGE_CODE == "en"
    message = _status_email(contributor, django_capture_on_commit_callbacks)
    assert message.subject.startswith("[ImpactBench] Please revise your submission:")
    assert "asks you to revise your submission" in message.body


def test_the_switch_remembers_a_signed_in_choice_sent_with_the_pages_token(contributor):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(contributor)
    page = browser.get(reverse("core:dashboard")).content.decode()
    # The footer's form carries the page's token for a signed-in person.
    switcher = page[page.index('data-testid="language-switcher"') :]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', switcher).group(1)
    response = browser.post(
        reverse("set_language"),
        {"language": "es", "next": "/", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    assert InterfaceLanguage.objects.get(user=contributor).language == "es"


def test_a_forged_switch_changes_the_browser_language_but_not_the_emails(contributor):
    """Another site can post the footer's form (it has no token on signed-out pages), but what
    a signed-in person's emails are written in changes only from their own page."""
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(contributor)
    response = browser.post(reverse("set_language"), {"language": "es", "next": "/"})
    assert response.status_code == 302
    assert response.cookies["django_language"].value == "es"
    assert not InterfaceLanguage.objects.filter(user=contributor).exists()


def test_a_language_the_site_does_not_speak_is_not_kept(contributor):
    assert interface_language_remember(user=contributor, language="xx") is False
    assert recipient_language(contributor) == "en"


def test_an_enquiry_written_from_a_spanish_page_is_answered_in_spanish(
    client, client_for, researcher, django_capture_on_commit_callbacks
):
    client.post(reverse("contact:form"), FORM, HTTP_ACCEPT_LANGUAGE="es")
    enquiry = Enquiry.objects.get()
    assert enquiry.language == "es"
    with django_capture_on_commit_callbacks(execute=True):
        client_for(researcher).post(
            reverse("submissions:enquiry-detail", args=[enquiry.pk]),
            {"action": "answer", "answer": "Gracias, la importaremos en la 1.1."},
        )
    message = mail.outbox[-1]
    assert message.subject == "[ImpactBench] Re: su mensaje"
    assert message.body.startswith("Hola, Dra. Ana Ruiz:")
    assert "gracias por escribir a ImpactBench. Nuestra respuesta:" in message.body
    assert "Gracias, la importaremos en la 1.1." in message.body


def test_an_enquiry_from_an_english_page_is_answered_in_english(
    client, client_for, researcher, django_capture_on_commit_callbacks
):
    client.post(reverse("contact:form"), FORM, HTTP_ACCEPT_LANGUAGE="en")
    enquiry = Enquiry.objects.get()
    assert enquiry.language == "en"
    with django_capture_on_commit_callbacks(execute=True):
        client_for(researcher).post(
            reverse("submissions:enquiry-detail", args=[enquiry.pk]),
            {"action": "answer", "answer": "Thank you."},
        )
    assert mail.outbox[-1].subject == "[ImpactBench] Re: your message"
    assert mail.outbox[-1].body.startswith("Hello Dra. Ana Ruiz,")
