"""Queue figures against reference implementations on the same ratings."""

import random

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from core.roles import Role
from review import kinds
from review.agreement import queue_figures, rater_pseudonym
from review.kinds.metric import MetricAdapter
from review.models import Rating
from review.services import assignment_claim, rating_submit
from tests.factories import UserFactory

from .factories import metric_queue, synthetic_candidates

pytestmark = pytest.mark.django_db

FIDELITY = ("faithful", "partly", "unfaithful")


def fill(queue, raters, answer, *, max_ratings=None):
    """Raters take turns claiming and answering until the queue (or the budget) is done."""
    given = 0
    progress = True
    while progress:
        progress = False
        for rater in raters:
            if max_ratings is not None and given >= max_ratings:
                return
            assignment = assignment_claim(queue=queue, rater=rater)
            if assignment is None:
                continue
            rating_submit(
                assignment=assignment, rater=rater, answers=answer(assignment.item, rater)
            )
            given += 1
            progress = True


def noisy_fidelity(item, rater):
    # Items lean towards one answer, raters add noise: realistic, non-trivial agreement.
    rng = random.Random(item.object_id * 1000 + rater.pk)
    lean = FIDELITY[item.object_id % 3]
    return {"fidelity": lean if rng.random() < 0.6 else rng.choice(FIDELITY)}


@pytest.fixture
def rated_queue():
    queue = metric_queue(n=30, required=3, candidates=synthetic_candidates(30))
    raters = [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in range(5)]
    # Stop short of completion: some items end with one or two ratings (missing data).
    fill(queue, raters, noisy_fidelity, max_ratings=80)
    return queue


def reference_tables(queue):
    ratings = list(Rating.objects.current().filter(queue=queue))
    items = sorted({r.item_id for r in ratings})
    raters = sorted({r.rater_id for r in ratings})
    counts = np.zeros((len(items), 3), dtype=int)
    data = np.full((len(raters), len(items)), np.nan)
    for r in ratings:
        i, j = items.index(r.item_id), raters.index(r.rater_id)
        value = FIDELITY.index(r.answers["fidelity"])
        counts[i, value] += 1
        data[j, i] = value
    return counts, data


def test_queue_figures_match_statsmodels_and_krippendorff(rated_queue):
    figures = queue_figures(rated_queue)
    fidelity = figures.questions[0]
    counts, data = reference_tables(rated_queue)
    per_item = counts.sum(axis=1)
    assert set(per_item.tolist()) >= {3}
    assert (per_item < 3).any(), "the fixture must leave some items short of ratings"

    pairable = counts[per_item >= 2]
    expected_agreement = np.mean(
        [(row * (row - 1)).sum() / (row.sum() * (row.sum() - 1)) for row in pairable]
    )
    assert fidelity.percent_agreement.value == pytest.approx(expected_agreement)
    assert fidelity.fleiss_kappa.value == pytest.approx(sm_fleiss_kappa(counts[per_item == 3]))
    assert fidelity.krippendorff_alpha.value == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    )
    for estimate in (fidelity.percent_agreement, fidelity.fleiss_kappa):
        assert estimate.low <= estimate.value <= estimate.high
    shares = {s["choice"].value: s["estimate"].value for s in fidelity.shares}
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares["faithful"] == pytest.approx(counts[:, 0].sum() / counts.sum())


@pytest.mark.slow(reason="runs the pipeline and has every item of a queue rated twice")
def test_per_rater_figures(rated_queue):
    figures = queue_figures(rated_queue)
    by_rater = {row["rater"]: row for row in figures.raters}
    ratings = Rating.objects.current().filter(queue=rated_queue)
    assert sum(row["count"] for row in figures.raters) == ratings.count()
    pseudonyms = {
        rater_pseudonym(rated_queue, rater_id): rater_id
        for rater_id in ratings.values_list("rater_id", flat=True)
    }
    for row in figures.raters:
        rater_id = pseudonyms[row["rater"]]
        seconds = sorted(ratings.filter(rater_id=rater_id).values_list("seconds_spent", flat=True))
        assert row["median_seconds"] == pytest.approx(np.median(seconds))
    assert len(by_rater) == 5


