"""A rating in an open blind queue moves no public figure; counts cannot be differenced against
listings while conversations are held; undo is refused once a queue's ratings are published."""

import csv
import io
import json
import re

import pytest
from django.core.cache import caches
from django.urls import reverse

from core.exceptions import ApplicationError
from evaluations.models import Conversation
from evaluations.services.official import run_set_official
from metrics_registry.models import MetricVersion
from results.services import results_refresh
from review.kinds.evaluations import run_conversation_candidates
from review.models import QueueStatus
from review.services import (
    assignment_claim,
    queue_create,
    queue_set_status,
    rating_submit,
    rating_undo_last,
)
from review.services.calibration import calibration_queue_create, triage_queue_create
from tests.results.public_data import published_run
from tests.review.test_evaluation_kinds import experts

pytestmark = pytest.mark.django_db


def _draw(kind: str, run, researcher, raters):
    if kind == "calibration":
        return calibration_queue_create(
            run=run, name="Calibration", created_by=researcher, fraction=0.25, seed=2,
            eligible_raters=raters,
        )  # fmt: skip
    if kind == "triage":
        return triage_queue_create(
            run=run, name="Triage", created_by=researcher, size=6, seed=2,
            include_unanimous=True, eligible_raters=raters,
        )  # fmt: skip
    return queue_create(
        name="Panel", kind="external_panel", created_by=researcher, size=6, seed=2,
        external_panel=True, eligible_raters=raters,
        candidates=run_conversation_candidates(run, judged=True),
    )  # fmt: skip


# When the figures were last drawn: a refresh after a blind rating draws them again (the same
# figures), and its time moves with the clock; only the figures must not move.
_REFRESH_TIMES = re.compile(
    r"(figures computed |Computed from the ratings as they stood on )"
    r"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}|\d{1,2} \w+ \d{4}, \d{2}:\d{2})"
)


def _public_answers(client, run) -> dict[str, str]:
    """Every public page and API answer that shows the run's figures, rendered afresh."""
    metric = MetricVersion.objects.filter(scenarios__conversations__run=run).first().metric
    target = run.targets.order_by("pk").first()
    urls = [
        reverse("results-api:run-results", args=[run.pk]) + f"?metric={metric.key}",
        reverse("results-api:run-conversations", args=[run.pk]) + f"?metric={metric.key}",
        reverse("results-api:run-calibration", args=[run.pk]),
        reverse("results-api:run-detail", args=[run.pk]),
        reverse("results-api:metric-results", args=[metric.key]),
        reverse("results-api:label", args=[target.pk]) + f"?run={run.pk}",
        reverse("results:metric", args=[metric.key]) + f"?run={run.pk}",
        reverse("results:label", args=[target.pk]) + f"?run={run.pk}",
        reverse("results:methodology") + f"?run={run.pk}",
    ]
    answers = {}
    for url in urls:
        caches["pages"].clear()
        response = client.get(url, HTTP_ACCEPT="application/json" if "/api/" in url else "")
        assert response.status_code == 200, (url, response.status_code)
        answers[url] = _REFRESH_TIMES.sub(r"\1<when>", response.content.decode())
    assert "figures computed <when>" in answers[urls[-1]]  # the time found, and set aside
    return answers


def _rate_one(queue, rater):
    assignment = assignment_claim(queue=queue, rater=rater)
    answers = {"verdict": "present", "examples_adequate": "yes"}
    return rating_submit(assignment=assignment, rater=rater, answers=answers)


@pytest.mark.slow(reason="builds an official run, refreshes its figures three times")
@pytest.mark.parametrize("kind", ["calibration", "triage", "external panel"])
def test_no_public_figure_moves_until_the_queue_closes_and_undo_is_refused_after(
    kind, client, researcher
):
    run = published_run(n_metrics=2, official=False)
    raters = experts(2)
    queue = _draw(kind, run, researcher, raters)
    run_set_official(run=run, official=True, changed_by=researcher)
    results_refresh(run=run, n_resamples=200)
    before = _public_answers(client, run)

    _rate_one(queue, raters[0])
    # What a worker does once the rating is in: the figures are drawn again.
    results_refresh(run=run, n_resamples=200)
    after = _public_answers(client, run)
    for url, answer in before.items():
        assert after[url] == answer, f"{url} moved after one blind rating"
    # The rating is not out yet: the rater may still take it back.
    rating_undo_last(queue=queue, rater=raters[0])
    _rate_one(queue, raters[0])

    queue_set_status(queue=queue, status=QueueStatus.CLOSED)
    results_refresh(run=run, n_resamples=200)
    released = _public_answers(client, run)
    assert released != before  # the held conversations are back, and the verdicts count
    with pytest.raises(ApplicationError, match="can no longer be undone"):
        rating_undo_last(queue=queue, rater=raters[0])


