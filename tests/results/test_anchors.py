"""Anchor coverage measured on conversations the pipeline itself produced (offline models)."""

from collections import defaultdict

import pytest

from evaluations.models import AnchorCoverage, Turn
from evaluations.services import runs
from evaluations.services.scenarios import scenarios_generate
from results.services.reliability import anchor_consistency
from stats.estimates import Estimate
from tests.evaluations.factories import current_version
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db
REPLICATES = 4


@pytest.fixture
def version():
    version = current_version(MetricFactory())
    scenarios_generate(metric_version=version, configuration=OfflineConfigurationFactory())
    return version


def _run(version, *, use_anchors: bool):
    helper = OfflineConfigurationFactory()
    run = runs.run_create(
        name=f"Anchors {'on' if use_anchors else 'off'}",
        metric_versions=[version],
        targets=[OfflineConfigurationFactory(extra_params={"offline_profile": "careful"})],
        simulator=helper,
        judge=helper,
        turns=5,
        replicates=REPLICATES,
        judgments_per_conversation=1,
        use_anchors=use_anchors,
        seed=11,
    )
    runs.run_process_inline(run_id=runs.run_launch(run=run, dispatch=False).pk)
    run.refresh_from_db()
    return run


def test_anchor_coverage_is_measured_per_anchor_and_varies_across_replicates(version):
    with_anchors = _run(version, use_anchors=True)
    without = _run(version, use_anchors=False)
    for run in (with_anchors, without):
        assert run.conversations_completed == 6 * REPLICATES
        # Every conversation has one stored reading per anchor (three in the offline scenarios).
        assert AnchorCoverage.objects.filter(conversation__run=run).count() == 6 * REPLICATES * 3
    raised = AnchorCoverage.objects.filter(conversation__run=with_anchors, raised=True)
    assert raised.exists()
    for row in raised.exclude(turn=None)[:10]:
        turn = Turn.objects.get(conversation=row.conversation, index=row.turn)
        assert row.quote_found == (row.quote.casefold() in turn.user_text_clean.casefold())

    # Readings of the same anchor differ between replicates of one scenario and target. (Which
    # ones differ depends on the seeds, which include row ids, so the check pools both runs.)
    readings = defaultdict(set)
    for run_id, scenario_id, anchor_index, was_raised in AnchorCoverage.objects.filter(
        conversation__run__in=[with_anchors, without]
    ).values_list("conversation__run_id", "conversation__scenario_id", "anchor_index", "raised"):
        readings[(run_id, scenario_id, anchor_index)].add(was_raised)
    assert any(len(values) > 1 for values in readings.values())

    # With anchors in the brief the user raises nearly all of them; without, few.
    def raised_share(run):
        rows = AnchorCoverage.objects.filter(conversation__run=run)
        return rows.filter(raised=True).count() / rows.count()

    assert raised_share(with_anchors) > 0.8 > 0.3 > raised_share(without)

    on = Estimate.from_dict(anchor_consistency(with_anchors, n_resamples=500)["disagreement"])
    off_figure = anchor_consistency(without, n_resamples=500)
    off = Estimate.from_dict(off_figure["disagreement"])
    assert off_figure["use_anchors"] is False
    assert on.n == off.n == 6 * 3  # (scenario, target) groups × anchors
    assert on.n_clusters == off.n_clusters == 3  # base scenarios
    assert off.value > 0
    assert off.has_interval
    assert off.low <= off.value <= off.high
    # Without anchors the simulator's brief held no anchor plan.
    assert not Turn.objects.filter(conversation__run=without, anchor_index__isnull=False).exists()


def test_a_run_without_replicates_has_no_consistency_figure(version):
    helper = OfflineConfigurationFactory()
    run = runs.run_create(
        name="Single",
        metric_versions=[version],
        targets=[helper],
        simulator=helper,
        judge=helper,
        turns=3,
        judgments_per_conversation=1,
    )
    figure = anchor_consistency(run)
    assert figure["available"] is False
    assert "replicates" in figure["reason"]
