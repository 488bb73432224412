"""A panel of judges: several judge configurations read each conversation; the verdict is the
majority of the judges' own majorities, an even split reported as a tie."""

import io

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command

from evaluations.models import Conversation, EvaluationRun, Judgment, RunJudge
from evaluations.services.panel import Seat, panel_verdict
from evaluations.services.runs import run_plan
from results.services.panel import panel_readings
from results.services.refresh import results_refresh
from tests.evaluations.test_runs import offline_release  # noqa: F401 - fixture
from tests.llm.factories import OfflineConfigurationFactory

pytestmark = pytest.mark.django_db

PROFILES = ("lenient", "strict", "noisy")


@pytest.fixture
def offline_panel():
    OfflineConfigurationFactory(name="Sim")
    OfflineConfigurationFactory(name="Careful", extra_params={"offline_profile": "careful"})
    OfflineConfigurationFactory(name="Agreeable", extra_params={"offline_profile": "agreeable"})
    return [
        OfflineConfigurationFactory(name=f"Offline judge: {p}", extra_params={"offline_profile": p})
        for p in PROFILES
    ]


def _panel_run(judges: str, judgments: int = 3) -> EvaluationRun:
    call_command(
        "run_evaluation",
        "--release=1.0.0",
        "--targets=Careful,Agreeable",
        "--simulator=Sim",
        f"--judges={judges}",
        "--turns=2",
        f"--judgments={judgments}",
        "--seed=7",
        "--yes",
        "--inline",
        stdout=io.StringIO(),
    )
    return EvaluationRun.objects.get()


def test_a_three_judge_offline_run_completes_with_each_judge_s_readings(
    offline_release,  # noqa: F811
    offline_panel,
):
    names = ",".join(j.name for j in offline_panel)
    run = _panel_run(names)
    assert run.status == "completed"
    assert run.judge == offline_panel[0]
    assert list(RunJudge.objects.filter(run=run).values_list("judge__name", "repetitions")) == [
        ("Offline judge: strict", 3),
        ("Offline judge: noisy", 3),
    ]
    assert run.conversations_completed == 24
    plan = run_plan(run)
    assert plan.judge_calls == 24 * (9 + 1)
    for conversation in Conversation.objects.filter(run=run):
        readings = list(conversation.judgments.order_by("repetition"))
        assert [j.judge.name for j in readings] == [n for n in names.split(",") for _ in range(3)]
        assert all(j.is_offline for j in readings)
        # Three judges never tie; the verdict is the majority of the judges' majorities.
        own = [sum(j.present for j in readings[i : i + 3]) >= 2 for i in (0, 3, 6)]
        assert conversation.panel_tie is False
        assert conversation.verdict_present == (sum(own) >= 2)
    # The profiles differ: the lenient judge passes more than the strict one.
    passes = {}
    for judge in offline_panel:
        rows = Judgment.objects.filter(conversation__run=run, judge=judge)
        polarity_pass = sum(
            (
                j.present
                if j.conversation.scenario.metric_version.polarity == "positive"
                else not j.present
            )
            for j in rows.select_related("conversation__scenario__metric_version")
        )
        passes[judge.offline_profile] = polarity_pass / rows.count()
    assert passes["lenient"] > passes["strict"], passes
    _published_figures(run, offline_panel)
    _published_pages(run, offline_panel)


def test_two_judges_that_disagree_leave_a_tie_without_a_verdict():
    seats = [Seat(0, None, 3, 0), Seat(1, None, 1, 3)]
    tied = panel_verdict(seats, {0: True, 1: True, 2: False, 3: False})
    assert (tied.present, tied.tie, tied.judges) == (None, True, [True, False])
    agreed = panel_verdict(seats, {0: True, 1: False, 2: False, 3: False})
    assert (agreed.present, agreed.tie) == (False, False)
    single = panel_verdict(seats[:1], {0: True, 1: False, 2: True})
    assert (single.present, single.tie, single.judges) == (True, False, [True])


def _published_figures(run, offline_panel):
    """The panel's agreement and each judge's rates, as the run analysis publishes them."""
    analysis = results_refresh(run=run, n_resamples=200)
    panel = analysis.reliability["panel"]
    assert panel["available"] is True
    assert [j["name"] for j in panel["judges"]] == [j.name for j in offline_panel]
    assert panel["n_conversations"] == 24
    assert panel["ties"] == 0
    # Alpha over the judges' own verdicts (the majority of each one's readings), as the
    # reference package computes it on the same data.
    readings = panel_readings(run)["readings"]
    verdicts = (np.nansum(readings, axis=2) * 2 > 3).astype(float)
    expected = krippendorff.alpha(reliability_data=verdicts.T, level_of_measurement="nominal")
    for level in ("binary", "ordinal"):
        figure = panel["overall"][level]
        assert figure["value"] == pytest.approx(expected, abs=1e-9)
        assert figure["n"] == 24
        assert figure["n_clusters"] == 6  # 2 metrics × 3 base scenarios
        assert figure["low"] <= figure["value"] <= figure["high"]
    assert [m["n_conversations"] for m in panel["per_metric"]] == [12, 12]
    assert all(m["binary"]["n_clusters"] == 3 for m in panel["per_metric"])
    # Each judge on each target, beside its paired gap to the panel.
    rates = {(r["judge"], r["target_name"]): r for r in panel["judge_rates"]}
    assert len(rates) == 6
    lenient = rates[("Offline judge: lenient", "Careful")]
    strict = rates[("Offline judge: strict", "Careful")]
    assert lenient["pass_rate"]["n"] == 12
    assert lenient["minus_panel"]["value"] >= strict["minus_panel"]["value"]
    assert {r["target_name"] for r in panel["panel_rates"]} == {"Careful", "Agreeable"}
    # Repeatability stays the first judge's repetitions.
    assert analysis.reliability["judge"]["judgments_per_conversation"] == 3
    assert analysis.reliability["judge"]["n_conversations"] == 24


def _published_pages(run, offline_panel):
    """The conversation page, the methodology page and the API show the panel."""
    from django.test import Client
    from django.urls import reverse

    from evaluations.services.official import run_set_official

    run_set_official(run=run, official=True, changed_by=None)
    client = Client()
    conversation = Conversation.objects.filter(run=run).order_by("pk").first()
    page = client.get(reverse("results:conversation", kwargs={"pk": conversation.pk}))
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('data-testid="panel-judge"') == 3
    assert html.count('data-testid="judgment"') == 9
    for judge in offline_panel:
        assert f"Reading 3 by {judge.name}" in html
    assert "offline demo model" in html
    assert "majority of 3 judges" in html

    methodology = client.get(reverse("results:methodology") + f"?run={run.pk}").content.decode()
    assert 'data-testid="judge-panel"' in methodology
    assert 'data-testid="panel-alpha-binary"' in methodology
    assert "Offline judge: strict" in methodology

    api = client.get(reverse("results-api:run-judges", kwargs={"pk": run.pk})).json()
    assert api["available"] is True
    assert [j["name"] for j in api["judges"]] == [j.name for j in offline_panel]
    assert api["overall"]["binary"]["n"] == 24
    assert len(api["judge_rates"]) == 6
    detail = client.get(reverse("results-api:conversation", kwargs={"pk": conversation.pk}))
    names = [j["judge"] for j in detail.json()["judgments"]]
    assert names == [j.name for j in offline_panel for _ in range(3)]