@pytest.mark.slow(reason="builds an official run and refreshes its figures")
def test_cell_counts_equal_the_listing_while_conversations_are_held(client, researcher):
    run = published_run(n_metrics=2, official=False)
    queue = _draw("external panel", run, researcher, experts(1))
    held = {i.object_id for i in queue.items.all()}
    held_scenarios = set(
        Conversation.objects.filter(pk__in=held).values_list("scenario_id", flat=True)
    )
    run_set_official(run=run, official=True, changed_by=researcher)
    results_refresh(run=run, n_resamples=200)
    for version in MetricVersion.objects.filter(scenarios__conversations__run=run).distinct():
        key = version.metric.key
        results = client.get(
            reverse("results-api:run-results", args=[run.pk]) + f"?metric={key}"
        ).json()
        listing = client.get(
            reverse("results-api:run-conversations", args=[run.pk]) + f"?metric={key}"
        ).json()
        listed = listing["results"] if isinstance(listing, dict) else listing
        assert not held & {c["id"] for c in listed}
        for cell in _metric_cells(results):
            shown = [
                c
                for c in listed
                if c["target"] == cell["target_id"]
                and (cell["age"] == "all" or c["age_context"] == cell["age"])
                and c["verdict_passed"] is not None
            ]
            assert cell["n"] == len(shown), json.dumps(cell)
            assert cell["n_passed"] == sum(c["verdict_passed"] for c in shown), json.dumps(cell)
        # The held ones are counted apart, with their reason.
        for row in results["results"]:
            ages = ("teen", "adult") if row["age_context"] == "all" else (row["age_context"],)
            count = Conversation.objects.filter(
                scenario_id__in=held_scenarios,
                scenario__metric_version=version,
                target_id=row["target"],
                scenario__age_context__in=ages,
            ).count()
            reasons = {e["reason"]: e["count"] for e in row["estimate"]["excluded"]}
            assert reasons.get("held for blind review", 0) == count
    # The run's results CSV, as a visitor downloads it: the same counts, the held apart.
    response = client.get(reverse("evaluations:run-export", args=[run.pk, "csv"]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    listed_all = []
    for version in MetricVersion.objects.filter(scenarios__conversations__run=run).distinct():
        listed_all += client.get(
            reverse("results-api:run-conversations", args=[run.pk])
            + f"?metric={version.metric.key}"
        ).json()["results"]
    assert sum(int(r["n"]) for r in rows) == len(
        [c for c in listed_all if c["verdict_passed"] is not None]
    )
    assert (
        sum(int(r["held_for_review"]) for r in rows)
        == Conversation.objects.filter(scenario_id__in=held_scenarios).count()
    )
    # Closed: held conversations are listed and counted again, the two still agree.
    queue_set_status(queue=queue, status=QueueStatus.CLOSED)
    results_refresh(run=run, n_resamples=200)
    key = MetricVersion.objects.filter(scenarios__conversations__run=run).first().metric.key
    listed = client.get(
        reverse("results-api:run-conversations", args=[run.pk]) + f"?metric={key}"
    ).json()["results"]
    assert held & {c["id"] for c in listed}
    results = client.get(reverse("results-api:run-results", args=[run.pk]) + f"?metric={key}")
    assert sum(c["n"] for c in _metric_cells(results.json()) if c["age"] == "all") == len(
        [c for c in listed if c["verdict_passed"] is not None]
    )
    assert Conversation.objects.filter(pk__in=held).count() == len(held)


def _metric_cells(results) -> list[dict]:
    cells = [
        {
            "target_id": row["target"],
            "age": row["age_context"],
            "n": row["estimate"]["n"],
            "n_passed": row["n_passed"],
        }
        for row in results["results"]
    ]
    assert cells
    return cells


@pytest.mark.slow(reason="builds a run and refreshes its figures")
def test_a_closed_blind_queue_of_a_run_now_public_cannot_be_reopened(researcher):
    run = published_run(n_metrics=1, official=False)
    queue = _draw("external panel", run, researcher, experts(1))
    queue_set_status(queue=queue, status=QueueStatus.CLOSED)
    queue_set_status(queue=queue, status=QueueStatus.OPEN)  # not public yet: allowed
    queue_set_status(queue=queue, status=QueueStatus.CLOSED)
    run_set_official(run=run, official=True, changed_by=researcher)
    with pytest.raises(ApplicationError, match="cannot be reopened"):
        queue_set_status(queue=queue, status=QueueStatus.OPEN)
    queue.refresh_from_db()
    assert queue.status == QueueStatus.CLOSED
