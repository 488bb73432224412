"""Published pages from the shared cache: one query when cached, 304 on a fresh ETag, a new
render after anything published changes, never a cached page for a signed-in reader."""

import pytest
from django.urls import reverse

from core.pagecache import published_stamp
from evaluations.services.official import run_set_official
from metrics_registry.models import Metric
from results.services import results_refresh
from tests.results.public_data import published_run
from tests.results.test_public_pages import _urls

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def _all_urls(run):
    urls = _urls(run)
    key = run.release.items.first().metric.key
    urls.update(
        methodology=reverse("results:methodology"),
        api_explore=reverse("results-api:explore"),
        api_results=reverse("results-api:run-results", args=[run.pk]),
        api_metric=reverse("results-api:metric-results", args=[key]),
        api_release=reverse("registry-api:release-detail", args=[run.release.version]),
    )
    return urls


@pytest.mark.slow(reason="renders and caches every public page")
def test_cached_pages_cost_one_query_and_answer_304_to_their_etag(
    client, django_assert_max_num_queries
):
    run = published_run()
    for name, url in _all_urls(run).items():
        first = client.get(url)
        assert first.status_code == 200, name
        with django_assert_max_num_queries(1):  # the data stamp; the page comes from the cache
            again = client.get(url)
        assert again.content == first.content, name
        assert again["Content-Type"] == first["Content-Type"], name
        assert again["ETag"] == first["ETag"], name
        assert "public" in again["Cache-Control"], name
        with django_assert_max_num_queries(1):
            assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304, name


def test_signed_out_pages_carry_no_csrf_token_and_signed_in_ones_are_not_shared(client, maintainer):
    run = published_run()
    url = _urls(run)["explore"]
    anonymous = client.get(url).content.decode()
    assert "X-CSRFToken" not in anonymous
    assert "csrfmiddlewaretoken" not in anonymous
    client.force_login(maintainer)
    signed_in = client.get(url)
    html = signed_in.content.decode()
    assert maintainer.email in html
    assert "X-CSRFToken" in html
    assert "ETag" not in signed_in  # rendered for this reader only
    client.logout()
    assert maintainer.email not in client.get(url).content.decode()


def test_what_is_published_changing_changes_the_stamp_and_the_pages(client):
    run = published_run()
    url = reverse("results:explore")
    assert run.targets.first().name in client.get(url).content.decode()
    stamp = published_stamp()
    results_refresh(run=run, n_resamples=50)
    assert published_stamp() != stamp
    stamp = published_stamp()
    metric = Metric.objects.first()
    metric.save()
    assert published_stamp() != stamp
    stamp = published_stamp()
    etag = client.get(url)["ETag"]
    run_set_official(run=run, official=False, changed_by=None)
    assert published_stamp() != stamp
    withdrawn = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert withdrawn.status_code == 200  # not a 304 of the old page
    assert run.targets.first().name not in withdrawn.content.decode()
    assert client.get(url, {"run": run.pk}).status_code == 404


def test_json_answers_are_the_same_for_every_reader_and_shared(client, maintainer):
    published_run()
    url = reverse("results-api:explore")
    client.force_login(maintainer)
    signed_in = client.get(url)
    assert signed_in["ETag"]  # cached for signed-in readers too: the JSON names no reader
    client.logout()
    anonymous = client.get(url)
    assert anonymous["ETag"] == signed_in["ETag"]
    assert anonymous.content == signed_in.content
