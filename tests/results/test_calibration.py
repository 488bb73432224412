"""Calibrated pass rates from an offline panel run and blind expert ratings made through the
review services: the calibration queue's ratings move the calibrated rate, the triage queue's
never do, and the label shows the figure only from its stated threshold."""

import io

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from core.caches import page_cache
from core.roles import Role
from core.services import reader_language_declare
from evaluations.models import Conversation, EvaluationRun, Scenario
from evaluations.services.closing import verdict_passed
from results.management.commands.audit_figures import local_fetch
from results.services.calibration import run_calibration
from results.services.figure_audit import site_audit
from results.services.judge_trust import run_judge_trust
from results.services.refresh import results_refresh
from review.models import QueuePurpose, QueueStatus, RatingQueue
from review.services import assignment_claim, queue_set_status, rating_submit
from review.services.calibration import (
    calibration_queue_create,
    disagreement_scores,
    triage_queue_create,
)
from stats.ppi import LABEL_MIN_EXPERT_VERDICTS
from tests.evaluations.test_runs import offline_release  # noqa: F401 - fixture
from tests.factories import UserFactory
from tests.llm.factories import OfflineConfigurationFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def panel_run(offline_release):  # noqa: F811
    OfflineConfigurationFactory(name="Sim")
    OfflineConfigurationFactory(name="Careful", extra_params={"offline_profile": "careful"})
    OfflineConfigurationFactory(name="Agreeable", extra_params={"offline_profile": "agreeable"})
    for profile in ("lenient", "strict", "noisy"):
        OfflineConfigurationFactory(name=f"J {profile}", extra_params={"offline_profile": profile})
    call_command(
        "run_evaluation",
        "--release=1.0.0",
        "--targets=Careful,Agreeable",
        "--simulator=Sim",
        "--judges=J lenient,J strict,J noisy",
        "--turns=2",
        "--judgments=3",
        "--seed=7",
        "--yes",
        "--inline",
        stdout=io.StringIO(),
    )
    run = EvaluationRun.objects.get()
    assert run.status == "completed"
    # Blind queues are drawn before the run is made official.
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=False)
    run.refresh_from_db()
    return run


def _rate(queue, rater, expert_passes):
    """Submit every item of ``queue`` with the verdict whose pass is ``expert_passes(c)``, then
    close it: a blind queue's verdicts count once it is released."""
    conversations = {
        c.pk: c for c in Conversation.objects.filter(run=queue.run).select_related("scenario")
    }
    rated = 0
    while (assignment := assignment_claim(queue=queue, rater=rater)) is not None:
        c = conversations[assignment.item.object_id]
        polarity = c.scenario.metric_version.polarity
        want = expert_passes(c)
        present = verdict_passed(present=True, polarity=polarity) == want
        rating_submit(
            assignment=assignment,
            rater=rater,
            answers={"examples_adequate": "yes", "verdict": "present" if present else "absent"},
        )
        rated += 1
    queue_set_status(queue=queue, status=QueueStatus.CLOSED)
    return rated


@pytest.fixture
def small_minimum(monkeypatch):
    """This small run's rates published from two expert verdicts over two base scenarios: the
    tests below check the estimator, not the publication minimum."""
    import stats.ppi

    monkeypatch.setattr(stats.ppi, "LABEL_MIN_EXPERT_VERDICTS", 2)
    monkeypatch.setattr(stats.ppi, "LABEL_MIN_BASE_SCENARIOS", 2)


def _judged(run, target_name, polarity=None):
    rows = Conversation.objects.filter(
        run=run, target__name=target_name, verdict_passed__isnull=False
    )
    if polarity:
        rows = rows.filter(scenario__metric_version__polarity=polarity)
    return list(rows.select_related("scenario__metric_version"))