def test_agreement_with_the_majority_leaves_the_rater_out():
    from review.agreement import RatingsTable, rater_agreement_with_majority
    from review.kinds.questions import METRIC_FIDELITY

    labels = np.array(
        [
            ["faithful", "faithful", "faithful", "partly"],
            ["partly", "partly", "faithful", None],
            ["faithful", "partly", None, None],  # others of each are one rater: left out
        ],
        dtype=object,
    )
    table = RatingsTable(METRIC_FIDELITY, [1, 2, 3], [10, 11, 12, 13], labels, required=4)
    result = rater_agreement_with_majority(table)
    # Rater 10: item 1 others {f,f,p} -> f (hit); item 2 others {p,f} tie -> skipped. One item
    # is too few to publish a share: "not enough data", with its n.
    assert (result[10].value, result[10].n) == (None, 1)
    # Rater 13: item 1 others {f,f,f} -> f, own p (miss).
    assert (result[13].value, result[13].n) == (None, 1)
    # Rater 12: item 1 hit, item 2 others {p,p} -> p, own f (miss).
    assert (result[12].value, result[12].n) == (0.5, 2)


class JudgeStub(MetricAdapter):
    """Test double for the judge-verdict path until the evaluations app provides verdicts."""

    kind = "judge_verdict"

    def questions(self, item):
        return list(kinds.FORMS["judge_verdict"])

    def reference_answers(self, item):
        return {"verdict": ("present", "absent")[item.object_id % 2]}


@pytest.mark.slow(reason="judges a run three times and has a panel of experts rate it")
def test_cohen_kappa_between_the_experts_majority_and_the_judge_matches_sklearn():
    previous = kinds.register(JudgeStub())
    try:
        from review.services import queue_create

        queue = queue_create(
            name="Judge check",
            kind="judge_verdict",
            created_by=None,
            size=24,
            required_ratings=3,
            seed=1,
            candidates=synthetic_candidates(24),
        )
        raters = [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in range(4)]

        def answer(item, rater):
            rng = random.Random(item.object_id * 7 + rater.pk)
            judge = ("present", "absent")[item.object_id % 2]
            other = "absent" if judge == "present" else "present"
            verdict = judge if rng.random() < 0.75 else other
            agreement = "agree" if verdict == judge else rng.choice(("disagree", "unsure"))
            return {"agreement": agreement, "verdict": verdict}

        fill(queue, raters, answer)
        figures = queue_figures(queue)
        verdict = next(f for f in figures.questions if f.question.name == "verdict")
        ratings = list(Rating.objects.current().filter(queue=queue).select_related("item"))
        items = sorted({r.item_id for r in ratings})
        majority, judge = [], []
        for item_id in items:
            votes = [r.answers["verdict"] for r in ratings if r.item_id == item_id]
            # Same tie rule as stats.majority_vote: the lowest label wins.
            best = max(votes.count(v) for v in set(votes))
            majority.append(min(v for v in set(votes) if votes.count(v) == best))
            object_id = next(r.item.object_id for r in ratings if r.item_id == item_id)
            judge.append(("present", "absent")[object_id % 2])
        assert verdict.judge["cohen_kappa"].value == pytest.approx(
            cohen_kappa_score(majority, judge)
        )
        assert verdict.judge["majority_matches_judge"].value == pytest.approx(
            np.mean(np.array(majority) == np.array(judge))
        )
        agreement = next(f for f in figures.questions if f.question.name == "agreement")
        shares = {s["choice"].value: s["estimate"].value for s in agreement.shares}
        agreed = sum(r.answers["agreement"] == "agree" for r in ratings) / len(ratings)
        assert shares["agree"] == pytest.approx(agreed)
    finally:
        kinds.unregister("judge_verdict", restore=previous)


def test_a_queue_without_ratings_has_no_figures():
    queue = metric_queue(n=2, candidates=synthetic_candidates(2))
    figures = queue_figures(queue)
    assert figures.questions == []
    assert figures.raters == []
