"""Experts check the fidelity checker: their majority realism answer against its verdict,
with ratings made through the review services."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from core.roles import Role
from evaluations.models import Conversation, EvaluationRun
from results.services.fidelity_agreement import NO_RATINGS, fidelity_expert_agreement
from review.kinds import Candidate
from review.services import queue_create, queue_set_status
from review.services.panel import panel_ratings_record
from stats import cohen_estimate
from tests.evaluations.factories import fidelity_reading
from tests.factories import UserFactory
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import release_with
from tests.results.factories import completed_run, metric_version, scenario

pytestmark = pytest.mark.django_db


def _draft_run():
    """1 metric × 3 situations × 2 ages × 2 targets = 12 conversations, not public yet (blind
    ratings need conversations that are not)."""
    targets = [OfflineConfigurationFactory() for _ in range(2)]
    version = metric_version()
    scenarios = [scenario(version, base, age) for base in range(3) for age in ("teen", "adult")]
    outcomes = [(s, t, True) for s in scenarios for t in targets]
    run = completed_run(
        targets=targets, versions=[version], outcomes=outcomes, publish_as=None, official=False
    )
    release = release_with("1.0.0", [version.metric])
    EvaluationRun.objects.filter(pk=run.pk).update(release=release)
    return run


def _record(conversations, answers):
    """``answers[k][i]``: rater k's "realistic" answer on conversation i."""
    raters = [UserFactory(roles=[Role.EXPERT_REVIEWER]) for _ in answers]
    anchors = {f"anchor_{i}": "yes" for i in range(1, 4)}
    queue = queue_create(
        name="realism",
        kind="conversation",
        created_by=None,
        fraction=1.0,
        required_ratings=len(raters),
        eligible_raters=raters,
        candidates=[Candidate(object_id=c.pk) for c in conversations],
    )
    panel_ratings_record(
        queue=queue,
        ratings={
            rater: {
                c.pk: {"realistic": answers[k][i], "pressure": "mild", **anchors}
                for i, c in enumerate(conversations)
            }
            for k, rater in enumerate(raters)
        },
    )
    # A blind kind's ratings count once its queue is released.
    queue_set_status(queue=queue, status="closed")


def test_no_ratings_says_so_with_the_count():
    run = _draft_run()
    for c in Conversation.objects.filter(run=run):
        fidelity_reading(c)
    figure = fidelity_expert_agreement(runs=[run], n_resamples=100)
    assert figure["n_ratings"] == 0
    assert figure["reason"] == NO_RATINGS
    assert figure["agreement"]["value"] is None
    assert figure["cohen_kappa"]["value"] is None


def test_agreement_and_kappa_against_a_hand_count_and_scikit_learn():
    run = _draft_run()
    conversations = list(
        Conversation.objects.filter(run=run).select_related("scenario").order_by("pk")
    )
    rated, tied, unchecked = conversations[:9], conversations[9], conversations[10]
    # The checker's verdict on the nine rated conversations, and three experts' answers:
    # majorities realistic, realistic, not, realistic, not, not, realistic, realistic, not.
    check = [True, True, False, True, True, False, False, True, True]
    answers = [
        ["yes", "yes", "no", "yes", "no", "no", "yes", "yes", "no"],
        ["yes", "no", "no", "yes", "yes", "no", "yes", "no", "no"],
        ["no", "yes", "yes", "yes", "no", "no", "no", "yes", "yes"],
    ]
    majority = [True, True, False, True, False, False, True, True, False]
    for c, passed in zip(rated, check, strict=True):
        fidelity_reading(c, failed=() if passed else ("goal",))
    fidelity_reading(tied)
    _record(rated + [unchecked], [row + ["yes"] for row in answers])
    _record([tied], [["yes"], ["no"]])

    figure = fidelity_expert_agreement(runs=[run], n_resamples=500)
    assert figure["n_pairs"] == 9
    assert figure["n_conversations"] == 11
    assert figure["n_ratings"] == 3 * 10 + 2
    # Real accounts, not the demo's simulated panel: nothing to mark as seeded.
    assert (figure["seeded_demo"], figure["n_seeded_demo_ratings"]) == (False, 0)
    assert {e["reason"]: e["count"] for e in figure["excluded"]} == {
        "experts tied": 1,
        "not checked": 1,
    }
    agreed = sum(a == b for a, b in zip(check, majority, strict=True))
    assert agreed == 6
    assert figure["agreement"]["value"] == pytest.approx(6 / 9)
    assert figure["agreement"]["n"] == 9
    kappa = cohen_kappa_score(np.array(check, dtype=int), np.array(majority, dtype=int))
    # po = 6/9; the check says yes 6/9, the experts 5/9: pe = (30 + 12) / 81.
    assert kappa == pytest.approx((6 / 9 - 42 / 81) / (1 - 42 / 81))
    assert figure["cohen_kappa"]["value"] == pytest.approx(kappa)
    low, high = figure["cohen_kappa"]["low"], figure["cohen_kappa"]["high"]
    assert -1 <= low < kappa < high <= 1
    clusters = [f"{c.scenario.metric_version_id}:{c.scenario.base_index}" for c in rated]
    reference = cohen_estimate(
        np.array(check, dtype=int),
        np.array(majority, dtype=int),
        np.array(clusters),
        over="base scenarios",
        n_resamples=500,
        seed=0,
    )
    assert (low, high) == pytest.approx((reference.low, reference.high))
