"""The demo has no calibration sample (its run is official, and blind items are held off public
pages while their queue is open): wherever a calibrated figure would appear, the demo says what
will appear there and the steps that fill it."""

import pytest
from django.urls import reverse

from evaluations.demo import DEMO_RUN_NAME
from evaluations.models import EvaluationRun, Scenario
from metrics_registry import demo as registry_demo
from metrics_registry.demo_catalog import DEMO_METRICS
from results.demo import demo_summaries_seed
from results.services.calibration_texts import NOT_DRAWN
from results.services.expert_figures import release_expert_figures_frozen
from results.services.judge_trust import HOW_TO_FILL
from review.models import RatingQueue
from stats.ppi import LABEL_MIN_EXPERT_VERDICTS
from tests.demo.test_demo_run import _seed_all

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow(reason="seeds the demo's release, run and queues"),
    pytest.mark.embedded,
]

THRESHOLD = f"at least {LABEL_MIN_EXPERT_VERDICTS} of its conversations"


def _steps(html: str) -> str:
    start = html.index('data-testid="calibration-steps"')
    return html[start : html.index("</ol>", start)]


@pytest.fixture
def demo_run(monkeypatch):
    small = [m for m in DEMO_METRICS if m[2] == "positive"][:1] + [
        m for m in DEMO_METRICS if m[2] == "negative"
    ][:1]
    monkeypatch.setattr(registry_demo, "DEMO_METRICS", small)
    _seed_all()
    demo_summaries_seed()
    run = EvaluationRun.objects.get(name=DEMO_RUN_NAME)
    assert run.is_official
    assert not RatingQueue.objects.filter(purpose="calibration").exists()
    return run


def test_the_demo_says_where_calibrated_rates_will_appear_and_how_to_fill_them(demo_run, client):
    # Visitors read these steps: they say who draws the sample, not where in the workspace.
    form = reverse("review:run-queue-create")
    drawn = "researchers draw its calibration sample"

    methodology = client.get(reverse("results:methodology")).content.decode()
    assert NOT_DRAWN in methodology
    steps = _steps(methodology)
    assert steps.count("<li>") == 3
    assert drawn in steps
    assert form not in methodology
    assert "blind" in steps
    assert THRESHOLD in steps
    # What will appear: every model's judge-only rate, the calibrated one awaiting verdicts.
    assert 'data-testid="calibration-table"' in methodology
    assert HOW_TO_FILL.replace("'", "&#x27;") in methodology  # judge trust, not yet checked

    target = demo_run.targets.order_by("name").first()
    label = client.get(reverse("results:label", args=[target.pk])).content.decode()
    assert 'data-testid="label-calibration-none"' in label
    assert "Here will appear this model" in label
    steps = _steps(label)
    assert drawn in steps
    assert form not in label
    assert THRESHOLD in steps

    api = client.get(reverse("results-api:run-calibration", args=[demo_run.pk])).json()
    assert api["calibration_queue"] is None
    assert api["reason"] == NOT_DRAWN
    assert drawn in api["how_to_fill"]
    assert form not in api["how_to_fill"]
    assert THRESHOLD in api["how_to_fill"]
    for rate in api["rates"]:
        assert rate["calibrated"]["value"] is None
        assert rate["calibrated"]["reason"]
        assert rate["ratings_needed_for_label"] == LABEL_MIN_EXPERT_VERDICTS


def test_the_demo_releases_figures_are_frozen_with_its_scenarios_and_run(demo_run):
    # The seed publishes the release before writing scenarios and the run; its figures must
    # not stay frozen at "0 of 0 scenarios".
    frozen = release_expert_figures_frozen(demo_run.release_id)
    assert frozen is not None
    suite = frozen["scenarios"]["n_suite"]
    versions = demo_run.release.items.values_list("metric_version_id", flat=True)
    expected = Scenario.objects.active().expanded().filter(metric_version_id__in=versions)
    assert suite == expected.count() > 0
    assert str(demo_run.pk) in frozen["runs"]
    first = frozen["frozen_at"]
    # A second seed keeps the copy (idempotent), so a cited figure does not move.
    demo_summaries_seed()
    assert release_expert_figures_frozen(demo_run.release_id)["frozen_at"] == first
