"""`seed_demo` creates the demo accounts once, keeps what their users changed, and they sign in."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from core.demo import DEMO_ACCOUNTS
from core.roles import user_roles

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="seeds the demo"),
    pytest.mark.embedded,
]


def test_seed_demo_is_idempotent_and_keeps_user_changes(django_user_model):
    call_command("seed_demo", verbosity=0)
    user = django_user_model.objects.get(email=DEMO_ACCOUNTS[0].email)
    user.first_name = "Changed by the user"
    user.save()
    call_command("seed_demo", verbosity=0)
    assert django_user_model.objects.filter(email__endswith="@demo.impactbench.org").count() == len(
        DEMO_ACCOUNTS
    )
    user.refresh_from_db()
    assert user.first_name == "Changed by the user"
    for account in DEMO_ACCOUNTS:
        assert user_roles(django_user_model.objects.get(email=account.email)) == set(account.roles)


def test_demo_accounts_can_sign_in(client):
    call_command("seed_demo", verbosity=0)
    response = client.post(
        reverse("account_login"), {"login": DEMO_ACCOUNTS[3].email, "password": "impactbench-demo"}
    )
    assert response.status_code == 302
    assert client.get(reverse("admin:index")).status_code == 200
