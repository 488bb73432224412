"""A finished run exported: JSONL with transcripts, verdicts and configurations; results CSV."""

import csv
import io
import json

import numpy as np
import pytest
from django.urls import reverse

import stats as statistics
from evaluations.models import Conversation, RunStatus
from evaluations.services import runs
from evaluations.services.official import run_set_official
from tests.evaluations.test_runs import (  # noqa: F401 - fixtures
    offline_release,
    offline_run,
    run_tasks_inline,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_run(offline_release, run_tasks_inline):  # noqa: F811
    run = offline_run(offline_release, turns=2)
    run = run_tasks_inline(runs.run_launch, run=run)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    return run


def test_jsonl_holds_configurations_transcripts_and_verdicts(finished_run, client_for, researcher):
    url = reverse("evaluations:run-export", args=[finished_run.pk, "jsonl"])
    response = client_for(researcher).get(url)
    records = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    head, *rest = records
    assert head["type"] == "run"
    assert head["turns"] == 2
    assert len(head["models"]["targets"]) == 2
    assert head["models"]["judge"]["structured_output"] == "json_schema"
    assert "api_key_env" not in json.dumps(head)
    conversations = [r for r in rest if r["type"] == "conversation"]
    assert len(conversations) == Conversation.objects.filter(run=finished_run).count() == 24
    first = conversations[0]
    assert [t["turn"] for t in first["transcript"]] == [1, 2]
    assert all(t["user"] and t["assistant"] for t in first["transcript"])
    assert len(first["judgments"]) == 3
    assert all(j["justification"] for j in first["judgments"])
    assert "evidence" in first["judgments"][0]
    stored = Conversation.objects.get(pk=first["id"])
    assert first["passed"] == stored.verdict_passed
    assert first["offline_demo"] is True


def test_csv_pass_rates_per_metric_model_and_age_match_the_stored_verdicts(
    finished_run, client_for, researcher
):
    url = reverse("evaluations:run-export", args=[finished_run.pk, "csv"])
    body = b"".join(client_for(researcher).get(url).streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert len(rows) == 2 * 2 * 2  # metrics × models × age contexts
    row = rows[0]
    conversations = Conversation.objects.filter(
        run=finished_run,
        scenario__metric_version__metric__key=row["metric_key"],
        target__name=row["model"],
        scenario__age_context=row["age_context"],
    )
    passed = [c.verdict_passed for c in conversations]
    clusters = [c.scenario_id for c in conversations]
    assert int(row["n"]) == len(passed) == 3
    assert float(row["pass_rate"]) == pytest.approx(np.mean(passed), abs=1e-4)
    reference = statistics.pass_rate_ci(passed, clusters=clusters, n_resamples=2000)
    assert float(row["ci_low"]) == pytest.approx(reference["ci_low"], abs=1e-4)
    assert float(row["ci_high"]) == pytest.approx(reference["ci_high"], abs=1e-4)
    assert row["unjudged"] == "0"
    assert row["offline_demo"] == "True"


def test_run_and_release_pages_and_the_api_link_the_exports(finished_run, client_for, researcher):
    # The release lists the exports of its public (official) runs.
    run_set_official(run=finished_run, official=True, changed_by=None)
    jsonl = reverse("evaluations:run-export", args=[finished_run.pk, "jsonl"])
    csv_url = reverse("evaluations:run-export", args=[finished_run.pk, "csv"])
    run_page = client_for(researcher).get(reverse("evaluations:run-detail", args=[finished_run.pk]))
    assert jsonl in run_page.content.decode()
    release_page = client_for(researcher).get(
        reverse("metrics_registry:release_detail", args=["1.0.0"])
    )
    assert csv_url in release_page.content.decode()
    api = client_for(researcher).get("/api/releases/1.0.0/").json()
    urls = [d["url"] for d in api["downloads"]]
    assert f"http://testserver{jsonl}" in urls
    assert "http://testserver/registry/releases/1.0.0/export/inspect/" in urls


@pytest.mark.parametrize("spanish", ["accept-language", "cookie"])
def test_the_api_links_plain_addresses_to_a_spanish_reader(
    finished_run, client_for, researcher, settings, spanish
):
    # The API is language-free: a Spanish reader's request gets the links everyone gets.
    run_set_official(run=finished_run, official=True, changed_by=None)
    client = client_for(researcher)
    headers = {}
    if spanish == "cookie":
        client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    else:
        headers["HTTP_ACCEPT_LANGUAGE"] = "es-ES,es;q=0.9"
    page = client.get(reverse("metrics_registry:release_detail", args=["1.0.0"]), **headers)
    assert "/es/evaluations/runs/" in page.content.decode()  # the pages do speak Spanish
    urls = [d["url"] for d in client.get("/api/releases/1.0.0/", **headers).json()["downloads"]]
    assert "http://testserver/registry/releases/1.0.0/export/inspect/" in urls
    assert not [url for url in urls if "/es/" in url]


def test_anyone_can_download_an_official_run_of_a_published_release(finished_run, client):
    url = reverse("evaluations:run-export", args=[finished_run.pk, "csv"])
    # Finished but not official: not public (a run kept back for blind ratings, say).
    assert client.get(url).status_code == 404
    run_set_official(run=finished_run, official=True, changed_by=None)
    assert client.get(url).status_code == 200
    finished_run.status = RunStatus.PAUSED
    finished_run.save(update_fields=["status"])
    assert client.get(url).status_code == 404
