"""Similar metrics: one function for contributor and researcher, checked on labelled pairs."""

import csv
from pathlib import Path

import numpy as np
import pytest
from django.urls import reverse
from sklearn.metrics import f1_score, roc_auc_score

from metrics_registry.demo_catalog import DEMO_METRICS
from metrics_registry.services import metric_create
from submissions import services
from submissions.similarity import (
    ADOPTED_VARIANT,
    NEAR_DUPLICATE_SCORE,
    pair_scores,
    similar_metrics_for_submission,
)
from tests.submissions.factories import SubmissionFactory
from tests.submissions.test_candidate_review import in_review  # noqa: F401 - fixture
from tests.submissions.test_drafting import offline_drafter  # noqa: F401 - fixture

PAIRS = Path(__file__).resolve().parent.parent / "data" / "metric_pairs.csv"


def labelled_scores(variant: str) -> tuple[np.ndarray, np.ndarray]:
    with PAIRS.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    corpus = [f"{name}. {criterion}" for name, criterion, *_ in DEMO_METRICS]
    scores = pair_scores(
        [r["text"] for r in rows], [r["metric"] for r in rows], corpus=corpus, variant=variant
    )
    return np.array(scores), np.array([int(r["duplicate"]) for r in rows])


def test_the_adopted_variant_beats_word_tfidf_on_the_labelled_pairs():
    adopted, labels = labelled_scores(ADOPTED_VARIANT)
    word, _ = labelled_scores("word 1-2")
    assert labels.sum() >= 20
    assert (1 - labels).sum() >= 20
    assert roc_auc_score(labels, adopted) > roc_auc_score(labels, word)
    # The threshold that flags near-duplicates to researchers separates the pairs well.
    flagged = np.round(adopted, 2) >= NEAR_DUPLICATE_SCORE
    assert f1_score(labels, flagged) >= 0.9
    assert labels[flagged].all()  # no non-duplicate is flagged


def _catalogue_metric(index: int, actor):
    name, criterion, polarity, subareas, category, _ages = DEMO_METRICS[index]
    return metric_create(
        name=name,
        criterion=criterion,
        polarity=polarity,
        subarea_slugs=list(subareas),
        label_category_slug=category,
        source_kind="expert_submission",
        created_by=actor,
    )


@pytest.mark.django_db
def test_an_obvious_near_duplicate_is_flagged(researcher):
    for index in (45, 46, 1, 3, 28):  # reconnecting, replacement for friends, and unrelated ones
        _catalogue_metric(index, researcher)
    submission = SubmissionFactory(
        title="Encouraging lonely users to reconnect",
        behavior="When someone says they feel alone, the assistant suggests reaching out to "
        "friends, family or a local community group.",
    )
    similar = similar_metrics_for_submission(submission)
    assert similar[0].version.name == "Encourages reconnecting with people"
    assert similar[0].near_duplicate
    assert [s.version.name for s in similar if s.near_duplicate] == [similar[0].version.name]


@pytest.mark.django_db
def test_contributor_and_researcher_see_the_same_scores_without_the_submissions_own_metric(
    client_for,
    researcher,
    in_review,  # noqa: F811
):
    _catalogue_metric(3, researcher)  # "Asks for the student's own ideas first"
    _catalogue_metric(4, researcher)
    candidate = in_review.candidates.order_by("position").first()

    def section(user, url) -> str:
        page = client_for(user).get(url).content.decode()
        return page.split('data-testid="similar-metrics"')[1].split("</ul>")[0]

    def scores(html: str) -> list[str]:
        return [part.split("<")[0] for part in html.split('border me-1">')[1:]]

    detail = reverse("submissions:detail", kwargs={"pk": in_review.pk})
    review = reverse("submissions:candidate-review", kwargs={"pk": candidate.pk})
    contributor_view = section(in_review.contributor, detail)
    researcher_view = section(researcher, review)
    assert scores(contributor_view) == scores(researcher_view) != []
    assert "Asks for the student&#x27;s own ideas first" in researcher_view

    services.candidate_accept(candidate=candidate, actor=researcher, fidelity="faithful")
    candidate.refresh_from_db()
    own_key = candidate.metric.key
    assert own_key not in section(in_review.contributor, detail)
    assert all(
        s.version.metric_id != candidate.metric_id
        for s in similar_metrics_for_submission(in_review)
    )
