"""Whole-run exports per language: every row says which language it counts, ``?lang=``
chooses one language's rows, an unknown language is a 400 naming the run's languages, and
the pooled rows say which languages they pool."""

import csv
import io
import json

import pytest
from django.urls import reverse

from evaluations.models import Conversation
from results.models import PassRateSummary
from results.services import results_refresh
from tests.results.language_runs import bilingual_run

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="refreshes a bilingual run and downloads its exports"),
]


@pytest.fixture
def run():
    run = bilingual_run(metrics=2, models=2, spanish_drop=0.35, seed=5)
    results_refresh(run=run, n_resamples=20)
    return run


def _body(response) -> str:
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content).decode()


def _csv(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(_body(response))))


def test_results_api_export_gives_each_languages_rows_and_says_the_pooled_ones_pool(run, client):
    url = reverse("results-api:run-export", args=[run.pk, "csv"])
    pooled = _csv(client.get(url))
    assert pooled
    assert {(r["language"], r["languages"]) for r in pooled} == {("", "en es")}
    spanish = _csv(client.get(url, {"lang": "es"}))
    assert {(r["language"], r["languages"]) for r in spanish} == {("es", "es")}
    assert len(spanish) == PassRateSummary.objects.filter(run=run, language="es").count()
    # The Spanish rows are Spanish figures, not the pooled ones again.
    key = ("target", "level", "polarity", "age_context", "area", "subarea", "metric")
    first = next(r for r in spanish if r["level"] == "overall" and r["age_context"] == "all")
    twin = next(r for r in pooled if all(r[k] == first[k] for k in key))
    assert int(first["estimate_n"]) < int(twin["estimate_n"])
    stored = PassRateSummary.objects.get(
        run=run,
        language="es",
        level="overall",
        age_context="all",
        polarity=first["polarity"],
        target_id=int(first["target"]),
    )
    assert int(first["n_passed"]) == stored.n_passed

    response = client.get(url, {"lang": "es"})
    assert "-es-results.csv" in response["Content-Disposition"]
    assert response["ETag"] != client.get(url)["ETag"]
    lines = _body(
        client.get(reverse("results-api:run-export", args=[run.pk, "jsonl"]), {"lang": "en"})
    )
    records = [json.loads(line) for line in lines.splitlines()]
    assert {(r["language"], r["languages"]) for r in records} == {("en", "en")}

    bad = client.get(url, {"lang": "xx"})
    assert bad.status_code == 400
    assert bad.json()["detail"] == "lang: choose one of all, en, es."


def test_run_export_rows_and_conversations_carry_their_language(run, client_for, researcher):
    client = client_for(researcher)
    url = reverse("evaluations:run-export", args=[run.pk, "csv"])
    pooled = _csv(client.get(url))
    assert {(r["language"], r["languages"]) for r in pooled} == {("", "en es")}
    spanish = _csv(client.get(url, {"lang": "es"}))
    assert {(r["language"], r["languages"]) for r in spanish} == {("es", "es")}
    row = spanish[0]
    judged = Conversation.objects.filter(
        run=run,
        scenario__language="es",
        scenario__metric_version__metric__key=row["metric_key"],
        target__name=row["model"],
        scenario__age_context=row["age_context"],
    )
    assert int(row["n"]) == judged.count() == 6
    assert int(row["passed"]) == judged.filter(verdict_passed=True).count()
    twin = next(
        r
        for r in pooled
        if (r["metric_key"], r["model"], r["age_context"])
        == (row["metric_key"], row["model"], row["age_context"])
    )
    assert int(twin["n"]) == 12

    jsonl = client.get(reverse("evaluations:run-export", args=[run.pk, "jsonl"]), {"lang": "es"})
    assert f'run-{run.pk}-es.jsonl"' in jsonl["Content-Disposition"]
    head, *records = [json.loads(line) for line in _body(jsonl).splitlines()]
    assert head["language"] == "es"
    assert records
    assert {r["language"] for r in records} == {"es"}
    everything = _body(client.get(reverse("evaluations:run-export", args=[run.pk, "jsonl"])))
    tags = {json.loads(line).get("language") for line in everything.splitlines()[1:]}
    assert tags == {"en", "es"}

    bad = client.get(url, {"lang": "fr"})
    assert bad.status_code == 400
    assert bad.json() == {"detail": "lang: choose one of all, en, es.", "languages": ["en", "es"]}
