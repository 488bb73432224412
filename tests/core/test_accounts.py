import re

import pytest
from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse

from core.roles import Role, user_roles

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-unusual-passphrase-42"


def sign_up(client, email="clinician@example.org"):
    return client.post(
        reverse("account_signup"),
        {"email": email, "password1": PASSWORD, "password2": PASSWORD},
    )


def test_signup_makes_a_contributor_and_sends_a_verification_email(client):
    response = sign_up(client)
    assert response.status_code == 302
    user = get_user_model().objects.get(email="clinician@example.org")
    assert user_roles(user) == {Role.CONTRIBUTOR}
    assert not EmailAddress.objects.get(user=user).verified
    assert len(mail.outbox) == 1
    assert "/accounts/confirm-email/" in mail.outbox[0].body


def test_login_waits_for_verification_then_succeeds(client):
    sign_up(client)
    client.logout()
    response = client.post(
        reverse("account_login"), {"login": "clinician@example.org", "password": PASSWORD}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("account_email_verification_sent")
    assert "_auth_user_id" not in client.session

    link = re.search(r"https?://[^/]+(/accounts/confirm-email/\S+)", mail.outbox[-1].body).group(1)
    client.post(link)
    assert EmailAddress.objects.get(email="clinician@example.org").verified

    response = client.post(
        reverse("account_login"), {"login": "clinician@example.org", "password": PASSWORD}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("core:dashboard")
    assert client.get(reverse("core:dashboard")).status_code == 200


def test_signup_with_mismatched_passwords_keeps_the_email_and_explains(client):
    response = client.post(
        reverse("account_signup"),
        {"email": "keep-me@example.org", "password1": PASSWORD, "password2": PASSWORD + "x"},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert 'value="keep-me@example.org"' in page
    assert "same password" in page
    assert not get_user_model().objects.filter(email="keep-me@example.org").exists()


def test_pages_render_with_local_bootstrap_and_no_cdn(client):
    page = client.get(reverse("account_login")).content.decode()
    assert "/static/vendor/bootstrap/bootstrap.min.css" in page
    # Absolute addresses only for the page's own, in each language (hreflang wants them whole).
    elsewhere = re.findall(r'(?:src|href)="(https?://[^"]*)"', page)
    assert elsewhere
    assert all(url.startswith(settings.SITE_URL + "/") for url in elsewhere), elsewhere
