"""Published pages rendered ahead (`results.published_pages`, `core.page_store`): a stored page
is the live page byte for byte and answers a request on an empty cache without computing it;
it is never served once what it shows changed, and nothing the live path hides is stored."""

from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.urls import reverse

from core.caches import page_cache
from core.models import StoredPage
from core.page_store import pages_store
from evaluations.services.official import run_set_official
from results.published_pages import (
    published_page_addresses,
    published_pages_render,
    published_pages_status,
)
from results.tasks import published_pages_render as render_task
from review.kinds import adapter_for
from review.services import assignment_claim, queue_create, queue_set_status, rating_submit
from tests.factories import UserFactory
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db

HOST = urlsplit(settings.SITE_URL).netloc


def _get(client, address: str):
    return client.get(address, HTTP_HOST=HOST)


def _live(client, address: str) -> bytes:
    """The page as the live path renders it now (nothing cached, nothing stored)."""
    stored = list(StoredPage.objects.all())
    StoredPage.objects.all().delete()
    page_cache().clear()
    try:
        return _get(client, address).content
    finally:
        StoredPage.objects.bulk_create(stored)
        page_cache().clear()


def _sample(run) -> list[str]:
    target = run.targets.order_by("pk").first()
    key = run.release.items.order_by("pk").first().metric.key
    return [
        reverse("results:explore") + f"?model={target.pk}",
        reverse("results:explore") + f"?run={run.pk}&model={target.pk}&age=teen&polarity=negative",
        reverse("results:metric", args=[key]),
        reverse("results:label", args=[target.pk]) + "?age=teen",
        reverse("results:label-audience", args=[target.pk, "parent"]),
        reverse("results:methodology"),
        reverse("results-api:explore") + f"?model={target.pk}",
        reverse("results-api:metric-results", args=[key]),
        reverse("results-api:run-results", args=[run.pk]),
        reverse("results-api:label", args=[target.pk]),
    ]


@pytest.mark.slow(reason="renders every page of a release")
def test_stored_pages_are_the_live_pages_and_answer_a_cold_request(
    client, django_assert_max_num_queries
):
    run = published_run()
    addresses = published_page_addresses(run, default=True)
    assert len(addresses) == len(set(addresses))
    stored = render_task.apply().get()
    # Once per address at most (one representation of API answers; 404s are not stored).
    assert 0 < stored == StoredPage.objects.count() <= len(addresses)
    assert published_pages_status() == {
        "done": len(addresses),
        "total": len(addresses),
        "stage": "pages",
    }
    for address in _sample(run):
        assert address in addresses
        page_cache().clear()
        # The data stamp and the stored page: nothing computed.
        with django_assert_max_num_queries(2):
            cold = _get(client, address)
        assert cold.status_code == 200, address
        assert cold.content == _live(client, address), address


@pytest.mark.slow(reason="renders every page of a release")
def test_an_address_outside_the_space_is_rendered_on_request(client):
    run = published_run()
    published_pages_render()
    conversation = run.conversations.order_by("pk").first()
    address = reverse("results:conversation", args=[conversation.pk])
    assert not any("/conversations/" in key for key in StoredPage.objects.values_list("key"))
    page_cache().clear()
    assert _get(client, address).status_code == 200


@pytest.mark.slow(reason="renders every page of a release")
def test_a_stored_page_is_not_served_once_the_published_data_changed(client):
    run = published_run()
    target = run.targets.order_by("pk").first()
    address = reverse("results:explore") + f"?model={target.pk}"
    published_pages_render()
    before = _get(client, address).content
    # Withdrawn: the run's pages answer 404 at once, stored pages or not.
    run_set_official(run=run, official=False, changed_by=None)
    page_cache().clear()
    assert _get(client, address).content != before
    assert _get(client, reverse("results:explore") + f"?run={run.pk}").status_code == 404


def test_pages_of_a_run_that_is_not_public_are_never_stored(client):
    hidden = published_run(official=False)
    target = hidden.targets.order_by("pk").first()
    addresses = [
        reverse("results:explore") + f"?model={target.pk}&run={hidden.pk}",
        reverse("results-api:run-results", args=[hidden.pk]),
        reverse("results-api:label", args=[target.pk]) + f"?run={hidden.pk}",
    ]
    assert pages_store(addresses, origin=settings.SITE_URL) == 0
    assert not StoredPage.objects.exists()


@pytest.mark.slow(reason="renders every page of a release")
def test_a_conversation_held_for_blind_review_stays_out_of_stored_pages(client, researcher):
    """Drawn into a blind queue before the run was made public, a conversation is held back
    from every public path: the stored pages leave it out as the live ones do, and once its
    last rating is in (the hold released) the stored pages are no longer served."""
    run = published_run(official=False)
    held = run.conversations.order_by("pk").first()
    rater = UserFactory()
    queue = queue_create(
        name="Blind panel",
        kind="external_panel",
        created_by=researcher,
        size=1,
        required_ratings=1,
        eligible_raters=[rater],
        external_panel=True,
        candidates=[
            c for c in adapter_for("external_panel").candidates() if c.object_id == held.pk
        ],
    )
    run_set_official(run=run, official=True, changed_by=None)
    key = held.scenario.metric_version.metric.key
    address = reverse("results:metric", args=[key])
    link = f"/conversations/{held.pk}/".encode()
    published_pages_render()
    assert StoredPage.objects.filter(key__contains="MetricResultsView").exists()
    page_cache().clear()
    stored = _get(client, address).content
    assert link not in stored
    assert stored == _live(client, address)

    assignment = assignment_claim(queue=queue, rater=rater)
    queue_set_status(queue=queue, status="closed")
    rating_submit(
        assignment=assignment,
        rater=rater,
        answers={"examples_adequate": "yes", "verdict": "present"},
    )
    page_cache().clear()
    assert link in _get(client, address).content