def test_calibration_sample_is_stratified_with_recorded_probabilities(panel_run, researcher):
    queue = calibration_queue_create(
        run=panel_run, name="Calibration", created_by=researcher, fraction=0.5, seed=3
    )
    assert queue.purpose == QueuePurpose.CALIBRATION
    assert queue.kind == "external_panel"
    items = list(queue.items.all())
    judged = Conversation.objects.filter(run=panel_run, verdict_passed__isnull=False)
    strata = {}
    for c in judged.select_related("target", "scenario__metric_version"):
        key = (c.target.name, c.scenario.metric_version.polarity)
        strata[key] = strata.get(key, 0) + 1
    drawn = {}
    for item in items:
        key = (item.strata["model"], item.strata["polarity"])
        drawn[key] = drawn.get(key, 0) + 1
    assert set(drawn) == set(strata)
    for item in items:
        key = (item.strata["model"], item.strata["polarity"])
        assert item.inclusion_probability == pytest.approx(drawn[key] / strata[key])


@pytest.mark.slow(reason="builds a run with expert ratings and refreshes its figures")
def test_calibrated_rate_follows_the_experts_and_ignores_triage(
    panel_run, researcher, small_minimum
):
    # The whole run is the sample: every inclusion probability is 1, so the calibrated rate is
    # exactly the experts' own pass rate, whatever the judge said.
    queue = calibration_queue_create(
        run=panel_run, name="Calibration", created_by=researcher, fraction=1.0, seed=1
    )
    assert run_calibration(panel_run).rated == 0
    # The whole run is held for blind review while the sample takes ratings: no rate counts it.
    assert run_calibration(panel_run).for_target(_judged(panel_run, "Careful")[0].target_id) is None

    # The experts pass exactly the conversations of even primary key.
    results_refresh(run=panel_run, n_resamples=200)
    _rate(queue, UserFactory(roles=[Role.EXPERT_REVIEWER]), lambda c: c.pk % 2 == 0)
    # The whole run was held while the sample took ratings: the pass rates count it again.
    results_refresh(run=panel_run, n_resamples=200)
    first = run_calibration(panel_run)
    for name in ("Careful", "Agreeable"):
        for polarity in ("positive", "negative"):
            judged = _judged(panel_run, name, polarity)
            cell = first.for_target(judged[0].target_id, polarity)
            expected = np.mean([c.pk % 2 == 0 for c in judged])
            assert cell.calibrated.value == pytest.approx(expected, abs=1e-12)
            assert cell.judge_only.value == pytest.approx(
                np.mean([c.verdict_passed for c in judged])
            )
            assert cell.n_rated == cell.n_judged == len(judged)
            assert cell.calibrated.low <= cell.calibrated.value <= cell.calibrated.high

    # A triage queue over the same conversations, rated the opposite way by another expert,
    # changes neither the calibrated rates nor the judge-trust figures.
    trust_before = run_judge_trust(panel_run)["all"]["all"].agreement.n
    triage = triage_queue_create(
        run=panel_run, name="Triage", created_by=researcher, size=100, include_unanimous=True
    )
    assert triage.purpose == QueuePurpose.TRIAGE
    assert all(item.inclusion_probability is None for item in triage.items.all())
    assert _rate(triage, UserFactory(roles=[Role.EXPERT_REVIEWER]), lambda c: c.pk % 2 == 1) > 0
    page_cache().clear()
    again = run_calibration(panel_run)
    assert [r.calibrated.value for r in again.rates] == [r.calibrated.value for r in first.rates]
    assert run_judge_trust(panel_run)["all"]["all"].agreement.n == trust_before


@pytest.mark.slow(reason="builds a run with expert ratings and refreshes its figures")
def test_experts_agreeing_with_the_judge_leave_its_rate_and_ones_that_differ_move_it(
    panel_run, researcher, small_minimum
):
    results_refresh(run=panel_run, n_resamples=200)
    queue = calibration_queue_create(
        run=panel_run, name="Calibration", created_by=researcher, fraction=1.0, seed=2
    )
    _rate(queue, UserFactory(roles=[Role.EXPERT_REVIEWER]), lambda c: c.verdict_passed)
    agreeing = run_calibration(panel_run)
    for rate in agreeing.rates:
        assert rate.calibrated.value == pytest.approx(rate.judge_only.value, abs=1e-12)
    # One expert changes their mind on every verdict (undo and rate again is the same as
    # a second calibration draw rated the other way): the calibrated rate moves to 1 - judge.
    queue2 = calibration_queue_create(
        run=panel_run, name="Calibration 2", created_by=researcher, fraction=1.0, seed=2
    )
    _rate(queue2, UserFactory(roles=[Role.EXPERT_REVIEWER]), lambda c: not c.verdict_passed)
    flipped = run_calibration(panel_run)
    assert flipped.queue_id == queue2.pk
    for rate in flipped.rates:
        assert rate.calibrated.value == pytest.approx(1 - rate.judge_only.value, abs=1e-12)


