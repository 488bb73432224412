import pytest
from django.core.management import call_command
from django.urls import reverse

from metrics_registry.demo import DEMO_BENCHMARK_SLUG, DEMO_METRICS, demo_registry_seed
from metrics_registry.models import Metric

pytestmark = pytest.mark.django_db

MODELS = [
    "area",
    "subarea",
    "labelcategory",
    "benchmark",
    "metric",
    "metricversion",
    "metricstatuschange",
    "release",
]


@pytest.mark.parametrize("model", MODELS)
def test_admin_lists_every_registry_model(admin_client, catalog, model):
    assert (
        admin_client.get(reverse(f"admin:metrics_registry_{model}_changelist")).status_code == 200
    )


def test_published_release_is_read_only_in_admin(admin_client, catalog):
    release = catalog["published"]
    url = reverse("admin:metrics_registry_release_change", args=[release.pk])
    page = admin_client.get(url).content.decode()
    assert 'name="title"' not in page  # shown as text, not as an input
    assert reverse("admin:metrics_registry_release_delete", args=[release.pk]) not in page
    admin_client.post(url, {"title": "Rewritten"})
    release.refresh_from_db()
    assert release.title == "Release 1.0.0"
    draft_url = reverse("admin:metrics_registry_release_change", args=[catalog["draft"].pk])
    assert 'name="title"' in admin_client.get(draft_url).content.decode()


def test_metric_versions_are_read_only_in_admin(admin_client, catalog):
    version = catalog["support"].current_version
    url = reverse("admin:metrics_registry_metricversion_change", args=[version.pk])
    page = admin_client.get(url).content.decode()
    assert 'name="criterion"' not in page


def test_demo_seed_is_idempotent():
    first = demo_registry_seed()
    assert f"{len(DEMO_METRICS)} metrics created" in first
    assert "0 metrics created" in demo_registry_seed()
    metrics = Metric.objects.filter(benchmark__slug=DEMO_BENCHMARK_SLUG)
    assert metrics.count() == len(DEMO_METRICS)
    assert {m.current_version.polarity for m in metrics} == {"positive", "negative"}


@pytest.mark.slow(reason="runs the demo seed command")
def test_seed_demo_command_runs_the_registry_step(capsys):
    call_command("seed_demo", verbosity=0)
    assert "Registry demo" in capsys.readouterr().out
    assert Metric.objects.filter(benchmark__slug=DEMO_BENCHMARK_SLUG).exists()
