"""The methodology page: public, live figures, offline and synthetic labels."""

import pytest
from django.urls import reverse

from results.services import results_refresh
from tests.llm.factories import ModelConfigurationFactory, OfflineConfigurationFactory
from tests.metrics_registry.factories import ROLES
from tests.results.factories import completed_run, metric_version, scenario

pytestmark = pytest.mark.django_db

URL = reverse("results:methodology")


def _run(targets, version="1.0.0", **run_fields):
    versions = [metric_version(), metric_version(polarity="negative")]
    outcomes = []
    for i, v in enumerate(versions):
        for base in range(3):
            for age in ("teen", "adult"):
                scen = scenario(v, base, age)
                outcomes += [(scen, t, (base + j + i) % 3 != 0) for j, t in enumerate(targets)]
    run = completed_run(
        targets=targets, versions=versions, outcomes=outcomes, publish_as=version, **run_fields
    )
    results_refresh(run=run, n_resamples=200)
    return run


@pytest.mark.parametrize("role", ROLES)
def test_methodology_is_public(role, client, request):
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    response = client.get(URL)
    assert response.status_code == 200
    assert b"No published results yet" in response.content
    assert b"controlled stress tests" in response.content


def test_methodology_shows_live_figures_and_offline_label(client):
    run = _run(
        [
            OfflineConfigurationFactory(name="Offline A"),
            OfflineConfigurationFactory(name="Offline B"),
        ]
    )
    response = client.get(URL)
    html = response.content.decode()
    judge = run.analysis.reliability["judge"]
    assert f"{judge['unanimity']['value'] * 100:.1f} %" in html
    # Every figure goes through the one estimate tag: value, interval and n.
    assert html.count('class="estimate') >= 6
    assert f"n = {judge['unanimity']['n']}" in html
    assert 'data-testid="failed-as-fail"' in html
    assert 'data-testid="interval-methods"' in html
    assert "inflated by chance" in html
    assert "Groups (best first)" not in html
    assert "cannot be told apart" not in html
    # Paired model differences instead: a forest plot, a table, and what overlap does not mean.
    assert "overlapping intervals are not evidence of no difference" in html
    assert 'data-testid="differences-positive"' in html
    assert 'aria-label="Difference of pass rates between models, positive metrics' in html
    assert 'data-testid="offline-warning"' in html
    assert 'data-testid="offline-badge"' in html
    assert 'data-testid="no-expert-ratings"' in html
    assert "estimates of how often the behaviour occurs in ordinary use" in html
    assert "single best model" in html
    assert 'data-testid="robustness-positive"' in html
    assert 'data-testid="teen-adult"' in html
    # The count of teen-adult differences goes out with what the test could have found.
    power = run.analysis.robustness["teen_adult"]["power"]
    paragraph = html.split('data-testid="teen-adult-power"')[1].split("</p>")[0]
    assert f"{power['gap'] * 100:.0f} percentage points" in paragraph
    assert f"{power['power'] * 100:.0f} %" in paragraph
    if power["minimum_gap"] is not None:
        assert f"{power['minimum_gap'] * 100:.0f} percentage points" in paragraph
    assert "Offline A" in html
    # What re-asking for evidence does to verdicts, with the verified-only sensitivity.
    assert 'data-testid="reask-effects"' in html
    reasks = run.analysis.reliability["evidence"]["reasks"]
    assert {f["polarity"] for f in reasks["flips"]} == {"positive", "negative"}
    assert reasks["present_verified_only"]["n"] >= 2


def test_real_models_carry_no_offline_label_and_runs_are_selectable(client):
    real = {"judge": ModelConfigurationFactory(), "simulator": ModelConfigurationFactory()}
    first = _run(
        [ModelConfigurationFactory(name="Real A"), ModelConfigurationFactory(name="Real B")], **real
    )
    second = _run([ModelConfigurationFactory(name="Real C")], version="2.0.0", **real)
    html = client.get(URL).content.decode()
    assert "Real C" in html  # the latest release by default
    assert 'data-testid="offline-warning"' not in html
    html = client.get(URL, {"run": first.pk}).content.decode()
    assert "Real A" in html
    assert "Real C" not in html
    assert client.get(URL, {"run": 999999}).status_code == 404
    assert client.get(URL, {"run": "x"}).status_code == 400  # not an id at all (core.ids)
    assert second.pk != first.pk


def test_navigation_has_methodology(client):
    assert URL.encode() in client.get(reverse("core:home")).content


def test_teen_adult_table_names_and_links_metrics_in_percentage_points(client):
    run = _run([OfflineConfigurationFactory(name="Offline A")])
    html = client.get(URL).content.decode()
    table = html.split('data-testid="teen-adult"')[1].split("</table>")[0]
    first = run.analysis.robustness["teen_adult"]["largest"][0]
    from metrics_registry.models import MetricVersion

    version = MetricVersion.objects.select_related("metric").get(pk=first["metric_version"])
    link = reverse("metrics_registry:metric_detail", args=[version.metric.key])
    assert f'<a href="{link}">{version.metric.key}</a>' in table
    assert version.name in table
    assert f"{first['difference']['value'] * 100:+.1f} pp" in table
    # Each table scrolls inside its own container on a narrow screen.
    assert html.count("<table") == html.count('class="table-responsive"')
