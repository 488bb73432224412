"""Blind simulator comparison: orientation per rater, Bradley-Terry ranking against statsmodels."""

import numpy as np
import pytest
import statsmodels.api as sm
from django.urls import reverse

from core.roles import Role
from core.services import reader_language_declare
from review import kinds
from review.agreement import simulator_ranking
from review.kinds import BlindPairMixin, Candidate, KindAdapter
from review.models import Rating
from review.services import assignment_claim, queue_create, rating_submit
from stats import bradley_terry
from tests.factories import UserFactory


def logit_strengths(wins: np.ndarray) -> np.ndarray:
    """Bradley-Terry as logistic regression: +1 for the first, -1 for the second candidate."""
    k = wins.shape[0]
    rows, outcomes = [], []
    for i in range(k):
        for j in range(i + 1, k):
            x = np.zeros(k)
            x[i], x[j] = 1, -1
            for _ in range(int(wins[i, j])):
                rows.append(x)
                outcomes.append(1)
            for _ in range(int(wins[j, i])):
                rows.append(x)
                outcomes.append(0)
    # Candidate 0 is the reference (its strength fixed at 0) so the model is identified.
    fit = sm.Logit(np.array(outcomes), np.array(rows)[:, 1:]).fit(disp=0, tol=1e-12)
    strengths = np.concatenate([[0.0], fit.params])
    return strengths - strengths.mean()


def test_bradley_terry_intervals_resample_items_and_cover_the_fit():
    """On many comparisons the interval holds the maximum-likelihood strength and narrows
    with more items; an item's comparisons move together in a resample."""
    from stats import bradley_terry_estimates

    rng = np.random.default_rng(1)
    true = np.array([0.8, 0.0, -0.8])
    items, winner, loser = [], [], []
    for item in range(300):
        a, b = rng.choice(3, 2, replace=False)
        p = 1 / (1 + np.exp(-(true[a] - true[b])))
        w, lose = (a, b) if rng.random() < p else (b, a)
        items.append(item)
        winner.append(w)
        loser.append(lose)
    estimates = bradley_terry_estimates(items, winner, loser, 3, n_resamples=300)
    wins = np.zeros((3, 3))
    np.add.at(wins, (winner, loser), 1)
    assert [e.value for e in estimates] == pytest.approx(bradley_terry(wins).tolist())
    for e, t in zip(estimates, true, strict=True):
        assert e.low < e.value < e.high
        assert e.low < t < e.high
        assert e.n_clusters == 300
    few = bradley_terry_estimates(items[:60], winner[:60], loser[:60], 3, n_resamples=300)
    assert all(
        (f.high - f.low) > (e.high - e.low)
        for f, e in zip(few, estimates, strict=True)
        if f.has_interval
    )


def test_bradley_terry_matches_a_logistic_regression():
    rng = np.random.default_rng(3)
    truth = np.array([0.8, 0.2, 0.0, -0.4, -0.6, 0.1])
    wins = np.zeros((6, 6))
    for _ in range(600):
        i, j = rng.choice(6, 2, replace=False)
        p = np.exp(truth[i]) / (np.exp(truth[i]) + np.exp(truth[j]))
        if rng.random() < p:
            wins[i, j] += 1
        else:
            wins[j, i] += 1
    assert bradley_terry(wins) == pytest.approx(logit_strengths(wins), abs=1e-6)


def test_bradley_terry_refuses_an_unbeaten_candidate():
    with pytest.raises(ValueError, match="strongly connected"):
        bradley_terry([[0, 3], [0, 0]])


class PairStub(BlindPairMixin, KindAdapter):
    """Test double: pairs of conversations by candidate simulators, until evaluations exist."""

    kind = "simulator_pair"
    queue_section = "ranking"  # as the evaluations adapter's
    PAIR_QUESTIONS = ("more_realistic", "presses_harder")

    def questions(self, item):
        return list(kinds.FORMS["simulator_pair"])

    def candidates(self):
        return []


@pytest.fixture
def pair_adapter():
    previous = kinds.register(PairStub())
    yield
    kinds.unregister("simulator_pair", restore=previous)


