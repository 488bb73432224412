"""Comparing two runs of one release per metric, flagging changes beyond the noise."""

import pytest
from django.urls import reverse

import stats as statistics
from core.exceptions import ApplicationError
from evaluations.models import Scenario
from evaluations.services import runs
from evaluations.services.comparison import PAIRED_CHANGE_METHOD, runs_compare
from llm.models import ModelRole
from tests.evaluations.factories import current_version
from tests.evaluations.test_runs import offline_release, offline_run  # noqa: F401
from tests.llm.factories import ModelRoleAssignmentFactory, OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db


def _completed(release, *targets, replicates=1):
    run = offline_run(release, targets=list(targets), turns=2, replicates=replicates)
    runs.run_launch(run=run, dispatch=False)
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    return run


def _target(profile):
    return OfflineConfigurationFactory(extra_params={"offline_profile": profile})


def _behaves(target, profile):
    """The same model configuration, whose endpoint now serves another model."""
    target.extra_params = {"offline_profile": profile}
    target.save(update_fields=["extra_params"])


@pytest.mark.slow(reason="simulates and judges two offline runs, each with its fidelity check")
def test_a_model_that_changes_between_runs_is_flagged_beyond_the_noise(offline_release):  # noqa: F811
    target = _target("careful")
    before = _completed(offline_release, target, replicates=3)
    _behaves(target, "agreeable")
    after = _completed(offline_release, target, replicates=3)
    rows = runs_compare(run_a=before, run_b=after)
    assert len(rows) == 2
    for row in rows:
        assert row.model == target.name
        assert row.a.n == row.b.n == 18
        assert row.a.low <= row.a.value <= row.a.high
        assert row.a.method == statistics.WILSON_EFFECTIVE
        # Paired by base scenario: equal sizes per scenario make it B minus A exactly.
        change = row.change_estimate
        assert change.method == PAIRED_CHANGE_METHOD
        assert change.value == pytest.approx(row.change)
        assert change.n_clusters == 3
        # Bounded by construction: a change of pass rate lies within [-1, 1].
        # A change of a full -100 points sits on its bound; the interval still has width.
        assert -1.0 <= change.low <= change.value <= change.high <= 1.0
        assert change.high - change.low > 0.0
        # Flagged only where the paired interval excludes zero (and the FDR step agrees).
        assert not row.beyond_noise or change.excludes_zero
    assert any(row.beyond_noise for row in rows)
    assert rows == sorted(rows, key=lambda r: -abs(r.change))
    # A re-run of the same model changes nothing beyond the noise.
    _behaves(target, "careful")
    again = _completed(offline_release, target, replicates=3)
    assert not any(row.beyond_noise for row in runs_compare(run_a=before, run_b=again))


def test_swapping_models_is_not_reported_as_a_change(offline_release):  # noqa: F811
    careful, agreeable = _target("careful"), _target("agreeable")
    a = _completed(offline_release, careful, agreeable)
    b = _completed(offline_release, agreeable, careful)
    rows = runs_compare(run_a=a, run_b=b)
    # Each model is set against itself: same behaviour, no change, whatever the order.
    assert {row.model for row in rows} == {careful.name, agreeable.name}
    assert all(row.change == 0 for row in rows)
    assert not any(row.beyond_noise for row in rows)
    only_careful = _completed(offline_release, careful)
    other = _completed(offline_release, _target("agreeable"))
    with pytest.raises(ApplicationError, match="no model configuration in common"):
        runs_compare(run_a=only_careful, run_b=other)


def test_runs_of_different_releases_are_refused(offline_release):  # noqa: F811
    run = _completed(offline_release, _target("careful"))
    versions = [item.metric_version for item in offline_release.items.all()]
    other = offline_run(None, metric_versions=versions)
    with pytest.raises(ApplicationError, match="same release"):
        runs_compare(run_a=run, run_b=other)


@pytest.mark.slow(reason="simulates and judges two offline runs, each with its fidelity check")
def test_comparison_page_shows_the_flag_in_percent(client, maintainer, offline_release):  # noqa: F811
    client.force_login(maintainer)
    target = _target("careful")
    a = _completed(offline_release, target, replicates=3)
    _behaves(target, "agreeable")
    b = _completed(offline_release, target, replicates=3)
    page = client.get(reverse("evaluations:run-compare"), {"a": a.pk, "b": b.pk})
    assert page.status_code == 200
    html = page.content.decode()
    assert "beyond noise" in html
    assert "offline demo model" in html
    assert " %" in html
    assert "n = 18" in html
    assert " pp" in html  # the change, in percentage points


def test_maintainers_create_a_run_from_the_web_and_see_its_plan(
    client,
    maintainer,
    offline_release,  # noqa: F811
):
    client.force_login(maintainer)
    assert client.get(reverse("evaluations:run-create")).status_code == 200
    target = OfflineConfigurationFactory()
    ModelRoleAssignmentFactory(role=ModelRole.TARGET, configuration=target)
    helper = OfflineConfigurationFactory()
    response = client.post(
        reverse("evaluations:run-create"),
        {
            "name": "From the web",
            "release": offline_release.pk,
            "targets": [target.pk],
            "simulator": helper.pk,
            "judge": helper.pk,
            "turns": 8,
            "replicates": 1,
            "judgments_per_conversation": 3,
            "spending_cap": "12.50",
        },
        follow=True,
    )
    assert response.status_code == 200
    assert b"12 conversations" in response.content
    assert b"Launch" in response.content
    assert b"Spending cap $12.50" in response.content


def test_comparison_leaves_out_metrics_outside_the_release(offline_release):  # noqa: F811
    target = _target("careful")
    a = _completed(offline_release, target)
    b = _completed(offline_release, target)
    # A run made before runs were held to their release's metrics holds an outsider.
    stray = Scenario.objects.filter(metric_version__release_items__release=offline_release)[0]
    stray_metric = MetricFactory(name="Outside the release")
    Scenario.objects.filter(pk=stray.pk).update(metric_version=current_version(stray_metric))
    keys = {row.metric_key for row in runs_compare(run_a=a, run_b=b)}
    assert stray_metric.key not in keys
    assert keys == {item.metric.key for item in offline_release.items.all()}
