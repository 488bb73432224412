"""Simulator fidelity figures: shares against hand counts and the stats reference, the
conversations below the bar listed, the pass rates with and without them, per simulator."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluations.models import Conversation, ConversationStatus
from evaluations.models.fidelity import FidelityCriterion
from results.services import results_refresh
from results.services.fidelity import fidelity_figures, fidelity_published
from stats import proportion_from_clusters
from stats.estimates import Estimate
from tests.evaluations.factories import fidelity_reading
from tests.llm.factories import OfflineConfigurationFactory
from tests.results.factories import completed_run, metric_version, scenario

pytestmark = pytest.mark.django_db


def _run(n_versions=1, **run_fields):
    """`n_versions` positive metrics, 3 situations × 2 ages × 2 targets each; the first target
    passes every conversation of situations 1 and 2, the second every one of situation 0."""
    targets = [OfflineConfigurationFactory() for _ in range(2)]
    versions = [metric_version() for _ in range(n_versions)]
    outcomes = []
    for version in versions:
        for base in range(3):
            for age in ("teen", "adult"):
                scen = scenario(version, base, age)
                outcomes += [(scen, targets[0], base > 0), (scen, targets[1], base == 0)]
    run = completed_run(
        targets=targets, versions=versions, outcomes=outcomes, publish_as=None, **run_fields
    )
    return run, targets


def _conversations(run):
    return list(Conversation.objects.filter(run=run).select_related("scenario").order_by("pk"))


def _cluster(conversation):
    return f"{conversation.scenario.metric_version_id}:{conversation.scenario.base_index}"


def _reference(conversations, hit):
    """The share through the stats function from cluster sums counted here, by hand."""
    sums, sizes = {}, {}
    for c in conversations:
        sums[_cluster(c)] = sums.get(_cluster(c), 0) + int(hit(c))
        sizes[_cluster(c)] = sizes.get(_cluster(c), 0) + 1
    keys = sorted(sizes)
    return proportion_from_clusters([sums[k] for k in keys], [sizes[k] for k in keys], over="x")


def _setup():
    """12 conversations: 9 checked (3 below the bar), 2 completed unchecked, 1 failed."""
    run, targets = _run()
    conversations = _conversations(run)
    failures = {1: ("goal",), 4: ("goal", "fresh"), 7: ("persona",)}
    for i, c in enumerate(conversations[:9]):
        fidelity_reading(c, failed=failures.get(i, ()), repeated_lines=2 if i == 4 else 0)
    failed = conversations[11]
    Conversation.objects.filter(pk=failed.pk).update(
        status=ConversationStatus.FAILED, verdict_passed=None, verdict_present=None
    )
    return run, targets, conversations


def test_shares_match_a_hand_count_and_the_cluster_interval():
    run, _, conversations = _setup()
    figures = fidelity_figures(runs=[run], n_resamples=200)
    assert figures["available"] is True
    (simulator,) = figures["simulators"]
    assert simulator["simulator"] == run.simulator.name
    assert (simulator["n_checked"], simulator["n_below_bar"]) == (9, 3)
    checked = conversations[:9]
    meets = Estimate.from_dict(simulator["meets_bar"])
    assert meets.value == pytest.approx(6 / 9)
    reference = _reference(checked, lambda c: c.fidelity.passed)
    assert (meets.low, meets.high) == pytest.approx((reference.low, reference.high))
    assert (meets.n, meets.n_clusters) == (9, 3)
    assert {e.reason: e.count for e in meets.excluded} == {"not checked": 2, "failed": 1}
    held = {c["criterion"]: Estimate.from_dict(c["held"]) for c in simulator["criteria"]}
    assert list(held) == [c.value for c in FidelityCriterion]
    assert held["goal"].value == pytest.approx(7 / 9)
    assert held["persona"].value == pytest.approx(8 / 9)
    assert held["fresh"].value == pytest.approx(8 / 9)
    # Every criterion held by all nine: 100 %, still an interval of positive width.
    for key in ("in_character", "responsive"):
        assert held[key].value == 1.0
        assert held[key].low < held[key].high == pytest.approx(1.0)
    goal = _reference(checked, lambda c: c.fidelity.goal_held)
    assert (held["goal"].low, held["goal"].high) == pytest.approx((goal.low, goal.high))


def test_conversations_below_the_bar_are_listed_with_their_failed_criteria():
    run, _, conversations = _setup()
    (simulator,) = fidelity_figures(runs=[run], n_resamples=200)["simulators"]
    listed = {row["conversation"]: row for row in simulator["below_bar"]}
    assert set(listed) == {conversations[i].pk for i in (1, 4, 7)}
    row = listed[conversations[4].pk]
    assert row["failed_criteria"] == ["goal", "fresh"]
    assert row["repeated_lines"] == 2
    assert row["target"] == conversations[4].target.name
    assert row["situation"] == conversations[4].scenario.base_index + 1
    assert row["scenario"] == conversations[4].scenario_id


def test_pass_rates_with_and_without_conversations_below_the_bar():
    run, targets, conversations = _setup()
    (simulator,) = fidelity_figures(runs=[run], n_resamples=200)["simulators"]
    rows = {row["target_id"]: row for row in simulator["sensitivity"]}
    for target in targets:
        mine = [c for c in conversations if c.target_id == target.pk]
        judged = [c for c in mine if c.pk != conversations[11].pk]
        kept = [
            c for c in judged if c.pk in {x.pk for x in conversations[:9]} and c.fidelity.passed
        ]
        row = rows[target.pk]
        everything = Estimate.from_dict(row["all_judged"])
        meeting = Estimate.from_dict(row["meeting_bar"])
        assert everything.n == len(judged)
        assert everything.value == pytest.approx(
            sum(c.verdict_passed for c in judged) / len(judged)
        )
        reference = _reference(judged, lambda c: c.verdict_passed)
        assert (everything.low, everything.high) == pytest.approx((reference.low, reference.high))
        assert meeting.n == len(kept)
        assert meeting.value == pytest.approx(sum(c.verdict_passed for c in kept) / len(kept))
        reference = _reference(kept, lambda c: c.verdict_passed)
        assert (meeting.low, meeting.high) == pytest.approx((reference.low, reference.high))
        assert row["left_out"] == len(judged) - len(kept)
        assert row["left_out"] == row["left_out_below_bar"] + row["left_out_not_checked"]
        left = {e.reason: e.count for e in meeting.excluded}
        assert left.get("below the fidelity bar", 0) == row["left_out_below_bar"]
    # Target 0: conversations 0, 2, 4, 6, 8, 10; below the bar 4; 10 not checked.
    first = rows[targets[0].pk]
    assert (first["left_out_below_bar"], first["left_out_not_checked"]) == (1, 1)
    assert {e["reason"]: e["count"] for e in first["all_judged"]["excluded"]} == {}
    second = rows[targets[1].pk]
    assert {e["reason"]: e["count"] for e in second["all_judged"]["excluded"]} == {"failed": 1}


def test_figures_are_grouped_by_simulator():
    first, _ = _run()
    simulator = OfflineConfigurationFactory(name="Other simulator")
    second, _ = _run(simulator=simulator)
    for c in _conversations(first):
        fidelity_reading(c)
    for c in _conversations(second)[:4]:
        fidelity_reading(c, failed=("responsive",))
    figures = fidelity_figures(runs=[first, second], n_resamples=200)
    by_name = {s["simulator"]: s for s in figures["simulators"]}
    assert set(by_name) == {first.simulator.name, "Other simulator"}
    assert by_name[first.simulator.name]["meets_bar"]["value"] == 1.0
    other = by_name["Other simulator"]
    assert (other["n_checked"], other["n_below_bar"]) == (4, 4)
    assert other["meets_bar"]["value"] == 0.0
    assert 0.0 == other["meets_bar"]["low"] < other["meets_bar"]["high"]
    assert {e["reason"]: e["count"] for e in other["excluded"]} == {"not checked": 8}


def _queries(run):
    with CaptureQueriesContext(connection) as context:
        fidelity_figures(runs=[run], n_resamples=50)
    return len(context.captured_queries)


def test_query_count_does_not_grow_with_the_run(django_assert_max_num_queries):
    small, _ = _run()
    large, _ = _run(n_versions=3)
    for run in (small, large):
        for i, c in enumerate(_conversations(run)):
            fidelity_reading(c, failed=("goal",) if i % 3 == 0 else ())
    assert _queries(small) == _queries(large)
    with django_assert_max_num_queries(5):
        fidelity_figures(runs=[large], n_resamples=50)


@pytest.mark.slow(reason="refreshes a run's whole analysis to read the stored figures back")
def test_published_figures_come_from_the_stored_analysis():
    run, _, _ = _setup()
    assert fidelity_published(run)["available"] is False
    results_refresh(run=run, n_resamples=50)
    published = fidelity_published(run)
    assert published["available"] is True
    assert published["simulators"][0]["n_checked"] == 9
