"""The "Languages you read" page: declare and remove, every tag checked by core.languages."""

import pytest
from django.urls import reverse

from core.models import ReaderLanguage
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

URL = "core:languages"


def declared(user) -> list[str]:
    return list(ReaderLanguage.objects.filter(user=user).values_list("language", flat=True))


def test_a_tag_is_declared_in_its_standard_spelling(client):
    user = UserFactory()
    client.force_login(user)
    response = client.post(reverse(URL), {"language": "PT_br"}, follow=True)
    assert declared(user) == ["pt-BR"]
    page = response.content.decode()
    assert "You read Brazilian Portuguese." in page
    assert 'data-testid="declared-language"' in page


def test_a_bad_tag_is_shown_again_with_what_is_wrong(client):
    user = UserFactory()
    client.force_login(user)
    response = client.post(reverse(URL), {"language": "english"})
    assert response.status_code == 200
    page = response.content.decode()
    assert 'value="english"' in page
    assert "is not a language tag" in page
    assert "is-invalid" in page
    assert declared(user) == []


def test_an_empty_tag_is_refused_with_a_message(client):
    client.force_login(UserFactory())
    page = client.post(reverse(URL), {"language": ""}).content.decode()
    assert 'data-testid="language-errors"' in page


def test_a_language_is_removed_and_the_english_default_is_stated(client):
    user = UserFactory()
    client.force_login(user)
    client.post(reverse(URL), {"language": "es"})
    page = client.post(reverse(URL), {"remove": "es"}, follow=True).content.decode()
    assert declared(user) == []
    assert "so you are given items in English" in page


def test_one_person_cannot_remove_anothers_language(client):
    other = UserFactory()
    ReaderLanguage.objects.create(user=other, language="es")
    client.force_login(UserFactory())
    client.post(reverse(URL), {"remove": "es"})
    assert declared(other) == ["es"]


def test_the_dashboard_links_to_the_page(client):
    client.force_login(UserFactory())
    page = client.get(reverse("core:dashboard")).content.decode()
    assert reverse(URL) in page


def test_a_hostile_removal_is_refused_before_the_database(client):
    user = UserFactory()
    ReaderLanguage.objects.create(user=user, language="es")
    client.force_login(user)
    response = client.post(reverse(URL), {"remove": "es\x00"}, follow=True)
    assert response.status_code == 200
    assert declared(user) == ["es"]
