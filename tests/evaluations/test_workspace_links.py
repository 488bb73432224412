"""Researcher paths: from a run plan to the scenarios it lacks, and a scenario page that waits."""

import time

import pytest
from django.urls import reverse

from evaluations.services import runs
from evaluations.services.scenarios import scenarios_generate
from llm.models import ModelRole
from tests.evaluations.factories import current_version
from tests.llm.factories import ModelRoleAssignmentFactory, OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db


def test_the_run_plan_links_each_metric_that_lacks_scenarios(client_for, maintainer):
    metric = MetricFactory()
    offline = OfflineConfigurationFactory()
    run = runs.run_create(
        name="Needs scenarios",
        metric_versions=[current_version(metric)],
        targets=[offline],
        simulator=offline,
        judge=offline,
    )
    page = client_for(maintainer).get(reverse("evaluations:run-detail", args=[run.pk]))
    notice = page.content.decode().split('data-testid="missing-scenarios"')[1].split("</div>")[0]
    link = reverse("evaluations:metric-scenarios", args=[current_version(metric).pk])
    assert f'<a class="alert-link" href="{link}">{metric.key}</a>' in notice


def test_generate_leads_to_a_page_that_polls_until_the_set_is_written(
    client_for, researcher, django_capture_on_commit_callbacks
):
    writer = OfflineConfigurationFactory()
    ModelRoleAssignmentFactory(role=ModelRole.SCENARIO_WRITER, configuration=writer)
    version = current_version(MetricFactory())
    client = client_for(researcher)
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(reverse("evaluations:scenario-generate", args=[version.pk]))
    watched = response["Location"]
    assert "?generating=" in watched
    page = client.get(watched).content.decode()
    assert 'hx-trigger="every 2s"' in page
    assert "refresh this page" not in page

    scenarios_generate(metric_version=version)
    fragment = client.get(watched, headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in fragment
    assert 'data-testid="generation-finished"' in fragment
    assert "hx-trigger" not in fragment  # polling stops once the set is complete


def test_a_generation_that_never_finishes_stops_polling_and_says_so(client_for, researcher):
    version = current_version(MetricFactory())
    url = reverse("evaluations:metric-scenarios", args=[version.pk])
    stale = int(time.time()) - 3600
    page = client_for(researcher).get(f"{url}?generating={stale}").content.decode()
    assert "hx-trigger" not in page
    assert "has not finished after ten minutes" in page


def test_the_polled_fragment_carries_the_scenario_table(client_for, researcher):
    writer = OfflineConfigurationFactory()
    version = current_version(MetricFactory())
    scenarios_generate(metric_version=version, configuration=writer)
    url = reverse("evaluations:metric-scenarios", args=[version.pk])
    fragment = client_for(researcher).get(url, headers={"HX-Request": "true"}).content.decode()
    assert fragment.count("<tr>") == 1 + 6  # the header row and six scenarios
