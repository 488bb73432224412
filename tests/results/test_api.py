"""The public results API: anonymous, official runs only, cacheable, and as its schema says."""

import csv
import io
import json

import pytest
from django.urls import reverse

from evaluations.models import Conversation
from results.models import PassRateSummary
from tests.results.openapi_check import assert_matches_schema, operation_security
from tests.results.public_data import published_run

pytestmark = pytest.mark.django_db


def _urls(run):
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    target = run.targets.order_by("name").first()
    key = conversation.scenario.metric_version.metric.key
    return {
        "areas": reverse("results-api:area-list"),
        "runs": reverse("results-api:run-list"),
        "run": reverse("results-api:run-detail", args=[run.pk]),
        "fidelity": reverse("results-api:run-fidelity", args=[run.pk]),
        "results": reverse("results-api:run-results", args=[run.pk]) + "?level=subarea",
        "conversations": reverse("results-api:run-conversations", args=[run.pk]),
        "conversation": reverse("results-api:conversation", args=[conversation.pk]),
        "scenario": reverse("results-api:scenario", args=[conversation.scenario_id]),
        "explore": reverse("results-api:explore") + f"?model={target.pk}&age_context=teen",
        "metric": reverse("results-api:metric-results", args=[key]),
        "label": reverse("results-api:label", args=[target.pk]),
        "metrics": reverse("registry-api:metric-list"),
        "metric-detail": reverse("registry-api:metric-detail", args=[key]),
        "releases": reverse("registry-api:release-list"),
        "release": reverse("registry-api:release-detail", args=[run.release.version]),
        "expert-figures": reverse("results-api:release-expert-figures", args=[run.release.version]),
    }


@pytest.mark.slow(reason="calls every API endpoint against its schema")
def test_every_endpoint_answers_anonymously_and_matches_its_schema(api_client):
    run = published_run()
    for name, url in _urls(run).items():
        response = api_client.get(url)
        assert response.status_code == 200, (name, response.content[:300])
        assert_matches_schema(response)


@pytest.mark.slow(reason="asks every API endpoint with bad input and checks each answer")
def test_errors_are_documented_json_with_a_reason(api_client):
    run = published_run()
    for url in (
        reverse("results-api:run-detail", args=[999999]),
        reverse("results-api:conversation", args=[999999]),
        reverse("results-api:label", args=[999999]),
        reverse("results-api:metric-results", args=["IB-NOPE"]),
        reverse("registry-api:metric-detail", args=["IB-NOPE"]),
        reverse("registry-api:release-detail", args=["9.9.9"]),
        reverse("results-api:release-expert-figures", args=["9.9.9"]),
    ):
        response = api_client.get(url)
        assert response.status_code == 404, url
        assert response.json()["detail"]
        assert_matches_schema(response)
    bad = api_client.get(reverse("results-api:run-results", args=[run.pk]), {"level": "planet"})
    assert bad.status_code == 400
    assert bad.json()["detail"].startswith("level:")
    assert_matches_schema(bad)


def test_public_endpoints_declare_no_cookie_auth():
    from tests.results.openapi_check import openapi

    for path in openapi()["paths"]:
        if path.startswith("/api/submissions"):
            continue  # contributors' own data: signed in
        security = operation_security(path)
        assert security == [] or {} in security, path


def test_unofficial_runs_never_appear(api_client):
    published_run(version="1.0.0")
    hidden = published_run(version="1.1.0", official=False, names=("Hidden A", "Hidden B"))
    runs = api_client.get(reverse("results-api:run-list")).json()["results"]
    assert hidden.pk not in [r["id"] for r in runs]
    assert api_client.get(reverse("results-api:run-detail", args=[hidden.pk])).status_code == 404
    conversation = Conversation.objects.filter(run=hidden).first()
    url = reverse("results-api:conversation", args=[conversation.pk])
    assert api_client.get(url).status_code == 404
    url = reverse("results-api:run-export", args=[hidden.pk, "csv"])
    assert api_client.get(url).status_code == 404


def test_results_are_the_stored_estimates_and_filter(api_client):
    run = published_run()
    target = run.targets.order_by("name").first()
    url = reverse("results-api:run-results", args=[run.pk])
    body = api_client.get(
        url, {"level": "metric", "age_context": "teen", "target": target.pk}
    ).json()
    rows = PassRateSummary.objects.filter(
        run=run, level="metric", age_context="teen", target=target
    )
    assert body["count"] == rows.count()
    by_key = {(r["metric"], r["polarity"]): r for r in body["results"]}
    for row in rows.select_related("metric_version__metric"):
        got = by_key[(row.metric_version.metric.key, row.polarity)]["estimate"]
        assert got["value"] == pytest.approx(row.rate)
        assert got["low"] == row.ci_low
        assert got["n"] == row.n_conversations


def test_conversation_carries_turns_and_verdicts(api_client):
    run = published_run()
    conversation = Conversation.objects.filter(run=run).first()
    body = api_client.get(reverse("results-api:conversation", args=[conversation.pk])).json()
    assert [t["index"] for t in body["turns"]] == [1, 2]
    assert len(body["judgments"]) == 3
    assert body["verdict_passed"] == conversation.verdict_passed
    assert body["judgments"][0]["evidence"][0]["quote"]


def test_published_data_is_cacheable_with_etag(api_client):
    run = published_run()
    url = reverse("results-api:run-results", args=[run.pk])
    first = api_client.get(url)
    assert "public" in first["Cache-Control"]
    assert "max-age=300" in first["Cache-Control"]
    etag = first["ETag"]
    again = api_client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    other = api_client.get(url, {"level": "area"})
    assert other["ETag"] != etag


def test_whole_run_exports_as_jsonl_and_csv(api_client):
    run = published_run()
    total = PassRateSummary.objects.filter(run=run).count()
    jsonl = api_client.get(reverse("results-api:run-export", args=[run.pk, "jsonl"]))
    assert jsonl.status_code == 200
    assert jsonl["ETag"]
    lines = [json.loads(line) for line in b"".join(jsonl.streaming_content).splitlines()]
    assert len(lines) == total
    assert {"estimate_value", "estimate_low", "estimate_n", "metric"} <= set(lines[0])
    csv_response = api_client.get(reverse("results-api:run-export", args=[run.pk, "csv"]))
    text = b"".join(csv_response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == total
    assert rows[0]["estimate_n"] == str(lines[0]["estimate_n"])


@pytest.mark.parametrize("n_metrics", [2, 8])
def test_api_runs_a_bounded_number_of_queries(n_metrics, api_client, django_assert_max_num_queries):
    run = published_run(n_metrics=n_metrics)
    for name, url in _urls(run).items():
        with django_assert_max_num_queries(12):
            assert api_client.get(url).status_code == 200, name


def test_release_items_render_exactly_as_their_serializer(api_client):
    from metrics_registry.api.serializers import ReleaseItemOutput
    from metrics_registry.selectors import release_items

    run = published_run(n_metrics=3)
    body = api_client.get(reverse("registry-api:release-detail", args=[run.release.version]))
    expected = ReleaseItemOutput(release_items(run.release), many=True).data
    assert body.json()["items"] == json.loads(json.dumps(expected))
