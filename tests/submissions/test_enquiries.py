"""The public contact form: stored for triage, honeypot, rate limit, answered by email."""

import re

import pytest
from django.core import mail
from django.urls import reverse

from submissions.enquiries import ENQUIRIES_PER_HOUR
from submissions.models import Enquiry, EnquiryStatus

pytestmark = pytest.mark.django_db

FORM = {
    "kind": "benchmark",
    "name": "Dr. Ana Ruiz",
    "email": "ana@example.org",
    "affiliation": "University clinic",
    "benchmark_url": "https://example.org/companion-harms",
    "message": "Our harm taxonomy for companion apps could fit your Social area.",
    "website": "",
}


def test_anyone_can_propose_a_benchmark_without_an_account(client):
    page = client.get(reverse("contact:form") + "?kind=benchmark").content.decode()
    assert re.search(r'value="benchmark"[^>]*checked', page)
    assert "hp-field" in page
    response = client.post(reverse("contact:form"), FORM)
    assert response.status_code == 200
    assert "your message is in" in response.content.decode()
    enquiry = Enquiry.objects.get()
    assert (enquiry.name, enquiry.kind, enquiry.status) == ("Dr. Ana Ruiz", "benchmark", "new")
    assert len(enquiry.client_hash) == 64
    assert "127.0.0.1" not in enquiry.client_hash


def test_the_honeypot_stores_nothing_but_looks_the_same(client):
    response = client.post(reverse("contact:form"), {**FORM, "website": "http://spam.example"})
    assert response.status_code == 200
    assert "your message is in" in response.content.decode()
    assert not Enquiry.objects.exists()


def test_a_sender_is_rate_limited_and_keeps_their_text(client):
    for n in range(ENQUIRIES_PER_HOUR):
        client.post(reverse("contact:form"), {**FORM, "email": f"a{n}@example.org"})
    response = client.post(reverse("contact:form"), {**FORM, "message": "Once more, with feeling."})
    assert response.status_code == 429
    page = response.content.decode()
    assert "several messages from you within the hour" in page
    assert "Once more, with feeling." in page
    assert Enquiry.objects.count() == ENQUIRIES_PER_HOUR


def test_a_message_or_a_link_is_needed(client):
    response = client.post(reverse("contact:form"), {**FORM, "message": "", "benchmark_url": ""})
    assert response.status_code == 400
    assert response.context["form"].errors["message"]


def test_researchers_triage_and_answer_by_email(
    client, client_for, researcher, contributor, django_capture_on_commit_callbacks
):
    client.post(reverse("contact:form"), FORM)
    enquiry = Enquiry.objects.get()
    assert client_for(contributor).get(reverse("submissions:enquiry-list")).status_code == 403
    researcher_client = client_for(researcher)
    listing = researcher_client.get(reverse("submissions:enquiry-list")).content.decode()
    assert "Dr. Ana Ruiz" in listing
    detail = reverse("submissions:enquiry-detail", args=[enquiry.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(
            detail, {"action": "answer", "answer": "Thank you, we will import it in 1.1."}
        )
    assert response.status_code == 302
    enquiry.refresh_from_db()
    assert enquiry.status == EnquiryStatus.ANSWERED
    assert enquiry.answered_by == researcher
    assert mail.outbox[-1].to == ["ana@example.org"]
    assert "we will import it in 1.1" in mail.outbox[-1].body
    assert "companion apps" in mail.outbox[-1].body  # their message quoted
    again = researcher_client.post(detail, {"action": "answer", "answer": "Twice?"})
    assert again.status_code == 400
    assert len(mail.outbox) == 1