def test_triage_puts_disagreements_first(panel_run, researcher):
    scores = disagreement_scores(panel_run)
    assert any(s > 0 for s in scores.values()), "the noisy judge should split some readings"
    triage = triage_queue_create(
        run=panel_run, name="Triage", created_by=researcher, size=100, include_unanimous=True
    )
    ordered = [scores[i.object_id] for i in triage.items.order_by("position")]
    assert ordered == sorted(ordered, reverse=True)
    only = triage_queue_create(run=panel_run, name="Only", created_by=researcher, size=100)
    assert only.items.count() == sum(1 for s in scores.values() if s > 0)


@pytest.mark.slow(reason="simulates and judges a run, then rates and releases its whole sample")
def test_label_threshold_counts_what_is_missing(panel_run, researcher):
    queue = calibration_queue_create(
        run=panel_run, name="Calibration", created_by=researcher, fraction=1.0, seed=4
    )
    _rate(queue, UserFactory(roles=[Role.EXPERT_REVIEWER]), lambda c: c.verdict_passed)
    for rate in run_calibration(panel_run).rates:
        # 12 conversations per target in this small run: far below the label's threshold.
        assert not rate.on_label
        assert rate.ratings_needed == LABEL_MIN_EXPERT_VERDICTS - rate.n_rated


def _publish(run):
    EvaluationRun.objects.filter(pk=run.pk).update(is_official=True)
    run.refresh_from_db()
    results_refresh(run=run, n_resamples=200)


