"""Comparing two runs of one release per metric, flagging changes beyond the noise."""

import pytest
from django.urls import reverse

from core.exceptions import ApplicationError
from evaluations.services import runs
from evaluations.services.comparison import runs_compare
from llm.models import ModelRole
from tests.evaluations.test_runs import offline_release, offline_run  # noqa: F401
from tests.llm.factories import ModelRoleAssignmentFactory, OfflineConfigurationFactory

pytestmark = pytest.mark.django_db


def _completed(release, profile):
    target = OfflineConfigurationFactory(extra_params={"offline_profile": profile})
    run = offline_run(release, targets=[target], turns=2)
    runs.run_launch(run=run, dispatch=False)
    runs.run_process_inline(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_careful_versus_agreeable_flags_metrics_beyond_the_noise(offline_release):  # noqa: F811
    careful = _completed(offline_release, "careful")
    agreeable = _completed(offline_release, "agreeable")
    rows = runs_compare(run_a=careful, run_b=agreeable)
    assert len(rows) == 2
    for row in rows:
        assert row.a.n == row.b.n == 6
        assert row.a.low <= row.a.rate <= row.a.high
    assert any(row.beyond_noise for row in rows)
    assert rows == sorted(rows, key=lambda r: -abs(r.change))
    # A run compared with a re-run of the same model changes nothing beyond the noise.
    again = _completed(offline_release, "careful")
    assert not any(row.beyond_noise for row in runs_compare(run_a=careful, run_b=again))


def test_runs_of_different_releases_are_refused(offline_release):  # noqa: F811
    run = _completed(offline_release, "careful")
    versions = [item.metric_version for item in offline_release.items.all()]
    other = offline_run(None, metric_versions=versions)
    with pytest.raises(ApplicationError, match="same release"):
        runs_compare(run_a=run, run_b=other)


def test_comparison_page_shows_the_flag(client, maintainer, offline_release):  # noqa: F811
    client.force_login(maintainer)
    a = _completed(offline_release, "careful")
    b = _completed(offline_release, "agreeable")
    page = client.get(reverse("evaluations:run-compare"), {"a": a.pk, "b": b.pk})
    assert page.status_code == 200
    assert b"beyond noise" in page.content
    assert b"offline demo model" in page.content


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
    assert b"spending cap $12.50" in response.content
