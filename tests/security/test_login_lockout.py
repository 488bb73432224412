"""One sign-in for the site and the admin, with one lockout kept in a shared cache."""

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.db import connection
from django.test import override_settings
from django.urls import reverse

from core.roles import Role
from impactbench_site.settings.base import default_cache_url
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

PASSWORD = "correct-horse-battery"


@pytest.fixture
def maintainer_account():
    return UserFactory(email="m@example.org", username="m@example.org", roles=[Role.MAINTAINER])


def _fail_five_times(client, email):
    for _ in range(5):
        client.post(reverse("account_login"), {"login": email, "password": "wrong-password"})


def test_the_admin_login_page_sends_people_to_the_email_sign_in(client):
    response = client.get(reverse("admin:login"), {"next": "/admin/llm/"})
    assert response.status_code == 302
    assert response["Location"] == reverse("account_login") + "?next=%2Fadmin%2Fllm%2F"
    response = client.get(reverse("admin:login"), {"next": "https://evil.example/"})
    assert response["Location"] == reverse("account_login") + "?next=%2Fadmin%2F"


def test_posting_a_correct_password_to_the_admin_login_signs_nobody_in(client, maintainer_account):
    response = client.post(
        reverse("admin:login"), {"username": "m@example.org", "password": PASSWORD}
    )
    assert response.status_code == 302
    assert SESSION_KEY not in client.session
    assert client.get(reverse("admin:index")).status_code == 302


def test_the_admin_login_cannot_be_used_to_guess_passwords(client):
    # Staff: the account the old admin form signed in, with no limit on failures.
    UserFactory(email="s@example.org", username="s@example.org", is_staff=True, is_superuser=True)
    for _ in range(8):
        client.post(reverse("admin:login"), {"username": "s@example.org", "password": "guess"})
    client.post(reverse("admin:login"), {"username": "s@example.org", "password": PASSWORD})
    assert SESSION_KEY not in client.session


def test_after_the_lockout_neither_sign_in_route_lets_the_right_password_in(client):
    UserFactory(email="s@example.org", username="s@example.org", is_staff=True, is_superuser=True)
    _fail_five_times(client, "s@example.org")
    for url in (reverse("admin:login"), reverse("account_login")):
        client.post(
            url, {"username": "s@example.org", "login": "s@example.org", "password": PASSWORD}
        )
        assert SESSION_KEY not in client.session, url
    assert client.get(reverse("admin:index")).status_code == 302


def test_a_maintainer_signs_in_by_email_and_reaches_the_admin(client, maintainer_account):
    response = client.post(
        reverse("account_login") + "?next=/admin/",
        {"login": "m@example.org", "password": PASSWORD},
    )
    assert response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_a_signed_in_user_without_the_role_is_refused_not_looped(client_for, contributor):
    assert client_for(contributor).get(reverse("admin:login")).status_code == 403


def test_the_embedded_default_keeps_lockouts_in_the_database(client, maintainer_account):
    assert "django_cache" in connection.introspection.table_names()  # made by core's migration
    with override_settings(CACHES={"default": settings.CACHES["database"]}):
        _fail_five_times(client, "m@example.org")
        with connection.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM django_cache")
            assert cursor.fetchone()[0] > 0
        client.post(reverse("account_login"), {"login": "m@example.org", "password": PASSWORD})
        assert SESSION_KEY not in client.session
        from django.core.cache import cache

        cache.clear()


@pytest.mark.parametrize(
    ("broker", "cache_url"),
    [
        ("redis://127.0.0.1:6379/1", "redis://127.0.0.1:6379/1"),
        ("filesystem://", "dbcache://django_cache"),
        ("", "dbcache://django_cache"),
    ],
)
def test_the_shared_cache_follows_the_broker(broker, cache_url):
    assert default_cache_url(broker) == cache_url