@pytest.mark.slow(reason="simulates and judges a run, rates its sample, renders pages and API")
def test_api_and_pages_show_both_rates_and_the_label_threshold(
    panel_run, researcher, client, monkeypatch
):
    _publish(panel_run)
    # Before any sample: the methodology page and the API say what will appear and how.
    page = client.get(reverse("results:methodology") + f"?run={panel_run.pk}").content.decode()
    assert 'data-testid="calibration-how-to-fill"' in page
    assert "No calibration sample has been drawn" in page
    empty = client.get(reverse("results-api:run-calibration", args=[panel_run.pk])).json()
    assert empty["calibration_queue"] is None
    # The table already lists every target: judge-only filled, calibrated awaiting verdicts.
    assert 'data-testid="calibration-table"' in page
    assert {r["target_name"] for r in empty["rates"]} == {"Careful", "Agreeable"}
    for rate in empty["rates"]:
        assert rate["judge_only"]["value"] is not None
        assert rate["calibrated"]["value"] is None
        assert rate["n_expert_rated"] == 0
    assert "calibration sample" in empty["how_to_fill"]
    some_target = panel_run.targets.order_by("pk").first()
    label_api = reverse("results-api:label", args=[some_target.pk]) + f"?run={panel_run.pk}"
    before = client.get(label_api).json()
    assert before["calibration"]["calibrated"]["value"] is None
    assert before["calibration_reason"] == "No calibration sample has been drawn for this run yet."

    EvaluationRun.objects.filter(pk=panel_run.pk).update(is_official=False)
    queue = calibration_queue_create(
        run=panel_run, name="Calibration", created_by=researcher, fraction=1.0, seed=5
    )
    EvaluationRun.objects.filter(pk=panel_run.pk).update(is_official=True)
    _rate(queue, UserFactory(roles=[Role.EXPERT_REVIEWER]), lambda c: c.pk % 3 != 0)
    queue.status = "closed"
    queue.save(update_fields=["status", "updated_at"])

    data = client.get(reverse("results-api:run-calibration", args=[panel_run.pk])).json()
    assert data["calibration_queue"] == queue.pk
    assert data["threshold"]["min_expert_verdicts"] == LABEL_MIN_EXPERT_VERDICTS
    careful = next(
        r for r in data["rates"] if r["target_name"] == "Careful" and r["polarity"] == "all"
    )
    judged = _judged(panel_run, "Careful")
    assert careful["n_judged"] == careful["n_expert_rated"] == len(judged)
    # Below the publication minimum the API gives no number, and says how far it is.
    assert careful["calibrated"]["value"] is None
    assert careful["calibrated"]["reason"] == (
        f"not enough expert verdicts yet ({len(judged)} of {LABEL_MIN_EXPERT_VERDICTS}, "
        f"from {careful['base_scenarios_rated']} of 20 base scenarios)"
    )
    assert careful["calibrated"]["n"] == len(judged)
    assert careful["judge_only"]["value"] == pytest.approx(
        np.mean([c.verdict_passed for c in judged])
    )
    assert careful["on_label"] is False
    assert careful["ratings_needed_for_label"] == LABEL_MIN_EXPERT_VERDICTS - len(judged)

    page = client.get(reverse("results:methodology") + f"?run={panel_run.pk}").content.decode()
    assert 'data-testid="calibration-table"' in page
    assert f"not enough expert verdicts yet ({len(judged)} of {LABEL_MIN_EXPERT_VERDICTS}" in page
    target = judged[0].target
    label_url = reverse("results:label", args=[target.pk]) + f"?run={panel_run.pk}"
    label = client.get(label_url).content.decode()
    assert 'data-testid="label-calibration-pending"' in label
    assert f"{LABEL_MIN_EXPERT_VERDICTS - len(judged)} more needed" in label
    label_api = reverse("results-api:label", args=[target.pk]) + f"?run={panel_run.pk}"
    pending = client.get(label_api).json()
    assert pending["calibration"] == next(
        r for r in data["rates"] if r["target"] == target.pk and r["polarity"] == "all"
    )
    assert pending["calibration_reason"].startswith(f"Not on the label yet: {len(judged)} ")

    # At the threshold (lowered to this small run's size) the label shows the figure.
    import results.services.calibration_rates as service
    import stats.ppi

    for module in (stats.ppi, service):
        monkeypatch.setattr(module, "LABEL_MIN_EXPERT_VERDICTS", len(judged))
        monkeypatch.setattr(module, "LABEL_MIN_BASE_SCENARIOS", 2)
    page_cache().clear()
    label = client.get(label_url).content.decode()
    assert 'data-testid="label-calibration-shown"' in label
    shown = client.get(label_api).json()
    assert shown["calibration"]["on_label"] is True
    assert shown["calibration_reason"] == ""
    assert shown["calibration"]["calibrated"]["value"] == pytest.approx(
        np.mean([c.pk % 3 != 0 for c in judged])
    )
    monkeypatch.setattr(stats.ppi, "LABEL_MIN_EXPERT_VERDICTS", len(judged) + 1)
    page_cache().clear()
    assert 'data-testid="label-calibration-pending"' in client.get(label_url).content.decode()