@pytest.mark.slow(reason="ranks candidates from many blind pairs")
@pytest.mark.django_db
def test_blind_pairs_are_stored_in_canonical_order_and_rank_the_candidates(pair_adapter):
    sims = ["sim-a", "sim-b", "sim-c"]
    pairs = [(a, b) for a in sims for b in sims if a < b] * 4
    candidates = [
        Candidate(
            object_id=n + 1,
            object_id_b=n + 1001,
            strata={"simulator_first": a, "simulator_second": b},
        )
        for n, (a, b) in enumerate(pairs)
    ]
    queue = queue_create(
        name="Simulators",
        kind="simulator_pair",
        created_by=None,
        size=len(candidates),
        required_ratings=2,
        seed=2,
        candidates=candidates,
    )
    # Raters prefer sim-a > sim-b > sim-c for realism, except one upset per pair type.
    preference = {"sim-a": 3, "sim-b": 2, "sim-c": 1}
    raters = [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in range(2)]
    swaps = set()
    upsets = set()
    for rater in raters:
        while (assignment := assignment_claim(queue=queue, rater=rater)) is not None:
            first = assignment.item.strata["simulator_first"]
            second = assignment.item.strata["simulator_second"]
            swapped = assignment.presentation["swap"]
            swaps.add(swapped)
            shown_first, shown_second = (second, first) if swapped else (first, second)
            better = shown_first if preference[shown_first] > preference[shown_second] else None
            key = (first, second)
            if key not in upsets and rater == raters[1]:
                upsets.add(key)
                better = shown_second if better else shown_first
            choice = "first" if better == shown_first else "second"
            rating_submit(
                assignment=assignment,
                rater=rater,
                answers={"more_realistic": choice, "presses_harder": choice},
            )
    assert swaps == {True, False}, "both orders must occur for the test to mean anything"
    # Stored answers are canonical: a "first" means strata["simulator_first"] won.
    for rating in Rating.objects.filter(queue=queue).select_related("item"):
        first = rating.item.strata["simulator_first"]
        second = rating.item.strata["simulator_second"]
        winner = first if rating.answers["more_realistic"] == "first" else second
        loser = second if winner == first else first
        upset = (first, second) in upsets
        assert (preference[winner] > preference[loser]) or upset

    realism = simulator_ranking(queue)[0]
    assert realism["identified"]
    assert [row["candidate"] for row in realism["rows"]] == ["sim-a", "sim-b", "sim-c"]
    wins = np.zeros((3, 3))
    for rating in Rating.objects.filter(queue=queue).select_related("item"):
        a = sims.index(rating.item.strata["simulator_first"])
        b = sims.index(rating.item.strata["simulator_second"])
        w, lose = (a, b) if rating.answers["more_realistic"] == "first" else (b, a)
        wins[w, lose] += 1
    expected = bradley_terry(wins)
    assert [row["strength"].value for row in realism["rows"]] == pytest.approx(
        sorted(expected)[::-1]
    )
    # Each strength carries its interval from resampling rated items, or says why it has none
    # (strengths not identified in too many resamples of so few comparisons).
    for row in realism["rows"]:
        strength = row["strength"]
        assert strength.method == "cluster bootstrap over rated items (percentile)"
        assert not strength.has_interval or strength.low <= strength.value <= strength.high
    top = realism["rows"][0]["win_rate"]
    assert top.low <= top.value <= top.high


@pytest.mark.slow(reason="rates eight blind pairs and ranks them three ways")
@pytest.mark.django_db
def test_the_ranking_is_per_language_and_the_pooled_one_says_so(pair_adapter, client):
    """Raters prefer sim-a on the English items and sim-b on the Spanish ones: pooled, the two
    tie; per language, each wins every pair of its language."""
    candidates = [
        Candidate(
            object_id=n + 1,
            object_id_b=n + 1001,
            strata={"simulator_first": "sim-a", "simulator_second": "sim-b"},
        )
        for n in range(8)
    ]
    queue = queue_create(
        name="Simulators",
        kind="simulator_pair",
        created_by=None,
        size=len(candidates),
        required_ratings=1,
        seed=2,
        candidates=candidates,
    )
    queue.items.filter(object_id__gt=4).update(language="es")
    rater = UserFactory(roles=[Role.EXPERT_REVIEWER])
    for language in ("en", "es"):
        reader_language_declare(user=rater, language=language)
    while (assignment := assignment_claim(queue=queue, rater=rater)) is not None:
        wanted = "sim-b" if assignment.item.language == "es" else "sim-a"
        swapped = assignment.presentation["swap"]
        shown_first = "sim-b" if swapped else "sim-a"
        choice = "first" if shown_first == wanted else "second"
        rating_submit(
            assignment=assignment,
            rater=rater,
            answers={"more_realistic": choice, "presses_harder": choice},
        )

    def win_rates(language=""):
        table = simulator_ranking(queue, language=language)[0]
        return {r["candidate"]: (r["win_rate"].value, r["win_rate"].n) for r in table["rows"]}

    assert win_rates() == {"sim-a": (0.5, 8), "sim-b": (0.5, 8)}
    assert win_rates("en") == {"sim-a": (1.0, 4), "sim-b": (0.0, 4)}
    assert win_rates("es") == {"sim-a": (0.0, 4), "sim-b": (1.0, 4)}

    client.force_login(UserFactory(roles=[Role.RESEARCHER]))
    url = reverse("review:queue-detail", args=[queue.pk])
    pooled = client.get(url).content.decode()
    assert 'data-testid="ranking-language-switch"' in pooled
    assert "pooled across English and Spanish items" in pooled
    spanish = client.get(url, {"lang": "es"}).content.decode()
    assert 'data-testid="ranking-language-shown"' in spanish
    assert "pooled across English and Spanish items; choose" not in spanish
    table = spanish[spanish.index('data-testid="ranking-more_realistic"') :]
    assert table.index("sim-b") < table.index("sim-a")
    assert table.count('data-testid="ranking-pairs">4<') == 4  # two candidates, two questions
