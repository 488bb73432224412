"""Ids in addresses and forms are ASCII digits: anything else (superscripts, Arabic-Indic and
fullwidth digits, letters, any Unicode category) answers 400 with a reason, JSON on the API,
never a server error."""

import sys
import unicodedata

import pytest
from django.urls import reverse

from core.ids import InvalidIdentifier, identifier_parse
from tests.metrics_registry.factories import release_with
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db

# Characters str.isdigit() or str.isnumeric() accepts although they are not 0-9.
NUMERIC_LOOKALIKES = [
    chr(code)
    for code in range(sys.maxunicode + 1)
    if (chr(code).isdigit() or chr(code).isnumeric()) and not "0" <= chr(code) <= "9"
]


def _one_per_category() -> list[str]:
    """The first non-ASCII code point of every Unicode general category but surrogates (which
    cannot travel in a URL), generated from the Unicode database."""
    first: dict[str, str] = {}
    for code in range(0x80, sys.maxunicode + 1):
        category = unicodedata.category(chr(code))
        if category != "Cs" and category not in first:
            first[category] = chr(code)
    return list(first.values())


# Control characters are refused before any view (core.middleware), also with 400.
BAD_IDS = [
    "²", "٣", "３", "۱۲", "𝟘", "Ⅻ", "½", "abc", "1.5", "-1", "+1", " 1", "1e3", "0x1",
    "9" * 30, *[f"1{c}" for c in _one_per_category()],
]  # fmt: skip


def test_the_variants_come_from_the_unicode_database():
    assert len(NUMERIC_LOOKALIKES) > 1_000
    assert len(_one_per_category()) == 29  # all 30 categories but surrogates


def test_one_parser_takes_ascii_digits_only():
    assert identifier_parse("42") == 42
    assert identifier_parse(7) == 7
    assert identifier_parse("") is None
    assert identifier_parse(None) is None
    for value in [*NUMERIC_LOOKALIKES, *BAD_IDS, True, -1, 2**63]:
        with pytest.raises(InvalidIdentifier):
            identifier_parse(value)


def _public_urls(run) -> list[tuple[str, str]]:
    """(address, parameter) of every public id in a query string."""
    return [
        (reverse("results:explore"), "run"),
        (reverse("results:explore") + f"?run={run.pk}", "model"),
        (reverse("results:explore") + f"?run={run.pk}", "compare"),
        (reverse("results:label-compare") + f"?run={run.pk}&b=1", "a"),
        (reverse("results:methodology"), "run"),
        (reverse("results:metric-list"), "run"),
        (reverse("results-api:explore"), "model"),
        (reverse("results-api:explore"), "run"),
        (reverse("results-api:run-results", args=[run.pk]), "target"),
        (reverse("results-api:run-conversations", args=[run.pk]), "target"),
        (reverse("results-api:label", args=[run.targets.first().pk]), "run"),
    ]


@pytest.mark.slow(reason="every public address with odd identifiers")
def test_public_addresses_answer_400_to_an_id_that_is_not_a_number(client):
    run = published_run()
    wrong = []
    for url, name in _public_urls(run):
        for bad in BAD_IDS:
            base, _, query = url.partition("?")
            response = client.get(
                base, {**dict(p.split("=") for p in query.split("&") if p), name: bad}
            )
            if response.status_code != 400:
                wrong.append((url, name, bad, response.status_code))
            elif url.startswith("/api/"):
                assert "detail" in response.json()
                assert name in response.json()["detail"]
            else:
                assert "whole number" in response.content.decode()
    assert wrong == []


def test_signed_in_forms_answer_400_to_an_id_that_is_not_a_number(client_for, maintainer, catalog):
    client = client_for(maintainer)
    release_with("2.0.0", [catalog["pet_names"]])
    posts = [
        (reverse("core:roles"), "user_id", {"roles": ["Contributor"]}),
        (reverse("metrics_registry:metrics_needing_mapping"), "metric", {}),
        (
            reverse("metrics_registry:release_edit", args=["2.0.0"]),
            "version",
            {"action": "add"},
        ),
    ]
    for url, name, extra in posts:
        for bad in ("abc", "²", "٣", "３"):
            response = client.post(url, {name: bad, **extra})
            assert response.status_code == 400, (url, name, bad, response.status_code)
    response = client.get(reverse("evaluations:run-compare"), {"a": "²", "b": "1"})
    assert response.status_code == 400
