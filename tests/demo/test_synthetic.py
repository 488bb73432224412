"""The synthetic dataset command at small scale: row counts and unmistakable labels."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from evaluations.models import Conversation, Judgment, RunStatus, Scenario
from llm.models import ModelConfiguration
from metrics_registry.models import Metric, MetricVersion, Release
from results.models import PassRateSummary, RunAnalysis

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


@pytest.mark.slow(reason="generates a synthetic release")
def test_small_synthetic_dataset_row_counts():
    call_command(
        "generate_synthetic_dataset", metrics=30, models=3, resamples=100, release_version="0.0.7"
    )
    release = Release.objects.get(version="0.0.7")
    assert release.is_published
    assert "Synthetic" in release.title
    assert release.items.count() == 30
    versions = MetricVersion.objects.filter(release_items__release=release)
    assert versions.filter(polarity="positive").count() == round(30 * 460 / 809)
    assert Metric.objects.filter(key__startswith="SYN-").count() == 30
    # Several sources (so leave-one-benchmark-out means something); some metrics in 2 subareas.
    assert Metric.objects.filter(key__startswith="SYN-").values("benchmark").distinct().count() > 2
    through = MetricVersion.subareas.through.objects.filter(metricversion__in=versions)
    assert 30 <= through.count() <= 60
    assert Scenario.objects.filter(metric_version__in=versions).count() == 180
    run = release.evaluation_runs.get(is_official=True)
    assert run.status == RunStatus.COMPLETED
    assert run.name.startswith("Synthetic")
    assert set(run.targets.values_list("name", flat=True)) == {
        "Synthetic model 01",
        "Synthetic model 02",
        "Synthetic model 03",
    }
    assert Conversation.objects.filter(run=run).count() == 540
    assert Judgment.objects.filter(conversation__run=run).count() == 1620
    assert not ModelConfiguration.objects.filter(name__startswith="Synthetic", is_active=True)
    # The majority of the judgments is the stored verdict.
    disagreeing = Conversation.objects.filter(
        run=run, verdict_present=True, judgments_present__lt=2
    )
    assert not disagreeing.exists()
    assert PassRateSummary.objects.filter(run=run, level="overall").count() == 3 * 2 * 3
    analysis = RunAnalysis.objects.get(run=run)
    assert analysis.reliability["judge"]["n_conversations"] == 540


def test_synthetic_dataset_refuses_an_existing_version():
    call_command(
        "generate_synthetic_dataset",
        metrics=4,
        positive=2,
        models=1,
        no_refresh=True,
        release_version="0.0.8",
    )
    with pytest.raises(CommandError, match="exists already"):
        call_command(
            "generate_synthetic_dataset",
            metrics=4,
            positive=2,
            models=1,
            no_refresh=True,
            release_version="0.0.8",
        )


def test_synthetic_flag_is_set_and_shown_like_the_offline_label(client, maintainer):
    from django.urls import reverse

    from demo.synthetic import SyntheticSpec, synthetic_dataset_generate
    from evaluations.models import EvaluationRun
    from llm.models import ModelConfiguration
    from results.selectors import run_is_synthetic

    synthetic_dataset_generate(
        spec=SyntheticSpec(metrics=4, positive=2, models=2, seed=5, release_version="0.0.905")
    )
    run = EvaluationRun.objects.get(synthetic=True, is_official=True)
    assert run.release.synthetic
    assert set(run.targets.values_list("synthetic", flat=True)) == {True}
    assert ModelConfiguration.objects.get(pk=run.judge_id).synthetic
    # Read from the flags, not guessed from names.
    EvaluationRun.objects.filter(pk=run.pk).update(name="Nightly")
    run.refresh_from_db()
    assert run_is_synthetic(run)
    client.force_login(maintainer)
    for url in (
        reverse("evaluations:run-detail", args=[run.pk]),
        reverse("metrics_registry:release_detail", args=[run.release.version]),
    ):
        assert 'data-testid="synthetic-badge"' in client.get(url).content.decode(), url


def test_synthetic_release_has_an_overview_readings_and_a_label_for_every_model(client):
    from django.urls import reverse

    from demo.synthetic import SyntheticSpec, synthetic_dataset_generate
    from evaluations.models import EvaluationRun
    from results.audiences import AUDIENCES
    from results.services import results_refresh

    synthetic_dataset_generate(
        spec=SyntheticSpec(metrics=12, positive=6, models=3, seed=7, release_version="0.0.906")
    )
    run = EvaluationRun.objects.get(synthetic=True, is_official=True)
    results_refresh(run=run, n_resamples=50)
    response = client.get(reverse("results:label-overview"))
    overview = response.content.decode()
    assert response.status_code == 200, overview[overview.find("<main") :][:600]
    assert overview.count('data-testid="overview-row"') == 3
    for target in run.targets.all():
        # Without ?run=, the headline run holding the model.
        assert client.get(reverse("results:label", args=[target.pk])).status_code == 200
        for audience in AUDIENCES:
            url = reverse("results:label-audience", args=[target.pk, audience])
            html = client.get(url).content.decode()
            assert "Synthetic data" in html, audience
            assert 'data-testid="tested"' in html


@pytest.mark.slow(reason="generates a synthetic release")
def test_the_loaded_tables_have_planner_statistics_on_postgresql():
    """Migrations analysed the tables empty; a bulk load leaves the planner thinking so (with
    autovacuum off, or not run yet) and public pages plan their queries for empty tables."""
    if connection.vendor != "postgresql":
        pytest.skip("planner statistics are PostgreSQL's")
    call_command(
        "generate_synthetic_dataset", metrics=30, models=3, resamples=100, release_version="0.0.8"
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'evaluations_conversation'")
        (estimate,) = cursor.fetchone()
    assert estimate >= Conversation.objects.count() > 0
