"""A reader who chose teens (or adults) keeps that choice on every label page and on Explore:
each link between these pages carries ``age=``, and Explore's select starts on it."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from tests.results.public_data import published_run

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="renders the five label pages and Explore over a published run"),
]

HREF = re.compile(r'href="([^"]+)"')
# The age switch is where the reader changes the choice: its links name the other choices.
AGE_SWITCH = re.compile(r'<nav[^>]*data-testid="age-switch">.*?</nav>', re.S)


def _result_links(html: str) -> list[str]:
    """Every link to a page that reads the choice (the labels and Explore), outside the switch."""
    prefixes = (reverse("results:explore"), reverse("results:label-overview"))
    links = [h.replace("&amp;", "&") for h in HREF.findall(AGE_SWITCH.sub("", html))]
    return [
        h
        for h in links
        if h.startswith(prefixes)
        and not h.split("?")[0].endswith((".svg", ".png", ".pdf"))  # images have no navigation
    ]


def _pages(run) -> list[str]:
    a, b = run.targets.order_by("name")[:2]
    category = run.release.items.order_by("pk").first().metric_version.label_category
    return [
        reverse("results:label", args=[a.pk]),
        reverse("results:label-audience", args=[a.pk, "parent"]),
        reverse("results:label-overview"),
        reverse("results:label-category", args=[a.pk, category.slug]),
        reverse("results:label-compare") + f"?a={a.pk}&b={b.pk}",
        reverse("results:label-compare"),
        reverse("results:explore"),
    ]


@pytest.mark.parametrize("age", ["teen", "adult"])
def test_every_link_between_label_pages_and_explore_keeps_the_readers_choice(client, age):
    run = published_run()
    for page in _pages(run):
        separator = "&" if "?" in page else "?"
        html = client.get(f"{page}{separator}run={run.pk}&age={age}").content.decode()
        links = _result_links(html)
        assert links, page
        assert [h for h in links if parse_qs(urlsplit(h).query).get("age") != [age]] == [], page


def test_without_a_choice_the_links_carry_none(client):
    run = published_run()
    for page in _pages(run):
        html = client.get(page).content.decode()
        assert not [h for h in _result_links(html) if "age=" in h], page


def test_explore_starts_on_the_carried_choice(client):
    run = published_run()
    label = client.get(
        reverse("results:label", args=[run.targets.order_by("name").first().pk]) + "?age=teen"
    ).content.decode()
    explore = re.search(r'href="([^"]+)" data-testid="crumb-explore"', label).group(1)
    html = client.get(explore.replace("&amp;", "&")).content.decode()
    assert re.search(r'<option value="teen" selected>', html)
