"""The anchor study (the same scenarios simulated with and without anchors), from runs the
pipeline itself produced with offline models: its second check, its figures, its public page
and API answer, and a staff reader's view of one of its conversations."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evaluations.models import AnchorCoverage, AnchorRecheck, Conversation
from evaluations.services import runs
from evaluations.services.scenarios import scenarios_generate
from results.services.anchor_study import anchor_study_publish, checker_noise, paired_difference
from results.services.anchors import anchor_consistency
from stats.estimates import Estimate
from tests.evaluations.factories import current_version
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory, release_with

pytestmark = pytest.mark.django_db
REPLICATES = 3
RESAMPLES = 300


@pytest.fixture
def metric():
    metric = MetricFactory()
    scenarios_generate(
        metric_version=current_version(metric), configuration=OfflineConfigurationFactory()
    )
    return metric


def _run(metric, *, use_anchors: bool, replicates: int = REPLICATES):
    helper = OfflineConfigurationFactory()
    run = runs.run_create(
        name=f"Anchors {'on' if use_anchors else 'off'}",
        metric_versions=[current_version(metric)],
        targets=[OfflineConfigurationFactory(extra_params={"offline_profile": "careful"})],
        simulator=helper,
        judge=helper,
        turns=5,
        replicates=replicates,
        judgments_per_conversation=1,
        use_anchors=use_anchors,
        seed=11,
    )
    runs.run_process_inline(run_id=runs.run_launch(run=run, dispatch=False).pk)
    run.refresh_from_db()
    return run


@pytest.fixture
def study_runs(metric):
    return _run(metric, use_anchors=True), _run(metric, use_anchors=False)


@pytest.mark.slow(reason="runs a run with replicates and checks each twice")
def test_every_conversation_of_a_run_with_replicates_is_checked_twice(study_runs):
    for run in study_runs:
        first = AnchorCoverage.objects.filter(conversation__run=run)
        second = AnchorRecheck.objects.filter(conversation__run=run)
        assert first.count() == second.count() == 6 * REPLICATES * 3
    both = list(
        AnchorCoverage.objects.filter(conversation__run__in=study_runs).values_list(
            "conversation_id", "anchor_index", "raised"
        )
    )
    again = {
        (c, a): r
        for c, a, r in AnchorRecheck.objects.filter(conversation__run__in=study_runs).values_list(
            "conversation_id", "anchor_index", "raised"
        )
    }
    # The same anchors of the same conversations were read a second time...
    assert set(again) == {(c, a) for c, a, _ in both}
    # ...independently: somewhere the second reading differs from the first.
    assert any(again[(c, a)] != r for c, a, r in both)


def test_a_run_simulating_each_scenario_once_is_checked_once(metric):
    run = _run(metric, use_anchors=True, replicates=1)
    assert AnchorCoverage.objects.filter(conversation__run=run).exists()
    assert not AnchorRecheck.objects.filter(conversation__run=run).exists()


def test_an_anchor_without_a_verified_quote_is_not_raised(study_runs):
    with_anchors, _ = study_runs
    before = anchor_consistency(with_anchors, n_resamples=RESAMPLES)
    assert (
        before["n_unverified"]
        == AnchorCoverage.objects.filter(
            conversation__run=with_anchors, raised=True, quote_found=False
        ).count()
    )
    raised = AnchorCoverage.objects.filter(conversation__run=with_anchors, raised=True)
    n_raised = raised.count()
    assert n_raised
    raised.update(quote_found=False)
    after = anchor_consistency(with_anchors, n_resamples=RESAMPLES)
    assert after["n_unverified"] == n_raised
    # Nothing verified is raised anywhere, so no replicates disagree.
    nothing = Estimate.from_dict(after["disagreement"])
    assert nothing.value == 0.0
    # 0 of n does not make the rate exactly 0: the interval keeps a positive width.
    assert nothing.low == 0.0 < nothing.high


def test_the_published_study_shows_its_paired_difference_and_checker_noise(
    study_runs, metric, client, api_client
):
    with_anchors, without = study_runs
    draft = release_with("9.0.0", [metric])
    with pytest.raises(ValueError, match="not published"):
        anchor_study_publish(with_run=with_anchors, without_run=without, release=draft)
    release = release_with("9.1.0", [metric], publish=True)
    with pytest.raises(ValueError, match="must use anchors"):
        anchor_study_publish(with_run=without, without_run=with_anchors, release=release)
    assert client.get(reverse("results-api:anchor-study")).status_code == 404

    study = anchor_study_publish(
        with_run=with_anchors, without_run=without, release=release, n_resamples=RESAMPLES
    )
    figures = study.figures
    on = Estimate.from_dict(figures["with_anchors"]["disagreement"])
    off = Estimate.from_dict(figures["without_anchors"]["disagreement"])
    paired = Estimate.from_dict(figures["paired"]["difference"])
    # Both runs checked every scenario: the pairing keeps every anchor of both.
    assert paired.n == on.n + off.n == 2 * 6 * 3
    assert paired.n_clusters == 3  # base scenarios
    assert paired.value == pytest.approx(on.value - off.value)
    assert paired.low < paired.value < paired.high
    noise = Estimate.from_dict(figures["checker_noise"])
    assert noise.n == 2 * 6 * REPLICATES * 3  # every anchor of every conversation, twice read
    assert 0 < noise.value < 1
    assert noise.low < noise.value < noise.high
    assert (
        figures["n_unverified"]
        == AnchorCoverage.objects.filter(
            conversation__run__in=study_runs, raised=True, quote_found=False
        ).count()
    )

    answer = api_client.get(reverse("results-api:anchor-study"))
    assert answer.status_code == 200
    data = answer.json()
    assert data["release"] == "9.1.0"
    assert data["paired"]["difference"]["value"] == pytest.approx(paired.value)
    assert data["paired"]["difference"]["n"] == paired.n
    assert data["checker_noise"]["low"] == pytest.approx(noise.low)
    assert data["with_anchors"]["use_anchors"] is True
    assert data["without_anchors"]["run"] == without.pk
    missing = api_client.get(reverse("results-api:anchor-study"), {"study": study.pk + 1})
    assert missing.status_code == 404
    assert "detail" in missing.json()

    with CaptureQueriesContext(connection) as queries:
        page = client.get(reverse("results:anchor-study"))
    assert page.status_code == 200
    assert len(queries) <= 6
    html = page.content.decode()
    assert 'data-testid="anchor-paired"' in html
    assert "9.1.0" in html
    assert f'data-estimate-n="{paired.n}"' in html
    assert f'data-estimate-n="{noise.n}"' in html
    methodology = client.get(reverse("results:methodology"))
    assert reverse("results:anchor-study") in methodology.content.decode()


def test_staff_read_a_conversation_of_an_anchor_study_run(study_runs, client_for, researcher):
    _, without = study_runs
    conversation = Conversation.objects.filter(run=without).first()
    url = reverse("results:conversation", args=[conversation.pk])
    response = client_for(researcher).get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert "outside any release" in html
    assert 'data-testid="private-badge"' in html
    # Visitors still may not read it: the runs are not official results.
    assert Conversation.objects.get(pk=conversation.pk).run.is_official is False


def test_what_the_pairing_and_the_second_check_leave_out_is_counted(study_runs):
    with_anchors, without = study_runs
    lost = Conversation.objects.filter(run=without).order_by("scenario_id").first().scenario_id
    AnchorCoverage.objects.filter(conversation__run=without, conversation__scenario=lost).delete()
    once = Conversation.objects.filter(run=with_anchors).order_by("pk").first()
    AnchorRecheck.objects.filter(conversation=once).delete()

    paired = Estimate.from_dict(paired_difference(with_anchors, without)["difference"])
    excluded = {e.reason: e.count for e in paired.excluded}
    # The scenario's replicates in the run without anchors were never checked, so its three
    # anchors in the run with anchors have nothing to pair with.
    assert excluded == {
        "conversations whose coverage was not checked": REPLICATES,
        "anchors of scenarios checked in only one of the two runs": 3,
    }
    assert paired.n == 2 * 6 * 3 - 2 * 3
    noise = Estimate.from_dict(checker_noise([with_anchors, without]))
    assert {(e.reason, e.count) for e in noise.excluded} == {
        ("checked conversations without a second check", 1)
    }
    # Of the run without anchors, the lost scenario's conversations have no first check either.
    assert noise.n == (2 * 6 * REPLICATES - REPLICATES - 1) * 3