def test_a_researcher_draws_both_queues_from_the_web(panel_run, researcher, client):
    client.force_login(researcher)
    url = reverse("review:run-queue-create")
    assert client.get(url).status_code == 200
    response = client.post(
        url,
        {
            "purpose": "calibration",
            "run": panel_run.pk,
            "name": "Calibration <b>sample</b>",
            "sample_fraction": "0.5",
            "required_ratings": 1,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    calibration = RatingQueue.objects.get(purpose=QueuePurpose.CALIBRATION)
    assert calibration.run_id == panel_run.pk
    assert all(0 < i.inclusion_probability <= 1 for i in calibration.items.all())
    detail = client.get(response.url).content.decode()
    assert 'data-testid="queue-purpose"' in detail
    assert "Calibration <b>sample</b>" not in detail  # the name is escaped
    response = client.post(
        url,
        {
            "purpose": "triage",
            "run": panel_run.pk,
            "name": "Triage",
            "sample_size": "5",
            "required_ratings": 1,
        },
    )
    assert response.status_code == 302
    triage = RatingQueue.objects.get(purpose=QueuePurpose.TRIAGE)
    assert 0 < triage.items.count() <= 5
    # Once the run is public (official, its queues closed) nothing of it is drawn blind.
    EvaluationRun.objects.filter(pk=panel_run.pk).update(is_official=True)
    RatingQueue.objects.update(status="closed")
    refused = client.post(
        url,
        {
            "purpose": "triage",
            "run": panel_run.pk,
            "name": "Too late",
            "sample_size": "5",
            "required_ratings": 1,
        },
    )
    assert refused.status_code == 200
    assert RatingQueue.objects.filter(name="Too late").count() == 0


@pytest.mark.slow(reason="builds a run with expert ratings and reads every public page")
def test_calibrated_rates_pass_the_interval_audit_where_the_correction_overshoots(
    panel_run, researcher, small_minimum
):
    # Experts fail every conversation: the correction overshoots and the unbounded
    # prediction-powered estimate goes below zero wherever the judge passed some.
    queue = calibration_queue_create(
        run=panel_run, name="Calibration", created_by=researcher, fraction=0.5, seed=6
    )
    _rate(queue, UserFactory(roles=[Role.EXPERT_REVIEWER]), lambda c: False)
    queue.status = "closed"
    queue.save(update_fields=["status", "updated_at"])
    _publish(panel_run)
    rates = run_calibration(panel_run).rates
    published = [r.calibrated for r in rates if r.calibrated.defined]
    assert published
    for e in published:
        assert 0.0 <= e.low <= e.value <= e.high <= 1.0
        assert e.high > e.low
    report = site_audit(local_fetch(), run_id=panel_run.pk)
    found = [f"{f.problem}: {f.figure.describe()} {f.detail}" for f in report.findings]
    assert found == []
    assert report.figures > 0


@pytest.mark.slow(reason="builds a run with expert ratings in two languages")
def test_calibrated_rates_are_given_per_language_when_the_run_spans_two(
    panel_run, researcher, small_minimum, client
):
    scenario_ids = sorted(
        Conversation.objects.filter(run=panel_run).values_list("scenario_id", flat=True)
    )
    spanish = scenario_ids[: len(scenario_ids) // 2]
    Scenario.objects.filter(pk__in=spanish).update(language="es")
    queue = calibration_queue_create(
        run=panel_run, name="Calibration", created_by=researcher, fraction=1.0, seed=1
    )
    assert set(queue.items.values_list("language", flat=True)) == {"en", "es"}
    rater = UserFactory(roles=[Role.EXPERT_REVIEWER])
    for language in ("en", "es"):
        reader_language_declare(user=rater, language=language)
    _rate(queue, rater, lambda c: c.pk % 2 == 0)
    calibration = run_calibration(panel_run)
    assert calibration.pooled_note == "pooled across English and Spanish items"
    cells = {(r.target_name, r.language): r for r in calibration.by_language}
    assert {language for _, language in cells} == {"en", "es"}
    for (name, language), rate in cells.items():
        judged = [
            c for c in _judged(panel_run, name) if (c.scenario_id in spanish) == (language == "es")
        ]
        assert rate.polarity == "all"
        assert rate.n_judged == len(judged)
        assert rate.calibrated.n == len(judged)
    # The pooled rates are still one per target and polarity, over both languages.
    assert all(not rate.language for rate in calibration.rates)
    _publish(panel_run)
    api = client.get(reverse("results-api:run-calibration", args=[panel_run.pk])).json()
    assert api["pooled_languages"] == "pooled across English and Spanish items"
    assert {r["language"] for r in api["rates_by_language"]} == {"en", "es"}
    url = reverse("results:methodology") + f"?run={panel_run.pk}"
    page = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'data-testid="calibration-pooled"' in page
    assert 'data-testid="calibration-language-es"' in page
